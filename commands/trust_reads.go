package commands

import (
	"context"
	"fmt"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/storage"
	"github.com/kfa-project/kfa/trust"
)

// Board implements trust.Store in one read (one round trip on
// PostgreSQL): the items' tallies, each one's newest failed reports, the
// voter's votes on them, and the agents' reputations.
func (c *Commands) Board(ctx context.Context, q trust.BoardQuery) (trust.Board, error) {
	var (
		tallies  []trust.Tally
		mine     []trust.Vote
		failures = make([][]trust.Verification, len(q.Items))
		reps     = make([]repRead, len(q.Agents))
	)
	err := c.e.View(ctx, CmdRead, func(l storage.Loader) error {
		keys := make([]storage.Key, len(q.Items))
		for i, it := range q.Items {
			keys[i] = itemKey(it)
		}
		if len(keys) > 0 {
			storage.All(l, Tallies, keys, storage.Read, &tallies)
		}
		if q.Failures > 0 {
			for i, it := range q.Items {
				failures[i] = failures[i][:0]
				l.Range(storage.Range{Index: VerificationsByOutcome, Prefix: itemKey(it, string(trust.Failed)), Of: storage.NoRef,
					Limit: q.Failures, Reverse: true, Dst: &failures[i]})
			}
		}
		if q.Voter != "" && len(q.Items) > 0 {
			votes := make([]storage.Key, len(q.Items))
			for i, it := range q.Items {
				votes[i] = itemKey(it, q.Voter)
			}
			storage.All(l, Votes, votes, storage.Read, &mine)
		}
		for i, a := range q.Agents {
			loadReputation(l, a, &reps[i])
		}
		return nil
	})
	if err != nil {
		return trust.Board{}, fmt.Errorf("commands: read signals: %w", err)
	}
	b := trust.Board{Items: make(map[trust.Item]trust.Signals, len(tallies)), Reputations: make(map[string]trust.Reputation, len(q.Agents)),
		Mine: make(map[trust.Item]int, len(mine))}
	byKey := make(map[trust.Item]int, len(q.Items))
	for i, it := range q.Items {
		byKey[normal(it)] = i
	}
	for _, t := range tallies {
		i, ok := byKey[normal(t.Item)]
		if !ok {
			continue
		}
		b.Items[q.Items[i]] = trust.Signals{Tally: t, Failures: failures[i]}
	}
	for i, it := range q.Items {
		if _, ok := b.Items[it]; !ok && len(failures[i]) > 0 {
			b.Items[it] = trust.Signals{Tally: trust.Tally{Item: it}, Failures: failures[i]}
		}
	}
	for _, v := range mine {
		if i, ok := byKey[normal(v.Item)]; ok {
			b.Mine[q.Items[i]] = v.Value
		}
	}
	for i, a := range q.Agents {
		b.Reputations[a] = reps[i].reputation()
	}
	return b, nil
}

// normal is an item as its key names it: a reply by its id (its key
// leaves the discussion out), so that an item read back matches the one
// asked for.
func normal(it trust.Item) trust.Item { return trust.Item{Kind: it.Kind, ID: it.ID} }

// Profile implements trust.Store in two reads: the agent, its reputation
// and its newest posts; then their discussions and replies, to leave out
// what readers do not see.
func (c *Commands) Profile(ctx context.Context, agentID string, recent int) (trust.Profile, error) {
	var (
		ag      *agents.Agent
		rep     repRead
		posts   []trust.Post
		discs   []discussions.Discussion
		replies []discussions.Reply
	)
	err := c.e.View(ctx, CmdRead, func(l storage.Loader) error {
		storage.One(l, Agents, k(agentID), storage.Read, &ag)
		loadReputation(l, agentID, &rep)
		posts = posts[:0]
		l.Range(storage.Range{Index: Posts.Keys(), Prefix: k(agentID), Of: storage.NoRef, Limit: recent, Reverse: true, Dst: &posts})
		if err := l.Flush(); err != nil {
			return err
		}
		var dk, rk []storage.Key
		for _, p := range posts {
			dk = append(dk, k(p.DiscussionID))
			if p.Kind == trust.PostAnswer {
				rk = append(rk, k(p.DiscussionID, p.ID))
			}
		}
		if len(dk) > 0 {
			storage.All(l, Discussions, dk, storage.Read, &discs)
		}
		if len(rk) > 0 {
			storage.All(l, Replies, rk, storage.Read, &replies)
		}
		return nil
	})
	if err != nil {
		return trust.Profile{}, fmt.Errorf("commands: read the profile of %s: %w", agentID, err)
	}
	if ag == nil {
		return trust.Profile{}, fmt.Errorf("%w: %s", agents.ErrNotFound, agentID)
	}
	dm := make(map[string]discussions.Discussion, len(discs))
	for _, d := range discs {
		dm[d.ID] = d
	}
	rm := make(map[string]discussions.Reply, len(replies))
	for _, r := range replies {
		rm[r.ID] = r
	}
	return trust.ProfileOf(ag.ID, ag.Name, ag.CreatedAt, rep.reputation(), posts, dm, rm), nil
}
