package store

import (
	"context"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/sessions"
)

// newSessionWorld is the check world with one web session of alice's.
func newSessionWorld(t *testing.T) (*world, sessions.Session) {
	t.Helper()
	w := newWorld(t)
	now := time.Now()
	s := sessions.Session{Digest: sessions.Digest{1, 2, 3}, AgentID: w.alice.ID, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	if err := w.db.CreateSession(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	return w, s
}

func TestCheckSessions(t *testing.T) {
	w, _ := newSessionWorld(t)
	if rep := w.check(t); !rep.OK() || rep.Examined["web_sessions"] != 1 {
		t.Fatalf("a store with a session written by the store: %+v %v", rep.Violations, rep.Examined)
	}
	for _, tc := range []struct {
		name   string
		break_ func(s sessions.Session) func(tx *bolt.Tx) error
		detail string
	}{
		{"session missing from the expiry index", func(s sessions.Session) func(tx *bolt.Tx) error {
			return func(tx *bolt.Tx) error {
				return tx.Bucket(bucketSessionExp).Delete(sessionExpKey(s.ExpiresAt, s.Digest))
			}
		}, "missing from the expiry index"},
		{"expiry entry of nothing", func(s sessions.Session) func(tx *bolt.Tx) error {
			return func(tx *bolt.Tx) error {
				return tx.Bucket(bucketSessionExp).Put(sessionExpKey(s.ExpiresAt, sessions.Digest{9}), nil)
			}
		}, "points at a session that is missing"},
		{"expiry entry at another time", func(s sessions.Session) func(tx *bolt.Tx) error {
			return func(tx *bolt.Tx) error {
				return tx.Bucket(bucketSessionExp).Put(sessionExpKey(s.ExpiresAt.Add(time.Minute), s.Digest), nil)
			}
		}, "at another time than its session"},
		{"session of an unknown agent", func(s sessions.Session) func(tx *bolt.Tx) error {
			return func(tx *bolt.Tx) error { return tx.Bucket(bucketAgents).Delete([]byte(s.AgentID)) }
		}, "which does not exist"},
		{"session that does not decode", func(s sessions.Session) func(tx *bolt.Tx) error {
			return func(tx *bolt.Tx) error { return tx.Bucket(bucketSessions).Put(s.Digest[:], []byte("{")) }
		}, "decode session"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, s := newSessionWorld(t)
			w.mutate(t, tc.break_(s))
			var all []string
			for _, v := range w.check(t).Violations {
				all = append(all, v.Kind+": "+v.Detail)
			}
			if !strings.Contains(strings.Join(all, "\n"), tc.detail) {
				t.Errorf("no violation says %q: %v", tc.detail, all)
			}
		})
	}
}
