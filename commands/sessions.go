package commands

import (
	"context"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/sessions"
	"github.com/kfa-project/kfa/storage"
)

// CreateSession implements sessions.Store: the agent under a share lock,
// the sessions that expire first, sessions.DecideCreate, the purge and the session.
func (c *Commands) CreateSession(ctx context.Context, s sessions.Session) error {
	var (
		agent  *agents.Agent
		oldest []sessions.Session
	)
	return c.e.Run(ctx, storage.Command{Name: CmdCreateSession,
		Load: func(l storage.Loader) error {
			actingAgent(l, s.AgentID, &agent)
			storage.Many(l, SessionsByExpiry, nil, sessions.PurgeBatch, storage.Read, &oldest)
			return nil
		},
		Decide: func() (*storage.Writes, error) {
			out, err := sessions.DecideCreate(agent, oldest, s)
			if err != nil {
				return nil, err
			}
			w := &storage.Writes{}
			for i := range out.Purge {
				storage.Delete(w, Sessions, &out.Purge[i])
			}
			storage.Put(w, Sessions, nil, &out.Session)
			return w, nil
		}})
}

// DeleteSession implements sessions.Store: the session,
// sessions.DecideEnd, its delete.
func (c *Commands) DeleteSession(ctx context.Context, d sessions.Digest) error {
	var found *sessions.Session
	return c.e.Run(ctx, storage.Command{Name: CmdEndSession,
		Load: func(l storage.Loader) error {
			storage.One(l, Sessions, k(string(d[:])), storage.Lock, &found)
			return nil
		},
		Decide: func() (*storage.Writes, error) {
			if !sessions.DecideEnd(found) {
				return nil, nil
			}
			w := &storage.Writes{}
			storage.Delete(w, Sessions, found)
			return w, nil
		}})
}
