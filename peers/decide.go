package peers

import (
	"time"

	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/input"
)

// The change log's events of the peers. Followers of the log (the search
// index) read them as they read the records' and discussions'.
const (
	// EventPeerChanged: peer ID was added, changed by its operator
	// (paused, resumed), or removed (Ref "removed"; "purged" with its
	// documents).
	EventPeerChanged changelog.Kind = "peer.changed"
	// EventDocument: followed document ID (its key) changed: it was put,
	// deleted, hidden or shown; Ref is the peer it is from.
	EventDocument changelog.Kind = "peer.document"
)

// Refs of EventPeerChanged.
const (
	RefRemoved = "removed"
	RefPurged  = "purged"
)

// The retry schedule of a failing job: the first retry after
// minBackoff, doubling up to maxBackoff.
const (
	minBackoff = time.Second
	maxBackoff = 5 * time.Minute
	// LeaseTTL is how long a follower pass holds its peer: longer than a
	// pass takes (its requests time out sooner), so a process that dies
	// in a pass holds the peer at most this long.
	LeaseTTL = 30 * time.Second
	// maxErrorLen bounds the error kept with a peer.
	maxErrorLen = 500
)

// Backoff is the wait before the next try after n failures in a row.
func Backoff(n int) time.Duration {
	if n <= 0 {
		return 0
	}
	d := minBackoff
	for i := 1; i < n && d < maxBackoff; i++ {
		d *= 2
	}
	return min(d, maxBackoff)
}

// DecideAdd adds the peer in under card at now; existing is the peer of
// that name, nil for none. A name taken (even by a peer being purged) is
// ErrExists.
func DecideAdd(existing *Peer, in AddInput, card Card, now time.Time) (Peer, []changelog.Event, error) {
	in, err := ValidateAdd(in)
	if err != nil {
		return Peer{}, nil, err
	}
	if existing != nil {
		return Peer{}, nil, ErrExists
	}
	if card.Name == "" {
		return Peer{}, nil, input.Errorf("url", "the agent card at this URL has no name: is it a kfa?")
	}
	a2aURL, err := NormalizeURL("url", card.A2AURL)
	if err != nil {
		return Peer{}, nil, input.Errorf("url", "the agent card at this URL names no HTTP+JSON interface: is it a kfa?")
	}
	p := Peer{
		Name: in.Name, URL: in.URL, Token: in.Token, AgentName: clip(card.Name, 200), A2AURL: a2aURL,
		KeyID: card.KeyID, Key: card.Key, Follow: in.Follow, ForwardAsks: in.ForwardAsks, Bounds: in.Bounds,
		AddedAt: now,
	}
	return p, []changelog.Event{{Kind: EventPeerChanged, ID: p.Name, At: now}}, nil
}

// DecidePause pauses p (nil: not found): nothing is pulled or forwarded
// until it is resumed. Pausing a paused peer changes nothing.
func DecidePause(name string, p *Peer, now time.Time) (Peer, []changelog.Event, error) {
	if p == nil || p.Purging {
		return Peer{}, nil, &NotFoundError{Name: name}
	}
	out := *p
	if out.Paused {
		return out, nil, nil
	}
	out.Paused, out.Lease, out.LeaseUntil = true, "", time.Time{}
	return out, []changelog.Event{{Kind: EventPeerChanged, ID: out.Name, At: now}}, nil
}

// DecideResume resumes p: it is tried again at once, whatever its
// failures' backoff said.
func DecideResume(name string, p *Peer, now time.Time) (Peer, []changelog.Event, error) {
	if p == nil || p.Purging {
		return Peer{}, nil, &NotFoundError{Name: name}
	}
	out := *p
	out.Paused = false
	out.Follower.RetryAt, out.Forwarder.RetryAt = time.Time{}, time.Time{}
	return out, []changelog.Event{{Kind: EventPeerChanged, ID: out.Name, At: now}}, nil
}

// RemoveOutcome is what removing a peer does.
type RemoveOutcome struct {
	// Keep is the peer to keep while its documents are purged (Purging
	// set); nil: the peer's row goes now.
	Keep   *Peer
	Events []changelog.Event
}

// DecideRemove removes p. With purge, the peer stays as Purging until its
// documents are deleted (search drops them at once, on the event); its
// forwards are dropped either way (the local tasks keep waiting on local
// replies).
func DecideRemove(name string, p *Peer, purge bool, now time.Time) (RemoveOutcome, error) {
	if p == nil || (p.Purging && !purge) {
		return RemoveOutcome{}, &NotFoundError{Name: name}
	}
	ev := changelog.Event{Kind: EventPeerChanged, ID: name, Ref: RefRemoved, At: now}
	if !purge {
		return RemoveOutcome{Events: []changelog.Event{ev}}, nil
	}
	keep := *p
	keep.Purging, keep.Paused, keep.Follow, keep.ForwardAsks = true, true, false, false
	keep.Token, keep.Lease, keep.LeaseUntil = "", "", time.Time{}
	ev.Ref = RefPurged
	return RemoveOutcome{Keep: &keep, Events: []changelog.Event{ev}}, nil
}

// DecideLease lets holder run a follower pass of p at now: p must follow,
// not be paused, be due (its backoff passed), and not be leased by
// another holder whose lease runs. It returns the peer with the lease
// taken until now+LeaseTTL, or ok false.
func DecideLease(p Peer, holder string, now time.Time) (Peer, bool) {
	if !p.Follow || p.Paused || p.Purging || now.Before(p.Follower.RetryAt) {
		return p, false
	}
	if p.Lease != "" && p.Lease != holder && now.Before(p.LeaseUntil) {
		return p, false
	}
	p.Lease, p.LeaseUntil = holder, now.Add(LeaseTTL)
	return p, true
}

// Job names one of the two jobs a peer has.
type Job int

// The jobs of a peer.
const (
	JobFollow Job = iota
	JobForward
)

// DecideFailure records that job failed on p at now with err: one more
// failure in a row, the next try after Backoff, the error kept. A
// follower's lease of holder is given back.
func DecideFailure(p Peer, job Job, holder, err string, now time.Time) Peer {
	h := &p.Follower
	if job == JobForward {
		h = &p.Forwarder
	}
	h.Failures++
	h.RetryAt = now.Add(Backoff(h.Failures))
	p.LastError, p.LastErrorAt = clip(err, maxErrorLen), now
	if job == JobFollow && p.Lease == holder {
		p.Lease, p.LeaseUntil = "", time.Time{}
	}
	return p
}

// DecideSuccess records that job worked on p: its failures end.
func DecideSuccess(p Peer, job Job) Peer {
	if job == JobForward {
		p.Forwarder = Health{}
	} else {
		p.Follower = Health{}
	}
	return p
}

// clip cuts s to at most n bytes, at a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
