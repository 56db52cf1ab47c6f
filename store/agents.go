package store

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/changelog"
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
		r := agentRecord{Agent: a, Creds: []string{hex.EncodeToString(c.Digest[:])}}
		if err := putAgent(tx, r); err != nil {
			return err
		}
		if err := counter(tx.Bucket(bucketCounts), keyAgentCount, 1); err != nil {
			return err
		}
		if err := putCred(tx, c); err != nil {
			return err
		}
		return s.appendEvents(tx, []changelog.Event{{Kind: changelog.AgentCreated, ID: a.ID, At: a.CreatedAt}}, a.CreatedAt)
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

// RotateCredential implements agents.Store.
func (s *DB) RotateCredential(_ context.Context, c agents.Credential, keepUntil time.Time) (agents.Agent, error) {
	var out agents.Agent
	err := s.update(func(tx *bolt.Tx) error {
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
		if err := putAgent(tx, r); err != nil {
			return err
		}
		return s.appendEvents(tx, []changelog.Event{agentRotated(r.ID, c.CreatedAt, keepUntil)}, c.CreatedAt)
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
		if err := putAgent(tx, r); err != nil {
			return err
		}
		return s.appendEvents(tx, []changelog.Event{{Kind: changelog.AgentRevoked, ID: r.ID, At: at}}, at)
	})
	return out, err
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

// agentRotated is the log event of a rotation at at whose older
// credentials end at keepUntil (zero: at once).
func agentRotated(id string, at, keepUntil time.Time) changelog.Event {
	e := changelog.Event{Kind: changelog.AgentRotated, ID: id, At: at}
	if !keepUntil.IsZero() {
		e.Ref = keepUntil.UTC().Format(time.RFC3339Nano)
	}
	return e
}
