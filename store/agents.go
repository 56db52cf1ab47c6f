package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/agents"
)

// agentRecord is an agent with the digests of its live credentials, so
// rotate and revoke find them without a scan.
type agentRecord struct {
	agents.Agent
	Creds []string `json:"creds,omitempty"` // hex digests
}

// The agents bucket is keyed by the agent id string; the creds bucket by the
// 32-byte digest.
func getAgent(tx *bolt.Tx, id string) (agentRecord, error) {
	v := tx.Bucket(bucketAgents).Get([]byte(id))
	if v == nil {
		return agentRecord{}, agents.ErrNotFound
	}
	var r agentRecord
	if err := json.Unmarshal(v, &r); err != nil {
		return agentRecord{}, fmt.Errorf("store: decode agent %s: %w", id, err)
	}
	return r, nil
}

func putAgent(tx *bolt.Tx, r agentRecord) error {
	v, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return tx.Bucket(bucketAgents).Put([]byte(r.ID), v)
}

func putCred(tx *bolt.Tx, c agents.Credential) error {
	v, err := json.Marshal(c)
	if err != nil {
		return err
	}
	return tx.Bucket(bucketCreds).Put(c.Digest[:], v)
}

// agentNameKey is an agent's entry in agent_names: its NameKey, a zero
// byte (no name holds one) and its id.
func agentNameKey(name, id string) []byte { return agentNameEntry(agents.NameKey(name), id) }

// agentNameEntry is the agent_names entry of name key key and agent id.
func agentNameEntry(key, id string) []byte { return cat([]byte(key), []byte{0}, []byte(id)) }

// agentsNamed returns the ids of at most limit agents whose name has
// name's NameKey, in id order.
func agentsNamed(tx *bolt.Tx, name string, limit int) []string {
	var ids []string
	prefix := cat([]byte(agents.NameKey(name)), []byte{0})
	c := tx.Bucket(bucketAgentNames).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && len(ids) < limit; k, _ = c.Next() {
		ids = append(ids, string(k[len(prefix):]))
	}
	return ids
}

// AgentsNamed implements agents.Store, in one read transaction.
func (s *DB) AgentsNamed(_ context.Context, names []string, limit int) ([][]string, error) {
	out := make([][]string, len(names))
	err := s.db.View(func(tx *bolt.Tx) error {
		for i, n := range names {
			out[i] = agentsNamed(tx, n, limit)
		}
		return nil
	})
	return out, err
}

var keyAgentCount = []byte("agents")

// GetAgent implements agents.Store.
func (s *DB) GetAgent(_ context.Context, id string) (agents.Agent, error) {
	var a agents.Agent
	err := s.db.View(func(tx *bolt.Tx) error {
		r, err := getAgent(tx, id)
		a = r.Agent
		return err
	})
	return a, err
}

// ListAgents implements agents.Store: agent ids are ULIDs, so key order
// is creation order; one seek and limit+1 steps.
func (s *DB) ListAgents(_ context.Context, after string, limit int) (agents.Page, error) {
	page := agents.Page{Agents: []agents.Agent{}}
	err := s.db.View(func(tx *bolt.Tx) error {
		page.Total = readCounter(tx.Bucket(bucketCounts), keyAgentCount)
		c := tx.Bucket(bucketAgents).Cursor()
		var k, v []byte
		if after == "" {
			k, v = c.First()
		} else if k, v = c.Seek([]byte(after)); string(k) == after {
			k, v = c.Next()
		}
		for ; k != nil; k, v = c.Next() {
			if len(page.Agents) == limit {
				page.Next = page.Agents[len(page.Agents)-1].ID
				return nil
			}
			var r agentRecord
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("store: decode agent %s: %w", k, err)
			}
			page.Agents = append(page.Agents, r.Agent)
		}
		return nil
	})
	return page, err
}

func decodeCred(v []byte) (agents.Credential, error) {
	if v == nil {
		return agents.Credential{}, agents.ErrInvalidToken
	}
	var c agents.Credential
	if err := json.Unmarshal(v, &c); err != nil {
		return agents.Credential{}, fmt.Errorf("store: decode credential: %w", err)
	}
	return c, nil
}

// Authenticate implements agents.Store: one lookup by digest, then the
// agent. (The process's credential cache, agents.CredCache, sits above
// it, on either store.)
func (s *DB) Authenticate(_ context.Context, d agents.Digest) (agents.Agent, agents.Credential, error) {
	var (
		a agents.Agent
		c agents.Credential
	)
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		if c, err = decodeCred(tx.Bucket(bucketCreds).Get(d[:])); err != nil {
			return err
		}
		c.Digest = d
		r, err := getAgent(tx, c.AgentID)
		if err != nil {
			return agents.ErrInvalidToken
		}
		a = r.Agent
		return nil
	})
	return a, c, err
}
