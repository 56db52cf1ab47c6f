package commands

import (
	"context"
	"time"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/storage"
)

// AckInbox implements discussions.Store: the agent under a share lock,
// its entries among ids under their locks, discussions.DecideAck, the entries it acknowledges.
// It touches inbox entries only.
func (c *Commands) AckInbox(ctx context.Context, agentID string, ids []string, at time.Time) (discussions.AckResult, error) {
	keys := make([]storage.Key, len(ids))
	for i, id := range ids {
		keys[i] = k(agentID, id)
	}
	var (
		agent   *agents.Agent
		entries []discussions.InboxEntry
		out     discussions.AckOutcome
	)
	err := c.e.Run(ctx, storage.Command{Name: CmdAck,
		Load: func(l storage.Loader) error {
			actingAgent(l, agentID, &agent)
			storage.All(l, Inbox, keys, storage.Lock, &entries)
			return nil
		},
		Decide: func() (*storage.Writes, error) {
			found := make(map[string]discussions.InboxEntry, len(entries))
			loaded := make(map[string]*discussions.InboxEntry, len(entries))
			for i := range entries {
				found[entries[i].ID], loaded[entries[i].ID] = entries[i], &entries[i]
			}
			var err error
			if out, err = discussions.DecideAck(agent, agentID, ids, found, at); err != nil {
				return nil, err
			}
			w := &storage.Writes{}
			for i := range out.Acked {
				storage.Put(w, Inbox, loaded[out.Acked[i].ID], &out.Acked[i])
			}
			return w, nil
		}})
	return out.Result, err
}
