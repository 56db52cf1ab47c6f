package peers

import (
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/input"
)

// ForwardState is where a forwarded ask stands.
type ForwardState string

// The states of a forward: to send; sent, its answer awaited; answered
// by the peer; closed (the discussion was answered otherwise, or it
// could never be sent).
const (
	ForwardPending  ForwardState = "pending"
	ForwardAsked    ForwardState = "asked"
	ForwardAnswered ForwardState = "answered"
	ForwardClosed   ForwardState = "closed"
)

// Forward is a discussion opened here, asked on a peer too.
type Forward struct {
	Peer         string       `json:"peer"`
	DiscussionID string       `json:"discussionId"`
	State        ForwardState `json:"state"`
	// The question as it was asked here: what the forward sends.
	Question string              `json:"question"`
	Details  string              `json:"details,omitempty"`
	Filters  discussions.Filters `json:"filters,omitzero"`
	// RemoteTaskID is the peer's task, and RemoteAt its status time as
	// the peer gave it (the peer's clock: what polling its tasks
	// compares with).
	RemoteTaskID       string    `json:"remoteTaskId,omitempty"`
	RemoteDiscussionID string    `json:"remoteDiscussionId,omitempty"`
	RemoteAt           time.Time `json:"remoteAt,omitzero"`
	// Attempts counts the failed sends; NextAt is when it is tried (a
	// pending one) or, while a send runs, when its claim ends.
	Attempts  int       `json:"attempts,omitempty"`
	NextAt    time.Time `json:"nextAt"`
	LastError string    `json:"lastError,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
	DoneAt    time.Time `json:"doneAt,omitzero"`
}

// Open reports whether f still waits on its peer: to be sent, or sent
// and not answered.
func (f Forward) Open() bool { return f.State == ForwardPending || f.State == ForwardAsked }

// OriginMetadataKey is the message metadata key that says where a
// forwarded ask comes from: {"server": the asking server's public URL,
// "discussionId": its discussion}. A kfa that receives it keeps it with
// the discussion it opens, and never forwards that one again.
const OriginMetadataKey = "kfaOrigin"

// ParseOrigin reads the origin of a forwarded ask: its server (a URL,
// written as NormalizeURL does) and discussion id.
func ParseOrigin(server, discussionID string) (*discussions.Origin, error) {
	s, err := NormalizeURL("server", server)
	if err != nil {
		return nil, err
	}
	if _, err := ulid.ParseStrict(discussionID); err != nil {
		return nil, input.Errorf("discussionId", "must be a discussion id (a ULID)")
	}
	return &discussions.Origin{Server: s, ID: discussionID}, nil
}

// MessageID is the messageId a forward of the discussion id is sent
// with: the peer answers a second send of it with its first task.
func MessageID(discussionID string) string { return "fwd-" + discussionID }

// Forwardable reports whether d is to be asked on this server's peers:
// a visible, open question asked here whose asker did not opt out.
func Forwardable(d *discussions.Discussion) bool {
	return d != nil && !d.Hidden && d.Status == discussions.StatusOpen && !d.NoForward && d.Origin == nil
}

// DecideForwards is what a discussion opened here forwards: one pending
// forward to each peer that forwards asks (not paused, not being purged)
// and has none of d yet. existing are d's forwards.
func DecideForwards(d *discussions.Discussion, ps []Peer, existing []Forward, now time.Time) []Forward {
	if !Forwardable(d) {
		return nil
	}
	has := map[string]bool{}
	for _, f := range existing {
		has[f.Peer] = true
	}
	var out []Forward
	for _, p := range ps {
		if !p.ForwardAsks || p.Paused || p.Purging || has[p.Name] {
			continue
		}
		out = append(out, Forward{Peer: p.Name, DiscussionID: d.ID, State: ForwardPending, Question: d.Title,
			Details: d.Body, Filters: d.Filters, NextAt: now, CreatedAt: now})
	}
	return out
}

// claimFor is how long a send holds its forward: longer than a request
// to a peer may take.
const claimFor = 30 * time.Second

// DecideClaim lets a send of f run at now: f must be pending and due;
// the claim moves NextAt on, so that another process does not send it
// meanwhile (if it did, the peer would answer with the same task: the
// messageId is the discussion's).
func DecideClaim(f *Forward, now time.Time) (Forward, bool) {
	if f == nil || f.State != ForwardPending || now.Before(f.NextAt) {
		return Forward{}, false
	}
	out := *f
	out.NextAt = now.Add(claimFor)
	return out, true
}

// Asked is what the peer answered a forward's send with.
type Asked struct {
	TaskID       string
	DiscussionID string
	At           time.Time // the task's status time, on the peer's clock
}

// DecideSent records that f was sent and the peer's task is a. A forward
// no longer pending (closed meanwhile) stays as it is.
func DecideSent(f *Forward, a Asked, now time.Time) (Forward, bool) {
	if f == nil || f.State != ForwardPending {
		return Forward{}, false
	}
	out := *f
	out.State, out.RemoteTaskID, out.RemoteDiscussionID, out.RemoteAt = ForwardAsked, a.TaskID, a.DiscussionID, a.At
	out.LastError, out.NextAt = "", now
	return out, true
}

// maxForwardAttempts is how many failed sends close a forward: the
// peer's refusal or absence for that long (about 10 hours with the
// backoff's 5 minutes) means the question has moved on.
const maxForwardAttempts = 128

// DecideSendFailed records that a send of f failed with err: the next
// send after Backoff; after maxForwardAttempts, closed.
func DecideSendFailed(f *Forward, err string, now time.Time) (Forward, bool) {
	if f == nil || f.State != ForwardPending {
		return Forward{}, false
	}
	out := *f
	out.Attempts++
	out.LastError = clip(err, maxErrorLen)
	out.NextAt = now.Add(Backoff(out.Attempts))
	if out.Attempts >= maxForwardAttempts {
		out.State, out.DoneAt = ForwardClosed, now
	}
	return out, true
}

// DecideClose closes the open forwards among fs: their discussion was
// answered (here, or by one of them), or their peer removed. It returns
// the forwards it changed.
func DecideClose(fs []Forward, now time.Time) []Forward {
	var out []Forward
	for _, f := range fs {
		if f.Open() {
			f.State, f.DoneAt = ForwardClosed, now
			out = append(out, f)
		}
	}
	return out
}
