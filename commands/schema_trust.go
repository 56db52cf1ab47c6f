package commands

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/kfa-project/kfa/storage"
	"github.com/kfa-project/kfa/trust"
)

// The kinds of the trust signals (package trust). No store maps them:
// each is described here once, with its codec, and every store keeps it
// generically.

// jsonCodec keeps a kind's records as JSON documents.
func jsonCodec[T any](what string) storage.Codec[T] {
	return storage.Codec[T]{
		Encode: func(t *T) ([]byte, error) { return json.Marshal(t) },
		Decode: func(_ storage.Key, v []byte) (T, error) {
			var t T
			if err := json.Unmarshal(v, &t); err != nil {
				return t, fmt.Errorf("decode %s: %w", what, err)
			}
			return t, nil
		},
	}
}

// itemKey is an item's key: its kind, then its id (a reply's id alone
// names it: reply ids are ULIDs).
func itemKey(it trust.Item, more ...string) storage.Key {
	return append(k(string(it.Kind), it.ID), more...)
}

// Votes are the standing votes, by item and agent.
var Votes = storage.NewKind("trust.vote", func(v *trust.Vote) storage.Key { return itemKey(v.Item, v.AgentID) },
	jsonCodec[trust.Vote]("vote"))

// Verifications are the standing reports, by item and agent.
var Verifications = storage.NewKind("trust.verification",
	func(v *trust.Verification) storage.Key { return itemKey(v.Item, v.AgentID) }, jsonCodec[trust.Verification]("verification"))

// VerificationsByOutcome lists an item's reports by outcome, in time
// order: the newest "worked" ones (LastWorkedAt) and the newest failed
// ones (shown under the answer) are a reverse walk of a few.
var VerificationsByOutcome = Verifications.Index("trust.verification.outcome",
	func(v *trust.Verification) (storage.Key, bool) {
		return itemKey(v.Item, string(v.Outcome), storage.Millis(v.At)), true
	})

// Tallies are the items' tallies, by item.
var Tallies = storage.NewKind("trust.tally", func(t *trust.Tally) storage.Key { return itemKey(t.Item) },
	jsonCodec[trust.Tally]("tally"))

// Posts are the authors' questions and answers, by author and id (ULIDs:
// key order is time order), for the profile's recent posts.
var Posts = storage.NewKind("trust.post", func(p *trust.Post) storage.Key { return k(p.AgentID, p.ID) },
	jsonCodec[trust.Post]("post"))

// VoteWindows are the agents' vote windows (trust.Limits.Rate's kept
// time), by agent: one window shared by votes and verifications, a kind
// of its own (the stores' rate-window tables know the limits they had).
var VoteWindows = storage.NewKind("trust.window", func(w *Window) storage.Key { return k(w.AgentID) },
	jsonCodec[Window]("vote window"))

// WindowVote names the vote window's limit in a Window.
const WindowVote = "v"

// putVoteWindow adds the write of agent's vote window, moved on to next
// by a decision (nil: not rate limited); old is the window as loaded.
func putVoteWindow(w *storage.Writes, old *Window, agent string, next *time.Time) {
	if next != nil {
		storage.Put(w, VoteWindows, old, &Window{Limit: WindowVote, AgentID: agent, At: *next})
	}
}

// A reputation is kept in counters, which a store keeps at 0 or more: its
// points as two sums, of what raised them and of what lowered them (each
// only ever grows), and each counted component (trust.Counted, a count
// of what stands: never below 0).
func pointsUp(agent string) string { return "rep/" + agent + "/+" }

func pointsDown(agent string) string { return "rep/" + agent + "/-" }

func countCounter(agent string, c trust.Component) string { return "rep/" + agent + "/" + string(c) }

// addMoves adds the counter moves of reputation moves ms: each agent's
// points move once, by their sum, and a counted component's count too.
func addMoves(w *storage.Writes, ms []trust.Move) {
	var agents []string
	points := map[string]int64{}
	for _, m := range ms {
		if _, ok := points[m.AgentID]; !ok {
			agents = append(agents, m.AgentID)
		}
		points[m.AgentID] += trust.PointsOf(m.Component) * m.N
		for _, c := range trust.Counted {
			if c == m.Component {
				w.Add(countCounter(m.AgentID, c), m.N)
			}
		}
	}
	for _, a := range agents {
		switch p := points[a]; {
		case p > 0:
			w.Add(pointsUp(a), p)
		case p < 0:
			w.Add(pointsDown(a), -p)
		}
	}
}

// repRead is what loadReputation reads of one agent.
type repRead struct {
	up, down int64
	counts   [len(trust.Counted)]int64
}

// loadReputation queues the reads of agent's reputation into r.
func loadReputation(l storage.Loader, agent string, r *repRead) {
	l.Counter(pointsUp(agent), &r.up)
	l.Counter(pointsDown(agent), &r.down)
	for i, c := range trust.Counted {
		l.Counter(countCounter(agent, c), &r.counts[i])
	}
}

// reputation is the reputation r read.
func (r *repRead) reputation() trust.Reputation {
	rep := trust.Reputation{Points: r.up - r.down}
	for i, c := range trust.Counted {
		rep.Set(c, r.counts[i])
	}
	return rep
}
