package commands

import (
	"context"
	"slices"
	"time"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/storage"
)

// maxCredentials bounds the credentials a command loads of one agent: a
// rotation keeps the previous ones for a grace period only.
const maxCredentials = 1000

// The advisory locks of the agents' commands: a name's, held by a create
// (and a provisioning) until it commits, so that two creates of one name,
// on any process, decide one after the other; an identity's, taken
// before any other lock of a link or a provisioning, so that two first
// tokens of one identity make one agent.
func nameLock(key string) string { return "agent name|" + key }
func identityLock(id agents.Identity) string {
	return "agent identity|" + id.Issuer + "\n" + id.Subject
}
func identityKey(id agents.Identity) storage.Key { return k(id.Issuer, id.Subject) }

// CreateAgent implements agents.Store: the name's lock and the agents of
// the name, agents.DecideCreate, the agent and its first credential.
func (c *Commands) CreateAgent(ctx context.Context, cr agents.Create) error {
	key := agents.NameKey(cr.Agent.Name)
	var same []storage.Key
	return c.e.Run(ctx, storage.Command{Name: CmdCreateAgent,
		Load: func(l storage.Loader) error {
			l.Lock(nameLock(key))
			storage.Entries(l, AgentsByName, k(key), 1, &same)
			return nil
		},
		Decide: func() (*storage.Writes, error) {
			out, err := agents.DecideCreate(agentIDs(same), cr)
			if err != nil {
				return nil, err
			}
			w := &storage.Writes{}
			storage.Put(w, Agents, nil, &out.Agent)
			storage.Put(w, Credentials, nil, &out.Credential)
			w.Log(out.Agent.CreatedAt, out.Events...)
			return w, nil
		}})
}

// agentIDs are the agents' ids of index entries (the record's key last).
func agentIDs(entries []storage.Key) []string {
	ids := make([]string, len(entries))
	for i, e := range entries {
		ids[i] = e[len(e)-1]
	}
	return ids
}

// credentialState queues the loads of a credential command: the agent
// under its lock, and its credentials.
type credentialState struct {
	agent *agents.Agent
	creds []agents.Credential
}

func (s *credentialState) load(l storage.Loader, id string) {
	storage.One(l, Agents, k(id), storage.Lock, &s.agent)
	storage.Many(l, CredentialsByAgent, k(id), maxCredentials, storage.Read, &s.creds)
}

func (s *credentialState) state() agents.CredentialState {
	return agents.CredentialState{Agent: s.agent, Credentials: s.creds}
}

// deleteCredentials adds the deletes of the loaded credentials ds names.
func (s *credentialState) deleteCredentials(w *storage.Writes, ds []agents.Digest) {
	for _, d := range ds {
		if i := slices.IndexFunc(s.creds, func(c agents.Credential) bool { return c.Digest == d }); i >= 0 {
			storage.Delete(w, Credentials, &s.creds[i])
		}
	}
}

// loaded is the loaded credential of digest d (nil: none).
func (s *credentialState) loaded(d agents.Digest) *agents.Credential {
	if i := slices.IndexFunc(s.creds, func(c agents.Credential) bool { return c.Digest == d }); i >= 0 {
		return &s.creds[i]
	}
	return nil
}

// RotateCredential implements agents.Store: the agent under its lock and
// its credentials, agents.DecideRotate, the credentials' ends, keeps and
// the new one.
func (c *Commands) RotateCredential(ctx context.Context, cred agents.Credential, keepUntil time.Time) (agents.Agent, error) {
	var (
		st  credentialState
		out agents.RotateOutcome
	)
	err := c.e.Run(ctx, storage.Command{Name: CmdRotateAgent,
		Load: func(l storage.Loader) error { st.load(l, cred.AgentID); return nil },
		Decide: func() (*storage.Writes, error) {
			var err error
			if out, err = agents.DecideRotate(st.state(), cred, keepUntil); err != nil {
				return nil, err
			}
			w := &storage.Writes{}
			st.deleteCredentials(w, out.Delete)
			for i := range out.Keep {
				storage.Put(w, Credentials, st.loaded(out.Keep[i].Digest), &out.Keep[i])
			}
			storage.Put(w, Credentials, nil, &out.Add)
			w.Log(cred.CreatedAt, out.Events...)
			return w, nil
		}})
	return out.Agent, err
}

// RevokeAgent implements agents.Store: the agent under its lock and its
// credentials, agents.DecideRevoke, the agent and its credentials' ends.
func (c *Commands) RevokeAgent(ctx context.Context, id string, at time.Time) (agents.Agent, error) {
	var (
		st  credentialState
		out agents.RevokeOutcome
	)
	err := c.e.Run(ctx, storage.Command{Name: CmdRevokeAgent,
		Load: func(l storage.Loader) error { st.load(l, id); return nil },
		Decide: func() (*storage.Writes, error) {
			var err error
			if out, err = agents.DecideRevoke(st.state(), at); err != nil || !out.Changed {
				return nil, err
			}
			w := &storage.Writes{}
			st.deleteCredentials(w, out.Delete)
			storage.Put(w, Agents, st.agent, &out.Agent)
			w.Log(at, out.Events...)
			return w, nil
		}})
	return out.Agent, err
}

// LinkAgent implements agents.Store: the identity's lock and the agent
// it is linked to, then the agent and that one under their locks, in id
// order (the one order two agents are locked in); agents.DecideLink; the
// agent and, when the identity moves off a revoked one, that agent too.
// The agent linked is found before the locks are taken (a second round
// trip on PostgreSQL: an operator's action), so that two links never lock
// two agents in opposite orders.
func (c *Commands) LinkAgent(ctx context.Context, lk agents.Link) (agents.LinkOutcome, error) {
	var (
		linked []storage.Key
		locked []agents.Agent
		st     agents.LinkState
		out    agents.LinkOutcome
	)
	err := c.e.Run(ctx, storage.Command{Name: CmdLinkAgent,
		Load: func(l storage.Loader) error {
			l.Lock(identityLock(lk.Identity))
			storage.Entries(l, AgentsByIdentity, identityKey(lk.Identity), 1, &linked)
			if err := l.Flush(); err != nil {
				return err
			}
			keys := []storage.Key{k(lk.AgentID)}
			if ids := agentIDs(linked); len(ids) > 0 {
				keys = append(keys, k(ids[0]))
			}
			storage.All(l, Agents, keys, storage.Lock, &locked)
			return nil
		},
		Decide: func() (*storage.Writes, error) {
			st = agents.LinkState{}
			ids := agentIDs(linked)
			for i := range locked {
				if locked[i].ID == lk.AgentID {
					st.Agent = &locked[i]
				}
				if len(ids) > 0 && locked[i].ID == ids[0] {
					st.Linked = &locked[i]
				}
			}
			var err error
			if out, err = agents.DecideLink(st, lk); err != nil || !out.Changed {
				return nil, err
			}
			w := &storage.Writes{}
			if out.Replaced != nil { // the identity leaves it first
				storage.Put(w, Agents, st.Linked, out.Replaced)
			}
			storage.Put(w, Agents, st.Agent, &out.Agent)
			w.Log(lk.At, out.Events...)
			return w, nil
		}})
	return out, err
}

// ProvisionAgent implements agents.Store: the identity's lock and its
// agent, the names' locks (in one order, so that two provisionings whose
// names overlap never wait on each other in opposite orders) and whether
// each is taken, agents.DecideProvision, the agent, linked.
func (c *Commands) ProvisionAgent(ctx context.Context, p agents.Provision) (agents.Agent, bool, error) {
	var (
		linked []agents.Agent
		taken  = make([][]storage.Key, len(p.Names))
		out    agents.ProvisionOutcome
	)
	keys := make([]string, len(p.Names))
	for i, n := range p.Names {
		keys[i] = agents.NameKey(n)
	}
	err := c.e.Run(ctx, storage.Command{Name: CmdProvisionAgent,
		Load: func(l storage.Loader) error {
			l.Lock(identityLock(p.Identity))
			storage.Many(l, AgentsByIdentity, identityKey(p.Identity), 1, storage.Read, &linked)
			for _, key := range slices.Compact(slices.Sorted(slices.Values(keys))) {
				l.Lock(nameLock(key))
			}
			for i, key := range keys {
				storage.Entries(l, AgentsByName, k(key), 1, &taken[i])
			}
			return nil
		},
		Decide: func() (*storage.Writes, error) {
			st := agents.ProvisionState{Linked: one(linked), NameTaken: make([]bool, len(keys))}
			for i := range taken {
				st.NameTaken[i] = len(taken[i]) > 0
			}
			var err error
			if out, err = agents.DecideProvision(st, p); err != nil || !out.Created {
				return nil, err
			}
			w := &storage.Writes{}
			storage.Put(w, Agents, nil, &out.Agent)
			w.Log(out.Agent.CreatedAt, out.Events...)
			return w, nil
		}})
	return out.Agent, out.Created, err
}
