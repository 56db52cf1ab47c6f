package store

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/sessions"
)

// The web sign-in sessions. A session is keyed by the SHA-256 of its id
// (the browser holds the id, the file only its digest); the expiry index
// lets a sign-in purge expired sessions with one cursor seek.
var (
	bucketSessions   = []byte("web_sessions")    // sha256(session id) (32) -> sessionRecord
	bucketSessionExp = []byte("idx_session_exp") // expiresAt ms (8) | sha256(session id) (32)
)

// sessionRecord is a session as stored.
type sessionRecord struct {
	AgentID    string    `json:"agentId"`
	Credential string    `json:"credential"` // hex SHA-256 of the token signed in with
	CreatedAt  time.Time `json:"createdAt"`
	ExpiresAt  time.Time `json:"expiresAt"`
}

func sessionExpKey(expires time.Time, d sessions.Digest) []byte {
	return cat(u64(ms(expires)), d[:])
}

// CreateSession implements sessions.Store.
func (s *DB) CreateSession(_ context.Context, sess sessions.Session) error {
	v, err := json.Marshal(sessionRecord{
		AgentID: sess.AgentID, Credential: hex.EncodeToString(sess.Credential[:]),
		CreatedAt: sess.CreatedAt, ExpiresAt: sess.ExpiresAt,
	})
	if err != nil {
		return err
	}
	return s.update(func(tx *bolt.Tx) error {
		if err := purgeSessions(tx, sess.CreatedAt, sessions.PurgeBatch); err != nil {
			return err
		}
		if err := tx.Bucket(bucketSessions).Put(sess.Digest[:], v); err != nil {
			return err
		}
		return tx.Bucket(bucketSessionExp).Put(sessionExpKey(sess.ExpiresAt, sess.Digest), nil)
	})
}

// purgeSessions deletes up to max sessions that expired at or before now,
// oldest expiry first.
func purgeSessions(tx *bolt.Tx, now time.Time, max int) error {
	byExp, all := tx.Bucket(bucketSessionExp), tx.Bucket(bucketSessions)
	limit := u64(ms(now))
	var doomed [][]byte
	c := byExp.Cursor()
	for k, _ := c.First(); k != nil && len(doomed) < max; k, _ = c.Next() {
		if len(k) != 8+len(sessions.Digest{}) {
			continue
		}
		if bytes.Compare(k[:8], limit) > 0 {
			break
		}
		doomed = append(doomed, bytes.Clone(k))
	}
	for _, k := range doomed {
		if err := byExp.Delete(k); err != nil {
			return err
		}
		if err := all.Delete(k[8:]); err != nil {
			return err
		}
	}
	return nil
}

// GetSession implements sessions.Store.
func (s *DB) GetSession(_ context.Context, d sessions.Digest) (sessions.Session, error) {
	var out sessions.Session
	err := s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketSessions).Get(d[:])
		if v == nil {
			return sessions.ErrNotFound
		}
		var err error
		out, err = decodeSession(d, v)
		return err
	})
	return out, err
}

func decodeSession(d sessions.Digest, v []byte) (sessions.Session, error) {
	var r sessionRecord
	if err := json.Unmarshal(v, &r); err != nil {
		return sessions.Session{}, fmt.Errorf("store: decode session: %w", err)
	}
	cred, err := hex.DecodeString(r.Credential)
	if err != nil || len(cred) != len(agents.Digest{}) {
		return sessions.Session{}, fmt.Errorf("store: session has a bad credential digest %q", r.Credential)
	}
	out := sessions.Session{Digest: d, AgentID: r.AgentID, CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt}
	copy(out.Credential[:], cred)
	return out, nil
}

// DeleteSession implements sessions.Store.
func (s *DB) DeleteSession(_ context.Context, d sessions.Digest) error {
	return s.update(func(tx *bolt.Tx) error {
		all := tx.Bucket(bucketSessions)
		v := all.Get(d[:])
		if v == nil {
			return nil
		}
		sess, err := decodeSession(d, v)
		if err != nil {
			return err
		}
		if err := tx.Bucket(bucketSessionExp).Delete(sessionExpKey(sess.ExpiresAt, d)); err != nil {
			return err
		}
		return all.Delete(d[:])
	})
}

var _ sessions.Store = (*DB)(nil)
