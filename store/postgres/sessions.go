package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/sessions"
)

// sessionRecord is a session's document (its digest is the key).
type sessionRecord struct {
	AgentID    string    `json:"agentId"`
	Credential []byte    `json:"credential"`
	CreatedAt  time.Time `json:"createdAt"`
	ExpiresAt  time.Time `json:"expiresAt"`
}

// CreateSession implements sessions.Store.
func (s *DB) CreateSession(ctx context.Context, sess sessions.Session) error {
	v, err := json.Marshal(sessionRecord{AgentID: sess.AgentID, Credential: sess.Credential[:],
		CreatedAt: sess.CreatedAt, ExpiresAt: sess.ExpiresAt})
	if err != nil {
		return err
	}
	return s.write(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM web_sessions WHERE digest IN (
			SELECT digest FROM web_sessions WHERE expires_ms <= $1 ORDER BY expires_ms, digest LIMIT $2)`,
			sess.CreatedAt.UnixMilli(), sessions.PurgeBatch); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO web_sessions (digest, expires_ms, doc) VALUES ($1, $2, $3)
			ON CONFLICT (digest) DO UPDATE SET expires_ms = excluded.expires_ms, doc = excluded.doc`,
			sess.Digest[:], sess.ExpiresAt.UnixMilli(), v)
		return err
	})
}

// GetSession implements sessions.Store.
func (s *DB) GetSession(ctx context.Context, d sessions.Digest) (sessions.Session, error) {
	var v []byte
	err := s.pool.QueryRow(ctx, "SELECT doc FROM web_sessions WHERE digest = $1", d[:]).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return sessions.Session{}, sessions.ErrNotFound
	}
	if err != nil {
		return sessions.Session{}, unavailable(err)
	}
	var r sessionRecord
	if err := json.Unmarshal(v, &r); err != nil {
		return sessions.Session{}, fmt.Errorf("postgres: decode session: %w", err)
	}
	out := sessions.Session{Digest: d, AgentID: r.AgentID, CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt}
	if len(r.Credential) != len(out.Credential) {
		return sessions.Session{}, errors.New("postgres: session has a bad credential digest")
	}
	copy(out.Credential[:], r.Credential)
	return out, nil
}

// DeleteSession implements sessions.Store.
func (s *DB) DeleteSession(ctx context.Context, d sessions.Digest) error {
	return s.write(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "DELETE FROM web_sessions WHERE digest = $1", d[:])
		return err
	})
}

var _ sessions.Store = (*DB)(nil)
