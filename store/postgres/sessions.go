package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/sessions"
)

// sessionRecord is a session's document (its digest is the key).
type sessionRecord struct {
	AgentID    string         `json:"agentId"`
	Credential []byte         `json:"credential"`
	CreatedAt  time.Time      `json:"createdAt"`
	ExpiresAt  time.Time      `json:"expiresAt"`
	Scopes     []agents.Scope `json:"scopes,omitempty"`
}

// encodeSession is a session's document.
func encodeSession(x sessions.Session) ([]byte, error) {
	return json.Marshal(sessionRecord{AgentID: x.AgentID, Credential: x.Credential[:], CreatedAt: x.CreatedAt,
		ExpiresAt: x.ExpiresAt, Scopes: x.Scopes})
}

// decodeSession is the session of digest d and document v.
func decodeSession(d sessions.Digest, v []byte) (sessions.Session, error) {
	var r sessionRecord
	if err := json.Unmarshal(v, &r); err != nil {
		return sessions.Session{}, fmt.Errorf("postgres: decode session: %w", err)
	}
	out := sessions.Session{Digest: d, AgentID: r.AgentID, CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt, Scopes: r.Scopes}
	if len(r.Credential) != len(out.Credential) {
		return sessions.Session{}, errors.New("postgres: session has a bad credential digest")
	}
	copy(out.Credential[:], r.Credential)
	return out, nil
}

// CreateSession implements sessions.Store, in two round trips: BEGIN and
// the sessions that expire first, then sessions.DecideCreate, then the
// writes and COMMIT.
func (s *DB) CreateSession(ctx context.Context, sess sessions.Session) error {
	v, err := encodeSession(sess)
	if err != nil {
		return err
	}
	var oldest []sessions.Session
	return s.command(ctx, CmdCreateSession, func(b *pgx.Batch) {
		oldest = nil
		b.Queue("SELECT digest, expires_ms FROM web_sessions ORDER BY expires_ms, digest LIMIT $1", sessions.PurgeBatch).
			Query(func(rows pgx.Rows) error {
				for rows.Next() {
					var (
						d  []byte
						ms int64
					)
					if err := rows.Scan(&d, &ms); err != nil {
						return err
					}
					o := sessions.Session{ExpiresAt: fromMS(ms)}
					copy(o.Digest[:], d)
					oldest = append(oldest, o)
				}
				return rows.Err()
			})
	}, func() (func(execer) error, error) {
		out := sessions.DecideCreate(oldest, sess)
		return func(w execer) error {
			if len(out.Purge) > 0 {
				ds := make([][]byte, len(out.Purge))
				for i := range out.Purge {
					ds[i] = out.Purge[i].Digest[:]
				}
				if _, err := w.Exec(ctx, "DELETE FROM web_sessions WHERE digest = ANY($1)", ds); err != nil {
					return err
				}
			}
			_, err := w.Exec(ctx, `INSERT INTO web_sessions (digest, expires_ms, doc) VALUES ($1, $2, $3)
				ON CONFLICT (digest) DO UPDATE SET expires_ms = excluded.expires_ms, doc = excluded.doc`,
				out.Session.Digest[:], out.Session.ExpiresAt.UnixMilli(), v)
			return err
		}, nil
	})
}

// GetSession implements sessions.Store.
func (s *DB) GetSession(ctx context.Context, d sessions.Digest) (sessions.Session, error) {
	var v []byte
	err := s.readRow(ctx, "SELECT doc FROM web_sessions WHERE digest = $1", []any{d[:]}, &v)
	if errors.Is(err, pgx.ErrNoRows) {
		return sessions.Session{}, sessions.ErrNotFound
	}
	if err != nil {
		return sessions.Session{}, err
	}
	return decodeSession(d, v)
}

// DeleteSession implements sessions.Store, in two round trips: BEGIN and
// the session, then sessions.DecideEnd, then the delete and COMMIT.
func (s *DB) DeleteSession(ctx context.Context, d sessions.Digest) error {
	var found *sessions.Session
	return s.command(ctx, CmdEndSession, func(b *pgx.Batch) {
		found = nil
		b.Queue("SELECT expires_ms FROM web_sessions WHERE digest = $1", d[:]).QueryRow(func(row pgx.Row) error {
			var ms int64
			err := row.Scan(&ms)
			if errors.Is(err, pgx.ErrNoRows) {
				return nil
			}
			found = &sessions.Session{Digest: d, ExpiresAt: fromMS(ms)}
			return err
		})
	}, func() (func(execer) error, error) {
		if !sessions.DecideEnd(found) {
			return nil, nil
		}
		return func(w execer) error {
			_, err := w.Exec(ctx, "DELETE FROM web_sessions WHERE digest = $1", d[:])
			return err
		}, nil
	})
}

var _ sessions.Store = (*DB)(nil)
