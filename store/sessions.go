package store

import (
	"context"
	"encoding/binary"
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
	AgentID    string         `json:"agentId"`
	Credential string         `json:"credential"` // hex SHA-256 of the token signed in with
	CreatedAt  time.Time      `json:"createdAt"`
	ExpiresAt  time.Time      `json:"expiresAt"`
	Scopes     []agents.Scope `json:"scopes,omitempty"` // a provider's sign-in's
}

// encodeSession is a session's record.
func encodeSession(x sessions.Session) ([]byte, error) {
	return json.Marshal(sessionRecord{AgentID: x.AgentID, Credential: hex.EncodeToString(x.Credential[:]),
		CreatedAt: x.CreatedAt, ExpiresAt: x.ExpiresAt, Scopes: x.Scopes})
}

func sessionExpKey(expires time.Time, d sessions.Digest) []byte {
	return cat(u64(ms(expires)), d[:])
}

// CreateSession implements sessions.Store: load the agent and the
// sessions that expire first, sessions.DecideCreate, persist.
func (s *DB) CreateSession(_ context.Context, sess sessions.Session) error {
	v, err := encodeSession(sess)
	if err != nil {
		return err
	}
	return s.exec(func(tx *bolt.Tx) (func(*bolt.Tx) error, error) {
		agent, err := loadAgent(tx, sess.AgentID)
		if err != nil {
			return nil, err
		}
		oldest, err := oldestSessions(tx, sessions.PurgeBatch)
		if err != nil {
			return nil, err
		}
		out, err := sessions.DecideCreate(agent, oldest, sess)
		if err != nil {
			return nil, err
		}
		return func(tx *bolt.Tx) error {
			for _, o := range out.Purge {
				if err := deleteSession(tx, o); err != nil {
					return err
				}
			}
			if err := tx.Bucket(bucketSessions).Put(out.Session.Digest[:], v); err != nil {
				return err
			}
			return tx.Bucket(bucketSessionExp).Put(sessionExpKey(out.Session.ExpiresAt, out.Session.Digest), nil)
		}, nil
	})
}

// oldestSessions returns at most max sessions in expiry order.
func oldestSessions(tx *bolt.Tx, max int) ([]sessions.Session, error) {
	var out []sessions.Session
	all := tx.Bucket(bucketSessions)
	c := tx.Bucket(bucketSessionExp).Cursor()
	for k, _ := c.First(); k != nil && len(out) < max; k, _ = c.Next() {
		if len(k) != 8+len(sessions.Digest{}) {
			continue
		}
		var d sessions.Digest
		copy(d[:], k[8:])
		v := all.Get(d[:])
		if v == nil {
			// An expiry entry without its session: gone already. Purge it
			// with the others, by its own key.
			out = append(out, sessions.Session{Digest: d, ExpiresAt: time.UnixMilli(int64(binary.BigEndian.Uint64(k[:8]))).UTC()})
			continue
		}
		sess, err := decodeSession(d, v)
		if err != nil {
			return nil, err
		}
		out = append(out, sess)
	}
	return out, nil
}

// deleteSession deletes a session and its expiry entry.
func deleteSession(tx *bolt.Tx, sess sessions.Session) error {
	if err := tx.Bucket(bucketSessionExp).Delete(sessionExpKey(sess.ExpiresAt, sess.Digest)); err != nil {
		return err
	}
	return tx.Bucket(bucketSessions).Delete(sess.Digest[:])
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
	out := sessions.Session{Digest: d, AgentID: r.AgentID, CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt, Scopes: r.Scopes}
	copy(out.Credential[:], cred)
	return out, nil
}

// DeleteSession implements sessions.Store: load the session,
// sessions.DecideEnd, persist.
func (s *DB) DeleteSession(_ context.Context, d sessions.Digest) error {
	return s.exec(func(tx *bolt.Tx) (func(*bolt.Tx) error, error) {
		var found *sessions.Session
		if v := tx.Bucket(bucketSessions).Get(d[:]); v != nil {
			sess, err := decodeSession(d, v)
			if err != nil {
				return nil, err
			}
			found = &sess
		}
		if !sessions.DecideEnd(found) {
			return nil, nil
		}
		return func(tx *bolt.Tx) error { return deleteSession(tx, *found) }, nil
	})
}

var _ sessions.Store = (*DB)(nil)
