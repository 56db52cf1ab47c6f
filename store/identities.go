package store

import (
	"context"
	"errors"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/agents"
)

// bucketAgentIdentities maps an OAuth identity to its agent (schema 11):
// issuer | 0 | subject -> agent id. An issuer is a URL, which holds no
// zero byte, so the key splits back into its two parts.
var bucketAgentIdentities = []byte("agent_identities")

// identityKey is an identity's key in agent_identities.
func identityKey(id agents.Identity) []byte {
	return cat([]byte(id.Issuer), []byte{0}, []byte(id.Subject))
}

// identityAgent returns the id of the agent linked to id ("" when none).
func identityAgent(tx *bolt.Tx, id agents.Identity) string {
	return string(tx.Bucket(bucketAgentIdentities).Get(identityKey(id)))
}

// indexAgentIdentities creates agent_identities and fills it from the
// agents' links.
func indexAgentIdentities(tx *bolt.Tx) error {
	b, err := tx.CreateBucketIfNotExists(bucketAgentIdentities)
	if err != nil {
		return err
	}
	return tx.Bucket(bucketAgents).ForEach(func(k, v []byte) error {
		r, err := getAgent(tx, string(k))
		if err != nil || !r.Linked() {
			return err
		}
		return b.Put(identityKey(r.Identity()), []byte(r.ID))
	})
}

// AgentByIdentity implements agents.Store.
func (s *DB) AgentByIdentity(_ context.Context, id agents.Identity) (agents.Agent, error) {
	var a agents.Agent
	err := s.db.View(func(tx *bolt.Tx) error {
		aid := identityAgent(tx, id)
		if aid == "" {
			return agents.ErrNotLinked
		}
		r, err := getAgent(tx, aid)
		a = r.Agent
		return err
	})
	return a, err
}

// LinkAgent implements agents.Store: load the agent and the identity's
// agent, agents.DecideLink, persist (the revoked agent the identity moves
// from, too). bbolt's single writer is both locks.
func (s *DB) LinkAgent(_ context.Context, l agents.Link) (agents.LinkOutcome, error) {
	var out agents.LinkOutcome
	err := s.exec(func(tx *bolt.Tx) (func(*bolt.Tx) error, error) {
		var st agents.LinkState
		r, err := getAgent(tx, l.AgentID)
		switch {
		case err == nil:
			st.Agent = &r.Agent
		case !errors.Is(err, agents.ErrNotFound):
			return nil, err
		}
		var old agentRecord
		if aid := identityAgent(tx, l.Identity); aid != "" {
			if old, err = getAgent(tx, aid); err != nil {
				return nil, err
			}
			st.Linked = &old.Agent
		}
		if out, err = agents.DecideLink(st, l); err != nil || !out.Changed {
			return nil, err
		}
		return func(tx *bolt.Tx) error {
			r.Agent = out.Agent // the credentials stay
			if err := putAgent(tx, r); err != nil {
				return err
			}
			if out.Replaced != nil {
				old.Agent = *out.Replaced
				if err := putAgent(tx, old); err != nil {
					return err
				}
			}
			if err := tx.Bucket(bucketAgentIdentities).Put(identityKey(l.Identity), []byte(r.ID)); err != nil {
				return err
			}
			return s.appendEvents(tx, out.Events, l.At)
		}, nil
	})
	return out, err
}

// ProvisionAgent implements agents.Store: load the identity's agent and
// whether each name is taken, agents.DecideProvision, persist. bbolt's
// single writer is the locks.
func (s *DB) ProvisionAgent(_ context.Context, p agents.Provision) (agents.Agent, bool, error) {
	var out agents.ProvisionOutcome
	err := s.exec(func(tx *bolt.Tx) (func(*bolt.Tx) error, error) {
		var st agents.ProvisionState
		if aid := identityAgent(tx, p.Identity); aid != "" {
			r, err := getAgent(tx, aid)
			if err != nil {
				return nil, err
			}
			st.Linked = &r.Agent
		}
		for _, n := range p.Names {
			st.NameTaken = append(st.NameTaken, len(agentsNamed(tx, n, 1)) > 0)
		}
		var err error
		if out, err = agents.DecideProvision(st, p); err != nil || !out.Created {
			return nil, err
		}
		return func(tx *bolt.Tx) error {
			a := out.Agent
			if err := putAgent(tx, agentRecord{Agent: a}); err != nil {
				return err
			}
			if err := tx.Bucket(bucketAgentNames).Put(agentNameKey(a.Name, a.ID), nil); err != nil {
				return err
			}
			if err := counter(tx.Bucket(bucketCounts), keyAgentCount, 1); err != nil {
				return err
			}
			if err := tx.Bucket(bucketAgentIdentities).Put(identityKey(a.Identity()), []byte(a.ID)); err != nil {
				return err
			}
			return s.appendEvents(tx, out.Events, a.CreatedAt)
		}, nil
	})
	return out.Agent, out.Created, err
}
