package api

import (
	"testing"
	"time"

	"github.com/kfa-project/kfa/peers"
)

// TestFromPeerFollowedBy: the peer list names the process holding the
// follower lease only while the lease runs, so an operator running two
// processes sees which one follows, and a dead one's lease shows nothing.
func TestFromPeerFollowedBy(t *testing.T) {
	now := time.Date(2026, 12, 7, 19, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name  string
		lease string
		until time.Time
		want  string
	}{
		{"running", "host:42:ab12", now.Add(time.Second), "host:42:ab12"},
		{"expired", "host:42:ab12", now, ""},
		{"past", "host:42:ab12", now.Add(-time.Minute), ""},
		{"none", "", now.Add(time.Minute), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := peers.Listed{Peer: peers.Peer{Name: "b", Lease: c.lease, LeaseUntil: c.until}}
			if got := FromPeer(p, now).FollowedBy; got != c.want {
				t.Fatalf("followedBy %q, want %q", got, c.want)
			}
		})
	}
}
