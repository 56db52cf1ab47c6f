package federation

import (
	"context"
	"errors"
	"net/url"
	"time"

	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/input"
	"github.com/kfa-project/kfa/peers"
)

// Bounds of one forwarding step of a peer.
const (
	// sendBatch is how many due forwards one step sends.
	sendBatch = 20
	// inFlightScan is how many asked forwards one poll reads.
	inFlightScan = 1000
	// pollOverlap reaches back before the newest completion seen: a
	// task the peer completed in a transaction that committed late (its
	// time is earlier than one seen already) is read again.
	pollOverlap = 5 * time.Second
	// maxPollPages bounds the pages of completed tasks one poll reads.
	maxPollPages = 10
)

// forwarderCursor is the durable cursor of the forwarder in the change
// log: every process shares it, and its commands are idempotent.
const forwarderCursor = "federation-forwarder"

// forwarder follows this server's change log: a discussion opened here
// gets its forwards recorded (one per peer that forwards asks), and a
// discussion answered here stops waiting on its peers. Its commands are
// idempotent, so a batch applied again after a crash records nothing
// twice.
type forwarder struct{ r *Runner }

// Apply implements changelog.Follower. A batch with no discussion opened
// or answered costs nothing; one with some reads the peers once, and
// each discussion's forwards only when a peer forwards asks.
func (f forwarder) Apply(ctx context.Context, evs []changelog.Event) error {
	relevant := false
	for _, e := range evs {
		relevant = relevant || e.Kind == changelog.DiscussionOpened ||
			e.Kind == changelog.DiscussionReplied && e.Note == changelog.NoteQualifying
	}
	if !relevant {
		return nil
	}
	ps, err := f.r.svc.Peers(ctx)
	if err != nil {
		return err
	}
	forwarding := false
	for _, p := range ps {
		forwarding = forwarding || p.ForwardAsks && !p.Purging
	}
	if !forwarding {
		return nil
	}
	for _, e := range evs {
		var err error
		switch {
		case e.Kind == changelog.DiscussionOpened:
			_, err = f.r.svc.PlanForwards(ctx, e.ID)
		case e.Kind == changelog.DiscussionReplied && e.Note == changelog.NoteQualifying:
			err = f.r.svc.CloseForwards(ctx, e.ID)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// forwarderFrom is where the forwarder starts: its saved cursor, or the
// log's head (a server that never forwarded forwards what is opened from
// now on), saved at once: a follower saves its cursor only once it has
// run a while, and a kill before that would restart at a later head,
// and never forward what was opened in between.
func (r *Runner) forwarderFrom(ctx context.Context) (changelog.Position, error) {
	cs, err := r.o.Cursors.ListCursors(ctx)
	if err != nil {
		return changelog.Position{}, err
	}
	for _, c := range cs {
		if c.Name == forwarderCursor {
			return c.Pos, nil
		}
	}
	st, err := r.o.Changes.LogState(ctx)
	if err != nil {
		return changelog.Position{}, err
	}
	if err := r.o.Cursors.SaveCursor(ctx, forwarderCursor, st.Last, r.svc.Now()); err != nil {
		return changelog.Position{}, err
	}
	return st.Last, nil
}

// forward sends the due forwards to p and polls the peer for the
// answers of those it asked. A failure makes the peer failing (its
// forwarder's health), retried with backoff.
func (r *Runner) forward(ctx context.Context, p peers.Peer, st *workerState) {
	if now := r.svc.Now(); now.Before(p.Forwarder.RetryAt) {
		return
	}
	c := r.peerClient(p)
	err := r.send(ctx, c, p)
	if err == nil {
		err = r.poll(ctx, c, p, st)
	}
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		r.o.Observer.Failed(p.Name, "forward")
	}
	if err != nil || p.Forwarder.Failures > 0 {
		if rerr := r.svc.RecordOutcome(ctx, p.Name, peers.JobForward, r.holder, err); rerr != nil {
			r.o.Log.Warn("federation: record a forward's outcome", "peer", p.Name, "err", rerr.Error())
		}
	}
}

// send sends the forwards to p that are due, each claimed first.
func (r *Runner) send(ctx context.Context, c *Client, p peers.Peer) error {
	due, err := r.svc.Forwards(ctx, p.Name, peers.ForwardPending, sendBatch)
	if err != nil {
		return err
	}
	now := r.svc.Now()
	for _, f := range due {
		if now.Before(f.NextAt) {
			break // in due order: the rest are later
		}
		f, ok, err := r.svc.Claim(ctx, p.Name, f.DiscussionID)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		asked, err := c.Ask(ctx, Ask{DiscussionID: f.DiscussionID, Question: f.Question, Details: f.Details, Filters: f.Filters,
			Server: r.svc.Self()})
		if err != nil {
			if rerr := r.svc.SendFailed(ctx, p.Name, f.DiscussionID, err); rerr != nil {
				return rerr
			}
			return err
		}
		at, _ := time.Parse(time.RFC3339Nano, asked.StatusAt)
		if err := r.svc.Sent(ctx, p.Name, f.DiscussionID, peers.Asked{TaskID: asked.TaskID, DiscussionID: asked.DiscussionID,
			At: at.UTC()}); err != nil {
			return err
		}
		r.o.Observer.Forwarded(p.Name)
	}
	return nil
}

// poll reads the tasks the peer completed since the oldest forward in
// flight was asked (on the peer's clock), and adds the answer of each
// forward among them.
func (r *Runner) poll(ctx context.Context, c *Client, p peers.Peer, st *workerState) error {
	asked, err := r.svc.Forwards(ctx, p.Name, peers.ForwardAsked, inFlightScan)
	if err != nil || len(asked) == 0 {
		st.since = time.Time{}
		return err
	}
	byTask := map[string]peers.Forward{}
	oldest := time.Time{}
	for _, f := range asked {
		byTask[f.RemoteTaskID] = f
		if oldest.IsZero() || f.RemoteAt.Before(oldest) {
			oldest = f.RemoteAt
		}
	}
	since := st.since
	if since.IsZero() || oldest.Before(since) {
		since = oldest.Add(-time.Second)
	}
	newest, token := since, ""
	for range maxPollPages {
		answers, next, err := c.Completed(ctx, since, token)
		if err != nil {
			return err
		}
		for _, a := range answers {
			if a.At.After(newest) {
				newest = a.At
			}
			f, ok := byTask[a.TaskID]
			if !ok {
				continue
			}
			if err := r.answer(ctx, p, f.DiscussionID, a.DiscussionID, a.ReplyID, a.AuthorName, a.Body); err != nil {
				return err
			}
		}
		if token = next; token == "" {
			break
		}
	}
	st.since = newest.Add(-pollOverlap)
	return nil
}

// answer adds the peer's reply replyID (on its discussion remoteDisc) to
// the local discussion disc. An answer the domain refuses (never
// forwarded, malformed, past the discussion's bound) is dropped: it
// would be refused again.
func (r *Runner) answer(ctx context.Context, p peers.Peer, disc, remoteDisc, replyID, author, body string) error {
	server := p.Server
	if server == "" {
		server = p.URL
	}
	out, err := r.svc.Answer(ctx, peers.Answer{Peer: p.Name, Server: server, DiscussionID: disc, ReplyID: replyID,
		AuthorName: author, Body: body, URL: server + "/discussions/" + url.PathEscape(remoteDisc) + "#reply-" + url.PathEscape(replyID)})
	if err == nil {
		if out.Reply != nil {
			r.o.Observer.Answered(p.Name)
		}
		return nil
	}
	if refused(err) {
		r.o.Log.Info("federation: an answer left out", "peer", p.Name, "discussion", disc, "reply", replyID, "err", err.Error())
		return nil
	}
	return err
}

// refused reports whether err is the domain's refusal of an answer, not
// a failure to store it.
func refused(err error) bool {
	var ie *input.Error
	return errors.Is(err, peers.ErrNotForwarded) || errors.Is(err, discussions.ErrNotFound) ||
		errors.Is(err, discussions.ErrTooManyReplies) || errors.As(err, &ie)
}
