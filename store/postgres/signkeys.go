package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/signing"
	"github.com/kfa-project/kfa/store/internal/storedoc"
)

// signingLock serializes the writes of signing keys across processes (two
// processes starting together must not both make a current key).
const signingLock int64 = 0x6b66615f7369676e // "kfa_sign"

func putSignKey(ctx context.Context, tx pgx.Tx, k *signing.KeyRecord) error {
	v, err := storedoc.EncodeSignKey(k)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `INSERT INTO signing_keys (created_ms, id, doc) VALUES ($1, $2, $3)
		ON CONFLICT (created_ms, id) DO UPDATE SET doc = excluded.doc`, k.CreatedAt.UnixMilli(), k.ID, v)
	return err
}

// signKeys reads every key, newest first.
func signKeys(ctx context.Context, tx rowQuerier) ([]signing.KeyRecord, error) {
	rows, err := tx.Query(ctx, "SELECT doc FROM signing_keys ORDER BY created_ms DESC, id DESC")
	if err != nil {
		return nil, err
	}
	docs, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return nil, err
	}
	out := make([]signing.KeyRecord, 0, len(docs))
	for _, v := range docs {
		k, err := storedoc.DecodeSignKey(v)
		if err != nil {
			return nil, fmt.Errorf("postgres: %w", err)
		}
		out = append(out, k)
	}
	return out, nil
}

// SigningKeys implements signing.Store in one statement.
func (s *DB) SigningKeys(ctx context.Context) ([]signing.KeyRecord, error) {
	var out []signing.KeyRecord
	err := s.readStatement(ctx, func(q rowQuerier) error {
		var err error
		out, err = signKeys(ctx, q)
		return err
	})
	return out, err
}

// EnsureSigningKey implements signing.Store.
func (s *DB) EnsureSigningKey(ctx context.Context, k signing.KeyRecord) (bool, error) {
	var created bool
	err := s.write(ctx, func(tx pgx.Tx) error {
		created = false
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", signingLock); err != nil {
			return err
		}
		keys, err := signKeys(ctx, tx)
		if err != nil {
			return err
		}
		for _, old := range keys {
			if old.RetiredAt.IsZero() {
				return nil
			}
		}
		created = true
		return putSignKey(ctx, tx, &k)
	})
	return created, err
}

// RotateSigningKey implements signing.Store.
func (s *DB) RotateSigningKey(ctx context.Context, k signing.KeyRecord, purgeBefore time.Time) error {
	return s.write(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", signingLock); err != nil {
			return err
		}
		keys, err := signKeys(ctx, tx)
		if err != nil {
			return err
		}
		for _, old := range keys {
			switch {
			case old.RetiredAt.IsZero():
				old.RetiredAt = k.CreatedAt
				if err := putSignKey(ctx, tx, &old); err != nil {
					return err
				}
			case old.RetiredAt.Before(purgeBefore):
				if _, err := tx.Exec(ctx, "DELETE FROM signing_keys WHERE created_ms = $1 AND id = $2",
					old.CreatedAt.UnixMilli(), old.ID); err != nil {
					return err
				}
			}
		}
		return putSignKey(ctx, tx, &k)
	})
}

var _ signing.Store = (*DB)(nil)
