package store

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/commands"
	"github.com/kfa-project/kfa/sessions"
	"github.com/kfa-project/kfa/storage"
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

func sessionExpKey(expires time.Time, d sessions.Digest) []byte {
	return cat(u64(ms(expires)), d[:])
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

var _ sessions.Store = (*DB)(nil)

// encodeSession is a session's record in web_sessions.
func encodeSession(sess *sessions.Session) ([]byte, error) {
	return json.Marshal(sessionRecord{
		AgentID: sess.AgentID, Credential: hex.EncodeToString(sess.Credential[:]),
		CreatedAt: sess.CreatedAt, ExpiresAt: sess.ExpiresAt, Scopes: sess.Scopes,
	})
}

// The schema's Sessions: web_sessions, and idx_session_exp for
// SessionsByExpiry.
func init() {
	ps := []part{{size: len(sessions.Digest{})}}
	k := &docKind[sessions.Session]{
		kind: commands.Sessions, bucket: bucketSessions, parts: ps,
		decode: func(kb, v []byte) (sessions.Session, error) {
			var d sessions.Digest
			copy(d[:], kb)
			return decodeSession(d, v)
		},
		encode: encodeSession,
		onPut: func(r *run, old, sess *sessions.Session) error {
			if old != nil {
				if err := r.tx.Bucket(bucketSessionExp).Delete(sessionExpKey(old.ExpiresAt, old.Digest)); err != nil {
					return err
				}
			}
			return r.tx.Bucket(bucketSessionExp).Put(sessionExpKey(sess.ExpiresAt, sess.Digest), nil)
		},
		remove: func(r *run, old *sessions.Session) error { return deleteSession(r.tx, *old) },
	}
	k.scans = map[storage.Ix]func(*run, *storage.Range, storage.Key, func(storage.Key, any) bool) error{
		commands.SessionsByExpiry: func(r *run, q *storage.Range, prefix storage.Key, fn func(storage.Key, any) bool) error {
			ips := []part{pU64, ps[0]}
			pb, ok := keyBytes(ips, prefix)
			if !ok {
				return nil
			}
			all := r.tx.Bucket(bucketSessions)
			var err error
			walk(r.tx.Bucket(bucketSessionExp), pb, scanEnd(ips, q), q.Reverse, func(ik, _ []byte) bool {
				key, ok := keyOf(ips, ik)
				if !ok {
					return true // kfa check reports it
				}
				if q.Keys != nil {
					return fn(key, nil)
				}
				var d sessions.Digest
				copy(d[:], ik[8:])
				sess := sessions.Session{Digest: d, ExpiresAt: storage.ParseMillis(key[0])}
				// An expiry entry without its session (gone already) is
				// loaded as a session of its digest and expiry alone: a purge
				// deletes it by its own key.
				if v := all.Get(d[:]); v != nil {
					if sess, err = decodeSession(d, v); err != nil {
						return false
					}
				}
				return fn(key, &sess)
			})
			return err
		},
	}
	mapped[commands.Sessions] = k
}
