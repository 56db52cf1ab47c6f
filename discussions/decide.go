package discussions

import (
	"crypto/sha256"
	"fmt"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/ratelimit"
)

// The decisions of the discussion commands. Each is pure: it takes what
// the store loaded (and locked) and returns a refusal or the effects for
// the store to write. A reply's whole decision, which also completes
// tasks, is asknet.DecideReply; the rules of the discussion's side of it
// are here.

// Post is what posting a reply does to its discussion.
type Post struct {
	// Discussion is the discussion after the reply (one more reply;
	// answered, at the time of its earliest qualifying reply, from its
	// first qualifying reply on).
	Discussion Discussion
	// OldStatus is its status before, for the store's status index.
	OldStatus Status
	// Qualifying reports whether the reply answers the question: it is
	// by someone else than the discussion's author.
	Qualifying bool
	// Window is the author's reply window after the reply, nil when
	// replies are not rate limited (nothing to store).
	Window *time.Time
}

// DecidePost decides whether r may be posted on d (nil: no such
// discussion) under lim, given the author's reply window (the kept time
// of lim.ReplyRate, zero when none): a *NotFoundError for no discussion
// (or a hidden one, which readers cannot tell from none),
// a *TooManyRepliesError at lim.MaxReplies, a *ratelimit.Exceeded over
// lim.ReplyRate. The reply's time is r.CreatedAt.
func DecidePost(d *Discussion, window time.Time, r Reply, lim Limits) (Post, error) {
	if d == nil || d.Hidden {
		return Post{}, &NotFoundError{ID: r.DiscussionID}
	}
	if lim.MaxReplies > 0 && d.ReplyCount >= lim.MaxReplies {
		return Post{}, &TooManyRepliesError{ID: d.ID, Max: lim.MaxReplies}
	}
	p := Post{Discussion: *d, OldStatus: d.Status, Qualifying: Qualifies(*d, r)}
	if lim.ReplyRate.Enabled() {
		next, wait, ok := lim.ReplyRate.Take(window, r.CreatedAt)
		if !ok {
			return Post{}, &ratelimit.Exceeded{
				Msg:        fmt.Sprintf("too many replies: the limit is %s per agent", lim.ReplyRate),
				RetryAfter: wait,
				Reason:     ErrReplyRate,
			}
		}
		p.Window = &next
	}
	p.Discussion.ReplyCount++
	if p.Qualifying && (p.Discussion.Status == StatusOpen || r.CreatedAt.Before(p.Discussion.AnsweredAt)) {
		// A reply's time is set before it waits for the write, so
		// replies commit in any order: the earliest answers, whichever
		// commits first (see Answered).
		p.Discussion = Answered(p.Discussion, &r)
	}
	return p, nil
}

// Member is an agent with tasks on a discussion, and their ids.
type Member struct {
	AgentID string
	TaskIDs []string
}

// Notices are the inbox entries reply r on d writes: one for every
// member (in agent id order, as members come) and for the discussion's
// author even without a task of its own, except r's author, who knows.
func Notices(d Discussion, r Reply, members []Member) []InboxEntry {
	var out []InboxEntry
	notify := func(agent string, taskIDs []string) {
		if agent == r.AuthorID {
			return
		}
		out = append(out, InboxEntry{
			ID: InboxEntryID(r.ID, agent, r.CreatedAt), AgentID: agent, DiscussionID: d.ID, ReplyID: r.ID,
			TaskIDs: taskIDs, CreatedAt: r.CreatedAt,
		})
	}
	authorDone := false
	for _, m := range members {
		if !authorDone && m.AgentID >= d.AuthorID {
			authorDone = true
			if m.AgentID != d.AuthorID {
				notify(d.AuthorID, []string{})
			}
		}
		notify(m.AgentID, m.TaskIDs)
	}
	if !authorDone {
		notify(d.AuthorID, []string{})
	}
	return out
}

// InboxEntryID derives the id of the inbox entry telling agentID about
// replyID. It is a function of both, so deciding a reply again (a rerun of
// its transaction) writes the same entry and every backend gives the same
// id (kfa migrate and kfa check rely on it), and it sorts by the reply's
// time.
func InboxEntryID(replyID, agentID string, at time.Time) string {
	sum := sha256.Sum256([]byte(replyID + "|" + agentID))
	var id ulid.ULID
	_ = id.SetTime(ulid.Timestamp(at))
	_ = id.SetEntropy(sum[:10])
	return id.String()
}

// NoticeID derives the id of an inbox entry of kind telling agentID
// about ref (a reply id, or what the kind names) at at: like
// InboxEntryID, a function of its inputs that sorts by time. A reply's
// entries keep InboxEntryID's ids.
func NoticeID(kind InboxKind, ref, agentID string, at time.Time) string {
	if kind == InboxReply || kind == "" {
		return InboxEntryID(ref, agentID, at)
	}
	return InboxEntryID(string(kind)+"|"+ref, agentID, at)
}

// AckOutcome is what an ack does: its answer, and the entries it
// acknowledges (to write as they are here).
type AckOutcome struct {
	Result AckResult
	Acked  []InboxEntry
}

// DecideAck decides agentID's ack of ids at now, given the agent as
// loaded under its lock (nil when none has the id; a revoked one is
// agents.ErrRevoked) and its entries among them (found, by id; another
// agent's entry is not found). Each id is answered once, in the order
// given: acknowledged now, acknowledged already, or not found. It changes
// no task.
func DecideAck(agent *agents.Agent, agentID string, ids []string, found map[string]InboxEntry, now time.Time) (AckOutcome, error) {
	if err := agents.MayAct(agent); err != nil {
		return AckOutcome{}, err
	}
	out := AckOutcome{Result: AckResult{Acked: []string{}, AlreadyAcked: []string{}, NotFound: []string{}}}
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		e, ok := found[id]
		switch {
		case !ok || e.AgentID != agentID:
			out.Result.NotFound = append(out.Result.NotFound, id)
		case !e.AckedAt.IsZero():
			out.Result.AlreadyAcked = append(out.Result.AlreadyAcked, id)
		default:
			e.AckedAt = now
			out.Acked = append(out.Acked, e)
			out.Result.Acked = append(out.Result.Acked, id)
		}
	}
	return out, nil
}

// OpenedEvent is the log event of an ask opening d.
func OpenedEvent(d *Discussion) changelog.Event {
	return changelog.Event{Kind: changelog.DiscussionOpened, ID: d.ID, Owner: d.AuthorID, At: d.CreatedAt}
}

// StatusEvent is the log event of d's status or answer time moving at at
// because a reply was hidden or shown (see Answered); d is the
// discussion after.
func StatusEvent(d *Discussion, at time.Time) changelog.Event {
	return changelog.Event{Kind: changelog.DiscussionChanged, ID: d.ID, Ref: changelog.RefStatus, Note: string(d.Status), At: at}
}

// RepliedEvent is the log event of reply r; qualifying says whether it
// answers the discussion (its Note, which the metrics read).
func RepliedEvent(r *Reply, qualifying bool) changelog.Event {
	e := changelog.Event{Kind: changelog.DiscussionReplied, ID: r.DiscussionID, Owner: r.AuthorID, Ref: r.ID, At: r.CreatedAt}
	if qualifying {
		e.Note = changelog.NoteQualifying
	}
	return e
}
