package search

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/blevesearch/bleve/v2"

	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/knowledge"
	"github.com/kfa-project/kfa/trust"
)

// SignalSource is what the index reads of the trust signals: the items'
// tallies and the authors' reputations, in one snapshot. Both stores
// provide it.
type SignalSource interface {
	Board(ctx context.Context, q trust.BoardQuery) (trust.Board, error)
}

// The signals follow the log like the documents they rank: a vote or a
// verification names its item (a record, or a reply of a discussion) and
// the author whose reputation it moved, and the follower indexes the
// item's record or discussion again, with its tallies read as they are
// now. Reputations change with every signal on any of an author's
// answers, so they are not in the documents (each would be indexed again
// at every vote on another): the index keeps each author's reputation
// beside its documents (an internal key per author, written in the same
// batch as the position), and a hit reads its author's when it is
// answered.

// signalsDoc is what a document stores of its signals (fSignals): a
// record's, or a discussion's answer's, with who wrote it.
type signalsDoc struct {
	// Weight is the tally's trust at trust.Epoch: what hits rank by.
	Weight       float64 `json:"w,omitempty"`
	Up           int     `json:"up,omitempty"`
	Down         int     `json:"down,omitempty"`
	Worked       int     `json:"worked,omitempty"`
	Failed       int     `json:"failed,omitempty"`
	LastWorkedAt string  `json:"last,omitempty"`
	// Reply is the answer of a discussion (the snippet's reply), Author
	// and AuthorName who wrote it (for an open discussion: who asked).
	Reply      string `json:"reply,omitempty"`
	Author     string `json:"author,omitempty"`
	AuthorName string `json:"authorName,omitempty"`
}

func signalsDocOf(t trust.Tally) signalsDoc {
	return signalsDoc{Weight: t.Weight, Up: t.Up, Down: t.Down, Worked: t.Worked, Failed: t.Failed,
		LastWorkedAt: formatTime(t.LastWorkedAt)}
}

func (s signalsDoc) encode() string {
	b, _ := json.Marshal(s) // plain fields: cannot fail
	return string(b)
}

// decodeSignals reads a stored fSignals (zero for a document without).
func decodeSignals(v string) signalsDoc {
	var s signalsDoc
	if v != "" {
		_ = json.Unmarshal([]byte(v), &s) // a document this version wrote; zero otherwise
	}
	return s
}

// hitSignals are s as a hit shows them, trust read at now.
func (s signalsDoc) hitSignals(now time.Time) knowledge.Signals {
	out := knowledge.Signals{Votes: s.Up - s.Down, Trust: trust.TrustAt(s.Weight, now),
		Verifications: knowledge.Verifications{Worked: s.Worked, Failed: s.Failed}}
	out.Verifications.LastWorkedAt, _ = time.Parse(time.RFC3339Nano, s.LastWorkedAt)
	return out
}

// board reads the items' tallies and the agents' reputations, an empty
// board without a source.
func (x *Index) board(ctx context.Context, items []trust.Item, agents []string) (trust.Board, error) {
	if x.o.Signals == nil || len(items) == 0 && len(agents) == 0 {
		return trust.Board{Items: map[trust.Item]trust.Signals{}, Reputations: map[string]trust.Reputation{}}, nil
	}
	b, err := x.o.Signals.Board(ctx, trust.BoardQuery{Items: items, Agents: agents})
	if err != nil {
		return trust.Board{}, fmt.Errorf("search: read the signals: %w", err)
	}
	return b, nil
}

// repPrefix starts the internal key of an author's reputation.
const repPrefix = "kfa:rep:"

// keepReputations writes the reputations of agents, as b read them, into
// the batch.
func keepReputations(batch *bleve.Batch, b trust.Board, agents []string) {
	for _, id := range agents {
		if id != "" {
			batch.SetInternal([]byte(repPrefix+id), []byte(strconv.FormatInt(b.Reputation(id), 10)))
		}
	}
}

// reputation is the reputation the index keeps of agent id (0 for none).
// The caller holds mu for reading.
func (x *Index) reputation(id string) int64 {
	v, err := x.rec.GetInternal([]byte(repPrefix + id))
	if err != nil || len(v) == 0 {
		return 0
	}
	n, _ := strconv.ParseInt(string(v), 10, 64)
	return n
}

// refreshReputations reads the reputations of agents (in reads of at
// most trust.MaxAgents) and writes them into batch. The caller holds
// writeMu.
func (x *Index) refreshReputations(ctx context.Context, batch *bleve.Batch, agents []string) error {
	for len(agents) > 0 {
		n := min(len(agents), trust.MaxAgents)
		b, err := x.board(ctx, nil, agents[:n])
		if err != nil {
			return err
		}
		keepReputations(batch, b, agents[:n])
		agents = agents[n:]
	}
	return nil
}

// answerOf is the reply an answered discussion shows as its answer among
// replies (those the index keeps): the accepted one, else the answer
// (a reply by someone other than the asker) with the most trust when one
// has more than none, else the first answer; nil when no reply answers.
func answerOf(d discussions.Discussion, replies []discussions.Reply, b trust.Board) *discussions.Reply {
	var first, best *discussions.Reply
	bestW := 0.0
	for i := range replies {
		r := &replies[i]
		if r.ID == d.AcceptedReplyID {
			return r
		}
		if !discussions.Qualifies(d, *r) {
			continue
		}
		if first == nil {
			first = r
		}
		if w := b.Of(trust.ReplyItem(d.ID, r.ID)).Tally.Weight; w > bestW {
			best, bestW = r, w
		}
	}
	if best != nil {
		return best
	}
	return first
}
