package api

import (
	"time"

	"github.com/kfa-project/kfa/peers"
)

// PeerAddRequest is the body of POST /admin/v1/peers.
type PeerAddRequest struct {
	Name  string `json:"name"`
	URL   string `json:"url"`
	Token string `json:"token"`
	// Follow defaults to true.
	Follow           *bool `json:"follow,omitempty"`
	ForwardAsks      bool  `json:"forwardAsks,omitempty"`
	MaxDocsPerMinute int   `json:"maxDocsPerMinute,omitempty"`
	MaxDocBytes      int   `json:"maxDocBytes,omitempty"`
}

// PeerRemoveRequest is the body of POST /admin/v1/peers/{name}/remove.
type PeerRemoveRequest struct {
	Purge bool `json:"purge,omitempty"`
}

// Peer is a peer as the operator sees it (never its token).
type Peer struct {
	Name        string `json:"name"`
	URL         string `json:"url"`
	AgentName   string `json:"agentName"`
	Server      string `json:"server,omitempty"`
	State       string `json:"state"`
	Follow      bool   `json:"follow"`
	ForwardAsks bool   `json:"forwardAsks"`
	// KeyPinned says the peer's card was signed and its key pinned.
	KeyPinned   bool   `json:"keyPinned"`
	LastSync    string `json:"lastSync,omitempty"`
	LagSeconds  int64  `json:"lagSeconds"`
	LastError   string `json:"lastError,omitempty"`
	LastErrorAt string `json:"lastErrorAt,omitempty"`
	Documents   int    `json:"documents"`
	// FollowedBy names the kfa process whose follower holds the peer's
	// lease (host, process id and a random part), while it runs.
	FollowedBy string `json:"followedBy,omitempty"`
	// Purging says the peer was removed with --purge and its documents
	// are being deleted.
	Purging          bool   `json:"purging,omitempty"`
	MaxDocsPerMinute int    `json:"maxDocsPerMinute"`
	MaxDocBytes      int    `json:"maxDocBytes"`
	AddedAt          string `json:"addedAt"`
}

// PeerList is every peer.
type PeerList struct {
	Peers []Peer `json:"peers"`
}

// FromPeer converts a peer as of now.
func FromPeer(p peers.Listed, now time.Time) Peer {
	return Peer{
		Name: p.Name, URL: p.URL, AgentName: p.AgentName, Server: p.Server, State: string(p.State()),
		Follow: p.Follow, ForwardAsks: p.ForwardAsks, KeyPinned: p.Key != "", LastSync: ts(p.LastSync),
		LagSeconds: int64(p.Lag(now) / time.Second), LastError: p.LastError, LastErrorAt: ts(p.LastErrorAt),
		Documents: p.Documents, Purging: p.Purging, MaxDocsPerMinute: p.Bounds.DocsPerMinute,
		FollowedBy:  leaseHolder(p.Peer, now),
		MaxDocBytes: p.Bounds.MaxDocBytes, AddedAt: ts(p.AddedAt),
	}
}

// FromPeers converts every peer, never returning nil.
func FromPeers(ps []peers.Listed, now time.Time) PeerList {
	out := PeerList{Peers: make([]Peer, len(ps))}
	for i, p := range ps {
		out.Peers[i] = FromPeer(p, now)
	}
	return out
}

// leaseHolder is the holder of p's follower lease at now ("" for none).
func leaseHolder(p peers.Peer, now time.Time) string {
	if p.Lease == "" || !now.Before(p.LeaseUntil) {
		return ""
	}
	return p.Lease
}
