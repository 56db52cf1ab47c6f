package trust

import (
	"fmt"
	"time"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/ratelimit"
)

// The decisions of the vote and verify commands. Each is pure: it takes
// what the store loaded (and locked) and returns a refusal or the effects
// for the store to write.

// Limits are the limits of the trust commands on one server. The zero
// value limits nothing.
type Limits struct {
	// Rate limits each agent's votes and verifications together (one
	// window, kept under the agent's lock).
	Rate ratelimit.Rate
}

// VoteCommand is an agent's vote on an item.
type VoteCommand struct {
	Item    Item
	AgentID string
	// Value is 1 (up), -1 (down) or 0 (withdraw the standing vote).
	Value int
	// Record says whether a record item exists (the service reads it;
	// the store loads a reply item itself).
	Record bool
	At     time.Time
}

// VoteState is what a vote decides on: the agent and its vote window
// (loaded under the agent's lock), the item (a reply's discussion under a share lock, so
// a hide waits for the vote and the other way round), the item's tally
// (under its lock; nil when the item has no signal yet) and the agent's
// standing vote (nil for none).
type VoteState struct {
	// Voter is the voting agent as loaded under its lock (nil: unknown);
	// a revoked one is refused (agents.MayAct).
	Voter    *agents.Agent
	Target   Target
	Tally    *Tally
	Standing *Vote
	Window   time.Time
}

// VoteResult is the answer to a vote: the agent's standing vote after
// (0: none) and the item's tally after.
type VoteResult struct {
	Item  Item
	Value int
	// Changed is false when the vote was the standing one already (or a
	// withdrawal with none standing): nothing was written or spent.
	Changed bool
	Tally   Tally
	// At is when the vote was decided: the time its trust is read at.
	At time.Time
}

// VoteOutcome is what a vote writes: nothing but Result when
// Result.Changed is false.
type VoteOutcome struct {
	Result VoteResult
	// Vote is the standing vote to keep, nil when the vote withdraws it
	// (then Standing, as loaded, is deleted).
	Vote *Vote
	// Tally is the item's tally after.
	Tally Tally
	// Window is the agent's vote window after, nil when votes are not
	// rate limited.
	Window *time.Time
	Moves  []Move
	// Notice is the author's "voted" inbox entry, when this is the first
	// vote on the item this day (nil otherwise, and for a record).
	Notice *discussions.InboxEntry
	Events []changelog.Event
}

// DecideVote decides c under lim. In order: a revoked (or unknown) voter
// agents.ErrRevoked, whose revoke committed while the request was on its
// way; an item readers cannot see
// (no such reply or record, a hidden reply, a reply on a hidden
// discussion) is refused as an unknown one is; the agent's own answer
// ErrOwnContent; a vote equal to the standing one (or a withdrawal with
// none) changes nothing and spends nothing; over lim.Rate a
// *ratelimit.Exceeded (reason ErrVoteRate). Allowed, the vote replaces
// the standing one, and the tally, the author's reputation and the
// item's trust move with it.
func DecideVote(st VoteState, c VoteCommand, lim Limits) (VoteOutcome, error) {
	if err := agents.MayAct(st.Voter); err != nil {
		return VoteOutcome{}, err
	}
	author, err := visible(c.Item, st.Target)
	if err != nil {
		return VoteOutcome{}, err
	}
	if author != "" && author == c.AgentID {
		return VoteOutcome{}, fmt.Errorf("%w: reply %s is yours", ErrOwnContent, c.Item.ID)
	}
	t := tallyOf(st.Tally, c.Item, author)
	old := 0
	if st.Standing != nil {
		old = st.Standing.Value
	}
	out := VoteOutcome{Result: VoteResult{Item: c.Item, Value: old, Tally: t, At: c.At}}
	if c.Value == old {
		return out, nil
	}
	if out.Window, err = take(lim, st.Window, c.At); err != nil {
		return VoteOutcome{}, err
	}
	var m moves
	if old != 0 {
		t.Weight -= weightAt(voteWeight(old), st.Standing.At)
		t.count(old, -1, &m)
	}
	if c.Value != 0 {
		t.Weight += weightAt(voteWeight(c.Value), c.At)
		t.count(c.Value, +1, &m)
		out.Vote = &Vote{Item: c.Item, AgentID: c.AgentID, Value: c.Value, At: c.At}
	}
	t.settle()
	if day := c.At.UTC().Format(time.DateOnly); c.Value != 0 && author != "" && t.NoticeDay != day {
		t.NoticeDay = day
		out.Notice = &discussions.InboxEntry{ID: discussions.NoticeID(discussions.InboxVoted, c.Item.ID+"|"+day, author, c.At),
			AgentID: author, Kind: discussions.InboxVoted, DiscussionID: c.Item.DiscussionID, ReplyID: c.Item.ID,
			TaskIDs: []string{}, CreatedAt: c.At}
	}
	out.Tally, out.Moves = t, m.list()
	out.Result = VoteResult{Item: c.Item, Value: c.Value, Changed: true, Tally: t, At: c.At}
	out.Events = []changelog.Event{signalEvent(changelog.ItemVoted, c.Item, c.AgentID, author, c.At)}
	return out, nil
}

// count adds sign to the up or down count of a vote of value v, and the
// author's reputation with it.
func (t *Tally) count(v, sign int, m *moves) {
	if v > 0 {
		t.Up += sign
		m.add(t.AuthorID, CompUp, int64(sign))
		return
	}
	t.Down += sign
	m.add(t.AuthorID, CompDown, int64(sign))
}

// VerifyCommand is an agent's report on an item.
type VerifyCommand struct {
	Item        Item
	AgentID     string
	AgentName   string
	Outcome     Outcome
	Environment string
	Note        string
	// Record is VoteCommand's.
	Record bool
	At     time.Time
}

// VerifyState is what a verification decides on: VoteState's, with the
// agent's standing verification, and the item's two newest standing
// "worked" reports of any agent (newest first), from which the newest
// that stands after is found.
type VerifyState struct {
	Voter        *agents.Agent // VoteState's
	Target       Target
	Tally        *Tally
	Standing     *Verification
	LatestWorked []Verification
	Window       time.Time
}

// VerifyResult is the answer to a verification.
type VerifyResult struct {
	Verification Verification
	// Changed is false when the report repeated the standing one within
	// RepeatWindow: nothing was written or spent.
	Changed bool
	Tally   Tally
	// At is VoteResult's.
	At time.Time
}

// RepeatWindow is how long a report that repeats the agent's standing
// one (the same outcome, environment and note) changes nothing: a retry
// writes nothing, but the same report a day later renews the signal's
// time (the answer still works).
const RepeatWindow = 24 * time.Hour

// VerifyOutcome is what a verification writes: nothing but Result when
// Result.Changed is false.
type VerifyOutcome struct {
	Result VerifyResult
	// Verification replaces the standing one (Standing, as loaded).
	Verification Verification
	Tally        Tally
	Window       *time.Time
	Moves        []Move
	Events       []changelog.Event
}

// DecideVerify decides c under lim, with DecideVote's refusals in the
// same order; a report that repeats the standing one within
// RepeatWindow changes nothing. Allowed, it replaces the agent's
// standing report, and the tally (its counts, the newest "worked" time,
// its trust) and the author's reputation move with it.
func DecideVerify(st VerifyState, c VerifyCommand, lim Limits) (VerifyOutcome, error) {
	if err := agents.MayAct(st.Voter); err != nil {
		return VerifyOutcome{}, err
	}
	author, err := visible(c.Item, st.Target)
	if err != nil {
		return VerifyOutcome{}, err
	}
	if author != "" && author == c.AgentID {
		return VerifyOutcome{}, fmt.Errorf("%w: reply %s is yours", ErrOwnContent, c.Item.ID)
	}
	t := tallyOf(st.Tally, c.Item, author)
	v := Verification{Item: c.Item, AgentID: c.AgentID, AgentName: c.AgentName, Outcome: c.Outcome,
		Environment: c.Environment, Note: c.Note, At: c.At}
	if s := st.Standing; s != nil && s.Outcome == v.Outcome && s.Environment == v.Environment && s.Note == v.Note &&
		c.At.Sub(s.At) < RepeatWindow {
		return VerifyOutcome{Result: VerifyResult{Verification: *s, Tally: t, At: c.At}}, nil
	}
	out := VerifyOutcome{Verification: v}
	if out.Window, err = take(lim, st.Window, c.At); err != nil {
		return VerifyOutcome{}, err
	}
	var m moves
	if s := st.Standing; s != nil {
		t.Weight -= weightAt(outcomeWeight(s.Outcome), s.At)
		t.report(s.Outcome, -1, &m)
	}
	t.Weight += weightAt(outcomeWeight(v.Outcome), v.At)
	t.report(v.Outcome, +1, &m)
	t.settle()
	t.LastWorkedAt = lastWorked(st.LatestWorked, c.AgentID, v)
	out.Tally, out.Moves = t, m.list()
	out.Result = VerifyResult{Verification: v, Changed: true, Tally: t, At: c.At}
	out.Events = []changelog.Event{signalEvent(changelog.ItemVerified, c.Item, c.AgentID, author, c.At)}
	return out, nil
}

// report adds sign to the count of outcome o, and the author's "worked"
// reputation with it.
func (t *Tally) report(o Outcome, sign int, m *moves) {
	if o == Worked {
		t.Worked += sign
		m.add(t.AuthorID, CompWorked, int64(sign))
		return
	}
	t.Failed += sign
}

// lastWorked is the newest "worked" time once agent's report is v: the
// newest of the others' among latest (agent's own report there is
// replaced) and v's when it worked.
func lastWorked(latest []Verification, agent string, v Verification) time.Time {
	var at time.Time
	for _, w := range latest {
		if w.AgentID != agent && w.Outcome == Worked && w.At.After(at) {
			at = w.At
		}
	}
	if v.Outcome == Worked && v.At.After(at) {
		at = v.At
	}
	return at
}

// tallyOf is the item's tally as loaded, or a new one of author.
func tallyOf(found *Tally, it Item, author string) Tally {
	if found != nil {
		return *found
	}
	return Tally{Item: it, AuthorID: author}
}

// take spends one of lim's rate from window at at: the window after (nil
// when not limited), or the refusal.
func take(lim Limits, window, at time.Time) (*time.Time, error) {
	if !lim.Rate.Enabled() {
		return nil, nil
	}
	next, wait, ok := lim.Rate.Take(window, at)
	if !ok {
		return nil, &ratelimit.Exceeded{
			Msg:        fmt.Sprintf("too many votes and verifications: the limit is %s per agent", lim.Rate),
			RetryAfter: wait,
			Reason:     ErrVoteRate,
		}
	}
	return &next, nil
}

// signalEvent is the log event of a vote or a verification.
func signalEvent(kind changelog.Kind, it Item, agent, author string, at time.Time) changelog.Event {
	return changelog.Event{Kind: kind, ID: it.ID, Owner: agent, Ref: it.DiscussionID, Note: author, At: at}
}
