package service

import (
	"context"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/peers"
)

// The operator's peers (federation): add, list, pause, resume, remove.
// Without a peers service they answer Unavailable.

var errNoPeers = a2a.Errorf(a2a.Unavailable, "federation is not available to this operator")

// AddPeer adds the peer req describes: its card is read (and its key
// pinned) first.
func (o *Operator) AddPeer(ctx context.Context, req api.PeerAddRequest) (peers.Listed, error) {
	if o.d.Peers == nil {
		return peers.Listed{}, errNoPeers
	}
	follow := req.Follow == nil || *req.Follow
	p, err := o.d.Peers.Add(ctx, peers.AddInput{Name: req.Name, URL: req.URL, Token: req.Token, Follow: follow,
		ForwardAsks: req.ForwardAsks, Bounds: peers.Bounds{DocsPerMinute: req.MaxDocsPerMinute, MaxDocBytes: req.MaxDocBytes}})
	return peers.Listed{Peer: p}, err
}

// Peers lists every peer.
func (o *Operator) Peers(ctx context.Context) ([]peers.Listed, error) {
	if o.d.Peers == nil {
		return nil, errNoPeers
	}
	return o.d.Peers.List(ctx)
}

// PausePeer pauses a peer.
func (o *Operator) PausePeer(ctx context.Context, name string) (peers.Listed, error) {
	if o.d.Peers == nil {
		return peers.Listed{}, errNoPeers
	}
	p, err := o.d.Peers.Pause(ctx, name)
	return peers.Listed{Peer: p}, err
}

// ResumePeer resumes a peer.
func (o *Operator) ResumePeer(ctx context.Context, name string) (peers.Listed, error) {
	if o.d.Peers == nil {
		return peers.Listed{}, errNoPeers
	}
	p, err := o.d.Peers.Resume(ctx, name)
	return peers.Listed{Peer: p}, err
}

// RemovePeer removes a peer (with purge, what was followed from it).
func (o *Operator) RemovePeer(ctx context.Context, name string, purge bool) error {
	if o.d.Peers == nil {
		return errNoPeers
	}
	return o.d.Peers.Remove(ctx, name, purge)
}

// Now is the operator's clock.
func (o *Operator) Now() time.Time { return o.now() }
