package sessions

import (
	"errors"
	"testing"
	"time"

	"github.com/kfa-project/kfa/agents"
)

func TestDecideCreate(t *testing.T) {
	now := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	at := func(d time.Duration, b byte) Session { return Session{Digest: Digest{b}, ExpiresAt: now.Add(d)} }
	s := Session{Digest: Digest{9}, CreatedAt: now, ExpiresAt: now.Add(DefaultTTL)}
	alice := &agents.Agent{ID: "alice"}
	out, err := DecideCreate(alice, []Session{at(-time.Hour, 1), at(0, 2), at(time.Millisecond, 3), at(time.Hour, 4)}, s)
	if err != nil || out.Session != s || len(out.Purge) != 2 || out.Purge[0].Digest != (Digest{1}) || out.Purge[1].Digest != (Digest{2}) {
		t.Fatalf("purge %+v", out.Purge)
	}
	var many []Session
	for i := range PurgeBatch + 5 {
		many = append(many, at(-time.Duration(PurgeBatch+5-i)*time.Second, byte(i)))
	}
	if got, err := DecideCreate(alice, many, s); err != nil || len(got.Purge) != PurgeBatch {
		t.Fatalf("purged %d, at most %d", len(got.Purge), PurgeBatch)
	}
	for _, a := range []*agents.Agent{{ID: "alice", DisabledAt: now}, nil} {
		if out, err := DecideCreate(a, nil, s); !errors.Is(err, agents.ErrRevoked) || out.Session != (Session{}) {
			t.Fatalf("a revoked agent's session: %+v %v", out, err)
		}
	}
	if DecideEnd(nil) || !DecideEnd(&s) {
		t.Fatal("DecideEnd")
	}
}
