package sessions

import (
	"testing"
	"time"
)

func TestDecideCreate(t *testing.T) {
	now := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	at := func(d time.Duration, b byte) Session { return Session{Digest: Digest{b}, ExpiresAt: now.Add(d)} }
	s := Session{Digest: Digest{9}, CreatedAt: now, ExpiresAt: now.Add(DefaultTTL)}
	out := DecideCreate([]Session{at(-time.Hour, 1), at(0, 2), at(time.Millisecond, 3), at(time.Hour, 4)}, s)
	if out.Session != s || len(out.Purge) != 2 || out.Purge[0].Digest != (Digest{1}) || out.Purge[1].Digest != (Digest{2}) {
		t.Fatalf("purge %+v", out.Purge)
	}
	var many []Session
	for i := range PurgeBatch + 5 {
		many = append(many, at(-time.Duration(PurgeBatch+5-i)*time.Second, byte(i)))
	}
	if got := DecideCreate(many, s); len(got.Purge) != PurgeBatch {
		t.Fatalf("purged %d, at most %d", len(got.Purge), PurgeBatch)
	}
	if DecideEnd(nil) || !DecideEnd(&s) {
		t.Fatal("DecideEnd")
	}
}
