package service

import (
	"context"
	"strings"
	"time"

	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/peers"
)

// FederationDeps are what the federation runtime reaches through the
// service.
type FederationDeps struct {
	Peers *peers.Service
	// PublicURL is this server's public URL: the origin of its own
	// documents, and where forwarded asks say they come from.
	PublicURL string
	// Limits are the discussions' limits an answer come back is held to
	// (its bound of replies; a peer has no reply rate here).
	Limits discussions.Limits
}

// Federation is what the federation runtime (package federation) asks
// of the domain: a follower pass's lease and page, a job's outcome, a
// purge's step. It holds no rule: each call is a command of package
// peers, run by the store. It is safe for concurrent use.
type Federation struct{ d FederationDeps }

// NewFederation returns the federation's door to the domain.
func NewFederation(d FederationDeps) *Federation {
	d.PublicURL = strings.TrimRight(d.PublicURL, "/")
	return &Federation{d: d}
}

// Self is this server's public URL.
func (f *Federation) Self() string { return f.d.PublicURL }

// Now is the clock the commands run by.
func (f *Federation) Now() time.Time { return f.d.Peers.Now() }

// Peers lists the peers.
func (f *Federation) Peers(ctx context.Context) ([]peers.Listed, error) { return f.d.Peers.List(ctx) }

// Lease takes the follower's lease of the peer name for holder: ok
// false when the peer is not to be followed now (paused, backing off,
// another process's pass under way).
func (f *Federation) Lease(ctx context.Context, name, holder string) (peers.Peer, bool, error) {
	return f.d.Peers.Store().LeasePeer(ctx, name, holder, f.Now())
}

// ApplyPage applies a page of the peer's feed that holder's pass read
// from the cursor from.
func (f *Federation) ApplyPage(ctx context.Context, name, holder, from string, pg peers.Page) (peers.PageOutcome, error) {
	return f.d.Peers.Store().ApplyPage(ctx, name, holder, from, f.d.PublicURL, pg, f.Now())
}

// RecordOutcome records what a try of job did on the peer: err nil for
// a success.
func (f *Federation) RecordOutcome(ctx context.Context, name string, job peers.Job, holder string, err error) error {
	msg := ""
	if err != nil {
		msg = err.Error()
		if msg == "" {
			msg = "failed"
		}
	}
	return f.d.Peers.Store().RecordOutcome(ctx, name, job, holder, msg, f.Now())
}

// Purge deletes up to limit documents of a peer removed with --purge;
// done says the peer and its documents are gone.
func (f *Federation) Purge(ctx context.Context, name string, limit int) (int, bool, error) {
	return f.d.Peers.Store().PurgeDocuments(ctx, name, limit)
}

// PlanForwards records the forwards of a discussion just opened, one per
// peer that forwards asks.
func (f *Federation) PlanForwards(ctx context.Context, discussionID string) ([]peers.Forward, error) {
	return f.d.Peers.Store().PlanForwards(ctx, discussionID, f.Now())
}

// CloseForwards stops a discussion answered here from waiting on its
// peers.
func (f *Federation) CloseForwards(ctx context.Context, discussionID string) error {
	return f.d.Peers.Store().CloseForwards(ctx, discussionID, f.Now())
}

// Forwards lists up to limit open forwards to peer in state.
func (f *Federation) Forwards(ctx context.Context, peer string, state peers.ForwardState, limit int) ([]peers.Forward, error) {
	return f.d.Peers.Store().ListForwards(ctx, peer, state, limit)
}

// Claim claims a forward's send; ok false: not now.
func (f *Federation) Claim(ctx context.Context, peer, discussionID string) (peers.Forward, bool, error) {
	return f.d.Peers.Store().ClaimForward(ctx, peer, discussionID, f.Now())
}

// Sent records that a forward was sent and the peer's task.
func (f *Federation) Sent(ctx context.Context, peer, discussionID string, a peers.Asked) error {
	return f.d.Peers.Store().ForwardSent(ctx, peer, discussionID, a, f.Now())
}

// SendFailed records that a forward's send failed.
func (f *Federation) SendFailed(ctx context.Context, peer, discussionID string, err error) error {
	return f.d.Peers.Store().ForwardFailed(ctx, peer, discussionID, err.Error(), f.Now())
}

// Answer adds a peer's answer to the discussion it answers: a reply
// like any other, which completes the tasks waiting on it.
func (f *Federation) Answer(ctx context.Context, a peers.Answer) (peers.AnswerOutcome, error) {
	return f.d.Peers.Store().AddAnswer(ctx, a, f.d.Limits, f.Now())
}
