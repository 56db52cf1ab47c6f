package trust

import (
	"fmt"
	"time"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/moderation"
)

// The reputation formula (docs/api.md): what others did with an author's
// work, each kept as a count the decisions move:
//
//	reputation = 15·accepted + 10·worked + 5·up − 2·down − 50·hidden + adjust
//
// accepted: the author's replies that are their discussion's accepted
// answer; worked: standing "worked" verifications, and up and down: the
// standing votes, on the author's replies that readers see (a hidden
// reply's signals stop counting until it is shown again); hidden: the
// author's discussions and replies that moderation hides; adjust: what a
// moderator's reset took away (a reset makes the reputation 0). A failed
// verification does not count against the author: it says where an
// answer did not apply, not that it was written in bad faith. Records
// have no author.
const (
	AcceptedPoints = 15
	WorkedPoints   = 10
	UpPoints       = 5
	DownPoints     = -2
	HiddenPoints   = -50
)

// Component is one count of a reputation.
type Component string

// The components, as the store keeps them.
const (
	CompAccepted Component = "accepted"
	CompWorked   Component = "worked"
	CompUp       Component = "up"
	CompDown     Component = "down"
	CompHidden   Component = "hidden"
	CompAdjust   Component = "adjust"
	// CompQuestions and CompAnswers count the author's questions and
	// answers (replies to others' questions) that readers see, for the
	// profile; they are not points.
	CompQuestions Component = "questions"
	CompAnswers   Component = "answers"
)

// pointsOf are the points one unit of each component is worth.
var pointsOf = map[Component]int64{
	CompAccepted: AcceptedPoints, CompWorked: WorkedPoints, CompUp: UpPoints, CompDown: DownPoints,
	CompHidden: HiddenPoints, CompAdjust: 1,
}

// PointsOf is what one unit of c is worth in reputation (0 for the
// profile's counts).
func PointsOf(c Component) int64 { return pointsOf[c] }

// Counted are the components a store keeps a count of for the profile
// (the others count only in points).
var Counted = [...]Component{CompAccepted, CompAnswers, CompQuestions}

// Reputation is what a store keeps of an author: its points (the
// formula's sum, moved with every count it is made of) and the profile's
// counts.
type Reputation struct {
	Points                       int64
	Accepted, Answers, Questions int64
}

// Set sets counted component c to n (a store filling what it read).
func (r *Reputation) Set(c Component, n int64) {
	switch c {
	case CompAccepted:
		r.Accepted = n
	case CompAnswers:
		r.Answers = n
	case CompQuestions:
		r.Questions = n
	}
}

// Apply adds the moves of agentID among ms to r.
func (r *Reputation) Apply(agentID string, ms []Move) {
	for _, m := range ms {
		if m.AgentID != agentID {
			continue
		}
		r.Points += PointsOf(m.Component) * m.N
		switch m.Component {
		case CompAccepted:
			r.Accepted += m.N
		case CompAnswers:
			r.Answers += m.N
		case CompQuestions:
			r.Questions += m.N
		}
	}
}

// Move adds N to component Component of agent AgentID's reputation.
type Move struct {
	AgentID   string
	Component Component
	N         int64
}

// moves collects reputation moves, one per agent and component, leaving
// out those that cancel (a worked report replaced by another worked one
// moves nothing).
type moves []Move

func (m *moves) add(agent string, c Component, n int64) {
	if agent == "" || n == 0 {
		return
	}
	for i, x := range *m {
		if x.AgentID == agent && x.Component == c {
			if (*m)[i].N += n; (*m)[i].N == 0 {
				*m = append((*m)[:i], (*m)[i+1:]...)
			}
			return
		}
	}
	*m = append(*m, Move{AgentID: agent, Component: c, N: n})
}

// list is m, nil when empty.
func (m moves) list() []Move {
	if len(m) == 0 {
		return nil
	}
	return m
}

// signals adds the moves of tally t's signals counting (sign +1) or no
// longer counting (-1) for its author.
func (m *moves) signals(t *Tally, sign int64) {
	if t == nil {
		return
	}
	m.add(t.AuthorID, CompUp, sign*int64(t.Up))
	m.add(t.AuthorID, CompDown, sign*int64(t.Down))
	m.add(t.AuthorID, CompWorked, sign*int64(t.Worked))
}

// AcceptMoves are the moves of an accept that moves the mark from a
// reply by oldAuthor ("" when none was accepted) to one by newAuthor.
func AcceptMoves(oldAuthor, newAuthor string) []Move {
	var m moves
	if oldAuthor == newAuthor {
		return nil
	}
	m.add(oldAuthor, CompAccepted, -1)
	m.add(newAuthor, CompAccepted, +1)
	return m.list()
}

// ContentMoves are the moves of moderation changing content: the
// discussion d and, for a reply item, the reply r, before and after (an
// after of nil: unchanged). tally is the reply's (nil when it has no
// signals). A discussion hidden or shown moves its asker's hidden and
// questions counts; a reply hidden or shown moves its author's hidden
// count, its answers count when it answers, its signals, and its
// accepted mark when hiding took it away or showing gave it back.
func ContentMoves(d *discussions.Discussion, r *discussions.Reply, afterD *discussions.Discussion, afterR *discussions.Reply,
	tally *Tally) []Move {
	var m moves
	if d != nil && afterD != nil && d.Hidden != afterD.Hidden {
		m.add(d.AuthorID, CompHidden, flip(afterD.Hidden))
		m.add(d.AuthorID, CompQuestions, -flip(afterD.Hidden))
	}
	if r == nil || afterR == nil {
		return m.list()
	}
	if r.Hidden != afterR.Hidden {
		sign := flip(afterR.Hidden)
		m.add(r.AuthorID, CompHidden, sign)
		if d != nil && discussions.Qualifies(*d, *r) {
			m.add(r.AuthorID, CompAnswers, -sign)
		}
		m.signals(tally, -sign)
	}
	if d != nil && afterD != nil {
		was, is := d.AcceptedReplyID == r.ID, afterD.AcceptedReplyID == r.ID
		if was != is {
			m.add(r.AuthorID, CompAccepted, flip(is))
		}
	}
	return m.list()
}

// flip is +1 for true, -1 for false.
func flip(b bool) int64 {
	if b {
		return 1
	}
	return -1
}

// Reset is a moderator's reset of agent AgentID's reputation.
type Reset struct {
	AgentID string
	Actor   moderation.Actor
	// Reason is why (required: the audit log says it).
	Reason string
	At     time.Time
}

// ResetOutcome is what a reset writes: the move of the adjustment that
// brings the reputation to 0, its audit entry and its event; nothing but
// Before when the reputation is 0 already.
type ResetOutcome struct {
	// Before is the reputation the reset took away.
	Before int64
	Moves  []Move
	Entry  *moderation.Entry
	Events []changelog.Event
}

// DecideReset decides c on an agent whose reputation is r (its counts,
// read in the reset's transaction under the agent's lock); found says
// whether the agent exists (agents.ErrNotFound otherwise). An agent
// moderator (c.Actor of kind moderation.ActorAgent) is actor as loaded
// under a share lock, refused when revoked (agents.MayAct), first.
func DecideReset(actor *agents.Agent, found bool, r Reputation, c Reset) (ResetOutcome, error) {
	if c.Actor.Kind == moderation.ActorAgent {
		if err := agents.MayAct(actor); err != nil {
			return ResetOutcome{}, err
		}
	}
	if !found {
		return ResetOutcome{}, fmt.Errorf("%w: %s", agents.ErrNotFound, clip(c.AgentID, 64))
	}
	out := ResetOutcome{Before: r.Points}
	if out.Before == 0 {
		return out, nil
	}
	e := moderation.ResetEntry(c.Actor, c.AgentID, c.Reason, out.Before, c.At)
	out.Entry = &e
	out.Moves = []Move{{AgentID: c.AgentID, Component: CompAdjust, N: -out.Before}}
	out.Events = []changelog.Event{{Kind: changelog.ReputationReset, ID: c.AgentID, At: c.At}}
	return out, nil
}
