package store

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

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

// CreateAgent implements agents.Store.
func (s *DB) CreateAgent(_ context.Context, a agents.Agent, c agents.Credential) error {
	return s.update(func(tx *bolt.Tx) error {
		s.credentialsChanged(tx)
		r := agentRecord{Agent: a, Creds: []string{hex.EncodeToString(c.Digest[:])}}
		if err := putAgent(tx, r); err != nil {
			return err
		}
		if err := counter(tx.Bucket(bucketCounts), keyAgentCount, 1); err != nil {
			return err
		}
		return putCred(tx, c)
	})
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

// ListAgents implements agents.Store. Agent ids are ULIDs, so key order is
// creation order.
func (s *DB) ListAgents(_ context.Context) ([]agents.Agent, error) {
	var out []agents.Agent
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketAgents).ForEach(func(k, v []byte) error {
			var r agentRecord
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("store: decode agent %s: %w", k, err)
			}
			out = append(out, r.Agent)
			return nil
		})
	})
	return out, err
}

// RotateCredential implements agents.Store.
func (s *DB) RotateCredential(_ context.Context, c agents.Credential, keepUntil time.Time) (agents.Agent, error) {
	var out agents.Agent
	err := s.update(func(tx *bolt.Tx) error {
		s.credentialsChanged(tx)
		r, err := getAgent(tx, c.AgentID)
		if err != nil {
			return refuse(err)
		}
		if !r.Active() {
			return refuse(agents.ErrDisabled)
		}
		creds := tx.Bucket(bucketCreds)
		kept := []string{hex.EncodeToString(c.Digest[:])}
		for _, h := range r.Creds {
			d, err := hex.DecodeString(h)
			if err != nil {
				return fmt.Errorf("store: agent %s has a bad credential digest: %w", r.ID, err)
			}
			old, err := decodeCred(creds.Get(d))
			expired := err != nil || !old.ValidAt(c.CreatedAt)
			if keepUntil.IsZero() || expired {
				if err := creds.Delete(d); err != nil {
					return err
				}
				continue
			}
			if old.ExpiresAt.IsZero() || old.ExpiresAt.After(keepUntil) {
				old.ExpiresAt = keepUntil
			}
			copy(old.Digest[:], d)
			if err := putCred(tx, old); err != nil {
				return err
			}
			kept = append(kept, h)
		}
		r.Creds = kept
		if err := putCred(tx, c); err != nil {
			return err
		}
		out = r.Agent
		return putAgent(tx, r)
	})
	return out, err
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

// RevokeAgent implements agents.Store.
func (s *DB) RevokeAgent(_ context.Context, id string, at time.Time) (agents.Agent, error) {
	var out agents.Agent
	err := s.update(func(tx *bolt.Tx) error {
		s.credentialsChanged(tx)
		r, err := getAgent(tx, id)
		if err != nil {
			return refuse(err)
		}
		if !r.Active() {
			out = r.Agent // already revoked: nothing to do
			return nil
		}
		for _, h := range r.Creds {
			d, err := hex.DecodeString(h)
			if err != nil {
				return fmt.Errorf("store: agent %s has a bad credential digest: %w", r.ID, err)
			}
			if err := tx.Bucket(bucketCreds).Delete(d); err != nil {
				return err
			}
		}
		r.Creds = nil
		r.DisabledAt = at
		out = r.Agent
		return putAgent(tx, r)
	})
	return out, err
}

// Authenticate implements agents.Store: one lookup by digest, then the
// agent; answered from the credential cache when it can be (credCache).
func (s *DB) Authenticate(_ context.Context, d agents.Digest) (agents.Agent, agents.Credential, error) {
	e, gen, ok := s.creds.get(d)
	if ok {
		return e.agent, e.cred, nil
	}
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
	if err == nil {
		s.creds.put(d, credEntry{agent: a, cred: c}, gen)
	}
	return a, c, err
}
