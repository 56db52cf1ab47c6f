package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrTLSCacheMiss is a key the TLS cache does not hold.
var ErrTLSCacheMiss = errors.New("postgres: not in the TLS cache")

// TLSCache keeps the ACME client's state (certs.Cache: the account key,
// certificates with their private keys, challenge answers) in the
// tls_cache table, so that every process on the database serves the
// certificate one of them obtained. It holds secrets: the database, and
// its backups, hold the TLS private keys.
type TLSCache struct{ db *DB }

// TLSCache is the database's TLS cache.
func (s *DB) TLSCache() TLSCache { return TLSCache{db: s} }

// Get returns the value of key, or ErrTLSCacheMiss.
func (c TLSCache) Get(ctx context.Context, key string) ([]byte, error) {
	var v []byte
	err := c.db.pool.QueryRow(ctx, "SELECT value FROM tls_cache WHERE key = $1 AND value IS NOT NULL", key).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, ErrTLSCacheMiss
	}
	if err != nil {
		return nil, unavailable(fmt.Errorf("postgres: TLS cache get %s: %w", key, err))
	}
	return v, nil
}

// Put stores data under key, ending any claim of it.
func (c TLSCache) Put(ctx context.Context, key string, data []byte) error {
	_, err := c.db.pool.Exec(ctx, `INSERT INTO tls_cache (key, value) VALUES ($1, $2)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value, claimed_until = NULL, updated_at = now()`, key, data)
	if err != nil {
		return unavailable(fmt.Errorf("postgres: TLS cache put %s: %w", key, err))
	}
	return nil
}

// Delete removes key; a missing key is no error.
func (c TLSCache) Delete(ctx context.Context, key string) error {
	if _, err := c.db.pool.Exec(ctx, "DELETE FROM tls_cache WHERE key = $1", key); err != nil {
		return unavailable(fmt.Errorf("postgres: TLS cache delete %s: %w", key, err))
	}
	return nil
}

// Claim marks key as being obtained by the caller for ttl, unless it
// holds a value or a claim that has not run out (the database's clock
// decides, so the processes' clocks need not agree); it reports whether
// the caller holds the claim now. One statement: of callers racing, one
// wins.
func (c TLSCache) Claim(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	var won bool
	err := c.db.pool.QueryRow(ctx, `INSERT INTO tls_cache (key, claimed_until) VALUES ($1, now() + $2 * interval '1 millisecond')
		ON CONFLICT (key) DO UPDATE SET claimed_until = excluded.claimed_until, updated_at = now()
		WHERE tls_cache.value IS NULL AND (tls_cache.claimed_until IS NULL OR tls_cache.claimed_until < now())
		RETURNING true`, key, ttl.Milliseconds()).Scan(&won)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, unavailable(fmt.Errorf("postgres: TLS cache claim %s: %w", key, err))
	}
	return won, nil
}
