package moderation

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/ratelimit"
)

// The decisions of the moderation commands. Each is pure: it takes what
// the store loaded (and locked) and returns a refusal or the effects for
// the store to write.

// Policy is how flags work on one server.
type Policy struct {
	// HideThreshold is how many distinct agents' open flags hide an item
	// pending review; 0 means flags never hide anything on their own.
	HideThreshold int
	// Rate limits each agent's flags (kept like the reply window).
	Rate ratelimit.Rate
}

// Content is the content a command changes: the discussion and the
// reply after it, each nil when unchanged.
type Content struct {
	Discussion *discussions.Discussion
	Reply      *discussions.Reply
}

// FlagCommand is an agent's flag on an item. Target.Kind is set.
type FlagCommand struct {
	Target    Target
	AgentID   string
	AgentName string
	Reason    Reason
	Note      string
	At        time.Time
}

// FlagState is what a flag decides on, loaded under the agent's lock
// (its flag window) and then the item's discussion's.
type FlagState struct {
	// Agent is the flagging agent as loaded under its lock, nil when no
	// agent has the id.
	Agent *agents.Agent
	// Discussion is the item's discussion (the item itself, or the
	// reply's), nil when none has the id.
	Discussion *discussions.Discussion
	// Reply is the flagged reply, nil for a discussion's flag or when
	// the discussion has no reply of the id.
	Reply *discussions.Reply
	// Answer is, for a reply's flag, the discussion's earliest visible
	// qualifying reply other than the flagged one (nil when none): what
	// answers the discussion if the flag hides the reply.
	Answer *discussions.Reply
	// Item is the item's moderation state, nil when it was never flagged
	// or hidden.
	Item *Item
	// Flagged reports whether the agent flagged the item before.
	Flagged bool
	// Window is the agent's flag window (zero when it never flagged under
	// a rate).
	Window time.Time
}

// FlagResult is the answer to a flag.
type FlagResult struct {
	ItemID string
	// AlreadyFlagged says that the agent had flagged the item before:
	// nothing changed.
	AlreadyFlagged bool
	// Hidden says that this flag hid the item (it reached the threshold).
	Hidden bool
}

// FlagOutcome is what a flag writes: nothing but Result when
// Result.AlreadyFlagged.
type FlagOutcome struct {
	Result FlagResult
	Flag   Flag
	// Item is the item's state after the flag.
	Item    Item
	Content Content
	// Window is the agent's flag window after, nil when flags are not
	// rate limited.
	Window  *time.Time
	Entries []Entry
	Events  []changelog.Event
}

// DecideFlag decides c under p. In order: an agent revoked since its
// request was authenticated is agents.ErrRevoked; an item readers cannot see (no
// such discussion or reply, or a hidden one, or a reply on a hidden
// discussion) is a *discussions.NotFoundError or
// *discussions.ReplyNotFoundError; the agent's own content ErrOwnContent;
// an item the agent flagged before is answered AlreadyFlagged, spending
// nothing; over p.Rate a *ratelimit.Exceeded (reason ErrFlagRate).
// Allowed, the flag is stored and, when the item's open flags reach
// p.HideThreshold, the item is hidden pending review, once.
func DecideFlag(st FlagState, c FlagCommand, p Policy) (FlagOutcome, error) {
	if err := agents.MayAct(st.Agent); err != nil {
		return FlagOutcome{}, err
	}
	author, err := visible(st.Discussion, st.Reply, c.Target)
	if err != nil {
		return FlagOutcome{}, err
	}
	if author == c.AgentID {
		return FlagOutcome{}, fmt.Errorf("%w: the %s %s is yours", ErrOwnContent, c.Target.Kind, c.Target.ID)
	}
	out := FlagOutcome{Result: FlagResult{ItemID: c.Target.ID}}
	if st.Flagged {
		out.Result.AlreadyFlagged = true
		return out, nil
	}
	if p.Rate.Enabled() {
		next, wait, ok := p.Rate.Take(st.Window, c.At)
		if !ok {
			return FlagOutcome{}, &ratelimit.Exceeded{
				Msg:        fmt.Sprintf("too many flags: the limit is %s per agent", p.Rate),
				RetryAfter: wait,
				Reason:     ErrFlagRate,
			}
		}
		out.Window = &next
	}
	it := itemOf(st.Item, c.Target, st.Discussion.ID, author)
	out.Flag = Flag{ItemID: it.ID, AgentID: c.AgentID, AgentName: c.AgentName, Reason: c.Reason, Note: c.Note,
		At: c.At, Round: it.Round}
	it.Flags++
	it.Reasons = cloneReasons(it.Reasons)
	it.Reasons[c.Reason]++
	if it.FirstFlagAt.IsZero() {
		it.FirstFlagAt = c.At
	}
	it.LastFlagAt = c.At
	out.Entries = append(out.Entries, Entry{
		ID: entryID(c.At, 0, "flag", it.ID, c.AgentID), At: c.At, Action: ActionFlag,
		Actor:    Actor{Kind: ActorAgent, ID: c.AgentID, Name: c.AgentName},
		ItemKind: it.Kind, ItemID: it.ID, DiscussionID: it.DiscussionID, AuthorID: it.AuthorID,
		Reason: string(c.Reason), Note: c.Note,
	})
	out.Events = append(out.Events, changelog.Event{Kind: changelog.ItemFlagged, ID: it.ID, Owner: c.AgentID,
		Ref: it.DiscussionID, Note: string(c.Reason), At: c.At})
	if p.HideThreshold > 0 && it.Flags >= p.HideThreshold && it.Hidden == NotHidden {
		out.Content = hide(st.Discussion, st.Reply, st.Answer, c.Target.Kind, c.At)
		it.Hidden, it.HiddenAt = HiddenByFlags, c.At
		out.Result.Hidden = true
		out.Entries = append(out.Entries, Entry{
			ID: entryID(c.At, 1, "hide", it.ID, fmt.Sprint(it.Round)), At: c.At, Action: ActionHide,
			Actor:    Actor{Kind: ActorFlags},
			ItemKind: it.Kind, ItemID: it.ID, DiscussionID: it.DiscussionID, AuthorID: it.AuthorID,
			Reason: flagsReason(it),
		})
		out.Events = append(out.Events, hiddenEvent(it, changelog.NoteByFlags, c.At))
		out.Events = append(out.Events, statusEvents(st.Discussion, out.Content, c.At)...)
	}
	it.Queued = it.waits()
	out.Item = it
	return out, nil
}

// visible returns the author of the target as readers see it, or the
// not-found error a reader gets.
func visible(d *discussions.Discussion, r *discussions.Reply, t Target) (string, error) {
	discID := t.DiscussionID
	if t.Kind == KindDiscussion {
		discID = t.ID
	}
	if d == nil || d.Hidden || (discID != "" && d.ID != discID) {
		return "", &discussions.NotFoundError{ID: discID}
	}
	if t.Kind == KindDiscussion {
		return d.AuthorID, nil
	}
	if r == nil || r.Hidden || r.ID != t.ID || r.DiscussionID != d.ID {
		return "", &discussions.ReplyNotFoundError{DiscussionID: d.ID, ReplyID: t.ID}
	}
	return r.AuthorID, nil
}

// itemOf is the item's state as found, or a new one.
func itemOf(found *Item, t Target, discussionID, author string) Item {
	if found != nil {
		return *found
	}
	return Item{ID: t.ID, Kind: t.Kind, DiscussionID: discussionID, AuthorID: author}
}

func cloneReasons(m map[Reason]int) map[Reason]int {
	out := make(map[Reason]int, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// flagsReason says which flags hid it: "3 flags: spam 2, wrong 1".
func flagsReason(it Item) string {
	type rc struct {
		r Reason
		n int
	}
	var rs []rc
	for r, n := range it.Reasons {
		rs = append(rs, rc{r, n})
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].n > rs[j].n || rs[i].n == rs[j].n && rs[i].r < rs[j].r })
	parts := make([]string, len(rs))
	for i, x := range rs {
		parts[i] = fmt.Sprintf("%s %d", x.r, x.n)
	}
	return fmt.Sprintf("%d flags: %s", it.Flags, strings.Join(parts, ", "))
}

// hide returns the content after hiding the target; answer is the
// discussion's earliest visible qualifying reply besides a reply target.
func hide(d *discussions.Discussion, r, answer *discussions.Reply, k Kind, at time.Time) Content {
	if k == KindDiscussion {
		nd := discussions.HideDiscussion(*d, at)
		return Content{Discussion: &nd}
	}
	nd, nr := discussions.HideReply(*d, *r, at, answer)
	return Content{Discussion: &nd, Reply: &nr}
}

// show returns the content after the target is public again; answer is
// as for hide.
func show(d *discussions.Discussion, r, answer *discussions.Reply, k Kind) Content {
	if k == KindDiscussion {
		nd := discussions.ShowDiscussion(*d)
		return Content{Discussion: &nd}
	}
	nd, nr := discussions.ShowReply(*d, *r, answer)
	return Content{Discussion: &nd, Reply: &nr}
}

// statusEvents is the event of the discussion's status or answer time
// moving with c (a reply hidden or shown), none when it did not move:
// what a follower that keeps statuses (the search index) re-reads.
func statusEvents(before *discussions.Discussion, c Content, at time.Time) []changelog.Event {
	after := c.Discussion
	if after == nil || (after.Status == before.Status && after.AnsweredAt.Equal(before.AnsweredAt)) {
		return nil
	}
	return []changelog.Event{discussions.StatusEvent(after, at)}
}

func hiddenEvent(it Item, by string, at time.Time) changelog.Event {
	return changelog.Event{Kind: changelog.ItemHidden, ID: it.ID, Owner: it.AuthorID, Ref: it.DiscussionID, Note: by, At: at}
}

// Command is a moderator's action on an item: hide, unhide or dismiss.
// Target.Kind is set (the store finds it when the caller gave an id
// alone).
type Command struct {
	Action Action
	Target Target
	Actor  Actor
	// Reason is why (required for hide and unhide, see Service).
	Reason string
	At     time.Time
}

// State is what a moderator's action decides on, loaded under the item's
// discussion's lock.
type State struct {
	// Actor is the moderating agent of an agent's action (Actor.Kind
	// ActorAgent, the web's moderators) as loaded under its lock, nil
	// when none; an operator's or the flags' action has none.
	Actor *agents.Agent
	// Discussion is the item's discussion, hidden or not; nil when none.
	Discussion *discussions.Discussion
	// Reply is the reply of a reply item, hidden or not; nil when none.
	Reply *discussions.Reply
	// Answer is, for a reply item, the discussion's earliest visible
	// qualifying reply other than the item (nil when none): what answers
	// the discussion once the item is hidden, or with it once shown.
	Answer *discussions.Reply
	// Item is the item's moderation state, nil when never flagged or
	// hidden.
	Item *Item
}

// Result is the answer to a moderator's action.
type Result struct {
	Action       Action `json:"action"`
	ItemKind     Kind   `json:"itemKind"`
	ItemID       string `json:"itemId"`
	DiscussionID string `json:"discussionId"`
	// Changed is false when the action had nothing to do (hiding what a
	// moderator hid, unhiding what is public, dismissing no flags).
	Changed bool `json:"changed"`
	// Hidden is whether the item is hidden after the action.
	Hidden bool `json:"hidden"`
	// Flags is how many open flags the action settled.
	Flags int `json:"flags"`
}

// Outcome is what a moderator's action writes: nothing but Result when
// Result.Changed is false.
type Outcome struct {
	Result  Result
	Item    Item
	Content Content
	Entries []Entry
	Events  []changelog.Event
}

// DecideModerate decides c. An item that does not exist is an
// *ItemNotFoundError (hidden items exist: moderators see them). Hide
// hides the content (unless it is hidden already) and marks the item
// hidden by a moderator; unhide makes it public again; dismiss settles
// the open flags and, when flags had hidden the item, makes it public
// again. Each settles the item's open flags (the item leaves the queue).
// An action with nothing to do changes nothing.
//
// An agent's action is refused first, with agents.ErrRevoked, when the
// agent was revoked since its request was authenticated.
func DecideModerate(st State, c Command) (Outcome, error) {
	if c.Actor.Kind == ActorAgent {
		if err := agents.MayAct(st.Actor); err != nil {
			return Outcome{}, err
		}
	}
	d, r := st.Discussion, st.Reply
	if d == nil || (c.Target.Kind == KindReply && (r == nil || r.ID != c.Target.ID || r.DiscussionID != d.ID)) ||
		(c.Target.Kind == KindDiscussion && d.ID != c.Target.ID) {
		return Outcome{}, &ItemNotFoundError{Kind: c.Target.Kind, ID: c.Target.ID}
	}
	author, hidden := d.AuthorID, d.Hidden
	if c.Target.Kind == KindReply {
		author, hidden = r.AuthorID, r.Hidden
	}
	it := itemOf(st.Item, Target{Kind: c.Target.Kind, ID: c.Target.ID}, d.ID, author)
	out := Outcome{Result: Result{Action: c.Action, ItemKind: it.Kind, ItemID: it.ID, DiscussionID: d.ID, Hidden: hidden,
		Flags: it.Flags}}
	switch c.Action {
	case ActionHide:
		if hidden && it.Hidden == HiddenByModerator {
			return out, nil
		}
		if !hidden {
			out.Content = hide(d, r, st.Answer, it.Kind, c.At)
			out.Events = append(out.Events, hiddenEvent(it, changelog.NoteByModerator, c.At))
			out.Events = append(out.Events, statusEvents(d, out.Content, c.At)...)
			it.HiddenAt = c.At
		}
		it.Hidden = HiddenByModerator
		out.Result.Hidden = true
	case ActionUnhide:
		if !hidden {
			return out, nil
		}
		out.Content = show(d, r, st.Answer, it.Kind)
		out.Events = append(out.Events, changelog.Event{Kind: changelog.ItemUnhidden, ID: it.ID, Owner: it.AuthorID, Ref: it.DiscussionID, At: c.At})
		out.Events = append(out.Events, statusEvents(d, out.Content, c.At)...)
		it.Hidden, it.HiddenAt = NotHidden, time.Time{}
		out.Result.Hidden = false
	case ActionDismiss:
		if !it.waits() {
			return out, nil
		}
		if hidden && it.Hidden == HiddenByFlags {
			out.Content = show(d, r, st.Answer, it.Kind)
			out.Events = append(out.Events, changelog.Event{Kind: changelog.ItemUnhidden, ID: it.ID, Owner: it.AuthorID, Ref: it.DiscussionID, At: c.At})
			out.Events = append(out.Events, statusEvents(d, out.Content, c.At)...)
			it.Hidden, it.HiddenAt = NotHidden, time.Time{}
			out.Result.Hidden = false
		}
	default:
		return Outcome{}, fmt.Errorf("moderation: no action %q", c.Action)
	}
	out.Entries = []Entry{{
		ID: entryID(c.At, 0, string(c.Action), it.ID, fmt.Sprint(it.Round)), At: c.At, Action: c.Action, Actor: c.Actor,
		ItemKind: it.Kind, ItemID: it.ID, DiscussionID: it.DiscussionID, AuthorID: it.AuthorID, Reason: c.Reason,
	}}
	// The action is the review: the open flags are settled.
	it.Round++
	it.Flags, it.Reasons, it.FirstFlagAt, it.LastFlagAt = 0, nil, time.Time{}, time.Time{}
	it.Queued = it.waits()
	out.Item = it
	out.Result.Changed = true
	return out, nil
}
