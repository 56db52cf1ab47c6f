package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/commands"
	"github.com/kfa-project/kfa/sessions"
	"github.com/kfa-project/kfa/storage"
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

var _ sessions.Store = (*DB)(nil)

// The schema's Sessions, in web_sessions.
func init() {
	mapped[commands.Sessions] = &table[sessions.Session]{
		kind: commands.Sessions, name: "web_sessions", key: []column{{"t.digest", convBytes}},
		cols: "t.digest, t.doc",
		read: func(row pgx.Row, _ bool) (sessions.Session, error) {
			var dv, v []byte
			if err := row.Scan(&dv, &v); err != nil {
				return sessions.Session{}, err
			}
			var d sessions.Digest
			copy(d[:], dv)
			return decodeSession(d, v)
		},
		indexes: map[storage.Ix]tindex{commands.SessionsByExpiry: {cols: []column{{"t.expires_ms", convMillis}}}},
		write: func(w *pgWrites, _, sess *sessions.Session) error {
			v, err := encodeSession(*sess)
			if err != nil {
				return err
			}
			return w.exec(`INSERT INTO web_sessions (digest, expires_ms, doc) VALUES ($1, $2, $3)
				ON CONFLICT (digest) DO UPDATE SET expires_ms = excluded.expires_ms, doc = excluded.doc`,
				sess.Digest[:], sess.ExpiresAt.UnixMilli(), v)
		},
		remove: func(w *pgWrites, old *sessions.Session) error {
			return w.exec("DELETE FROM web_sessions WHERE digest = $1", old.Digest[:])
		},
	}
}
