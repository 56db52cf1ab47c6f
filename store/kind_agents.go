package store

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/commands"
	"github.com/kfa-project/kfa/storage"
)

// The schema's Agents and Credentials: agents (by the id string ->
// agentRecord: the agent, and the digests of its live credentials, which
// stand for CredentialsByAgent), agent_names for AgentsByName,
// agent_identities for AgentsByIdentity, creds (digest -> credential).

// storedAgent reads the agent record of id (zero, and not found, when
// none).
func storedAgent(r *run, id string) (agentRecord, bool, error) {
	rec, err := getAgent(r.tx, id)
	if errors.Is(err, agents.ErrNotFound) {
		return agentRecord{}, false, nil
	}
	return rec, err == nil, err
}

// writeAgent writes a, which was old (nil: a new agent, counted), moving
// its name and identity entries as the schema's indexes hold them; its
// credentials' digests stay as the credential writes keep them.
func writeAgent(r *run, old, a *agents.Agent, _ []byte) error {
	rec, _, err := storedAgent(r, a.ID)
	if err != nil {
		return err
	}
	rec.Agent = *a
	if err := putAgent(r.tx, rec); err != nil {
		return err
	}
	if old == nil {
		if err := counter(r.tx.Bucket(bucketCounts), keyAgentCount, 1); err != nil {
			return err
		}
	}
	names, ids := r.tx.Bucket(bucketAgentNames), r.tx.Bucket(bucketAgentIdentities)
	if old != nil {
		if p, ok := commands.AgentsByName.Entry(old); ok {
			if err := names.Delete(agentNameEntry(p[0], old.ID)); err != nil {
				return err
			}
		}
		if _, ok := commands.AgentsByIdentity.Entry(old); ok {
			if err := ids.Delete(identityKey(old.Identity())); err != nil {
				return err
			}
		}
	}
	if p, ok := commands.AgentsByName.Entry(a); ok {
		if err := names.Put(agentNameEntry(p[0], a.ID), nil); err != nil {
			return err
		}
	}
	if _, ok := commands.AgentsByIdentity.Entry(a); ok {
		return ids.Put(identityKey(a.Identity()), []byte(a.ID))
	}
	return nil
}

// writeCredential writes c and lists its digest in its agent's record.
func writeCredential(r *run, _, c *agents.Credential, _ []byte) error {
	if err := putCred(r.tx, *c); err != nil {
		return err
	}
	rec, ok, err := storedAgent(r, c.AgentID)
	if err != nil || !ok {
		return err
	}
	h := hex.EncodeToString(c.Digest[:])
	if !slices.Contains(rec.Creds, h) {
		rec.Creds = append(rec.Creds, h)
		return putAgent(r.tx, rec)
	}
	return nil
}

// removeCredential deletes c and its digest from its agent's record.
func removeCredential(r *run, c *agents.Credential) error {
	if err := r.tx.Bucket(bucketCreds).Delete(c.Digest[:]); err != nil {
		return err
	}
	rec, ok, err := storedAgent(r, c.AgentID)
	if err != nil || !ok {
		return err
	}
	h := hex.EncodeToString(c.Digest[:])
	if i := slices.Index(rec.Creds, h); i >= 0 {
		rec.Creds = slices.Delete(rec.Creds, i, i+1)
		return putAgent(r.tx, rec)
	}
	return nil
}

func init() {
	ak := &docKind[agents.Agent]{
		kind: commands.Agents, bucket: bucketAgents, parts: []part{pRest},
		decode: func(_, v []byte) (agents.Agent, error) {
			var r agentRecord
			if err := json.Unmarshal(v, &r); err != nil {
				return agents.Agent{}, fmt.Errorf("store: decode agent: %w", err)
			}
			return r.Agent, nil
		},
		write: writeAgent,
	}
	ak.scans = map[storage.Ix]func(*run, *storage.Range, storage.Key, func(storage.Key, any) bool) error{
		// agent_names: NameKey | 0 | agent id (no name key holds a zero byte).
		commands.AgentsByName: func(r *run, q *storage.Range, prefix storage.Key, fn func(storage.Key, any) bool) error {
			var pb []byte
			if len(prefix) > 0 {
				pb = append([]byte(prefix[0]), 0)
			}
			if len(prefix) > 1 {
				pb = append(pb, prefix[1]...)
			}
			return ak.walkRefs(r, q, bucketAgentNames, pb, nil, false, func(ik, _ []byte) (storage.Key, []byte, bool) {
				name, id, ok := cutByte(ik, 0)
				return storage.K(string(name), string(id)), id, ok
			}, fn)
		},
		// agent_identities: issuer | 0 | subject -> agent id.
		commands.AgentsByIdentity: func(r *run, q *storage.Range, prefix storage.Key, fn func(storage.Key, any) bool) error {
			if len(prefix) != 2 {
				return fmt.Errorf("store: %s is walked by whole identity", commands.AgentsByIdentity.Name())
			}
			key := identityKey(agents.Identity{Issuer: prefix[0], Subject: prefix[1]})
			return ak.walkRefs(r, q, bucketAgentIdentities, key, nil, true, func(ik, v []byte) (storage.Key, []byte, bool) {
				return storage.K(prefix[0], prefix[1], string(v)), v, string(ik) == string(key)
			}, fn)
		},
	}
	mapped[commands.Agents] = ak

	ck := &docKind[agents.Credential]{
		kind: commands.Credentials, bucket: bucketCreds, parts: []part{{size: len(agents.Digest{})}},
		decode: func(k, v []byte) (agents.Credential, error) {
			c, err := decodeCred(v)
			copy(c.Digest[:], k)
			return c, err
		},
		write:  writeCredential,
		remove: removeCredential,
	}
	// CredentialsByAgent: the digests the agent's record lists (one
	// listed but gone is skipped).
	ck.scans = map[storage.Ix]func(*run, *storage.Range, storage.Key, func(storage.Key, any) bool) error{
		commands.CredentialsByAgent: func(r *run, q *storage.Range, prefix storage.Key, fn func(storage.Key, any) bool) error {
			if len(prefix) != 1 || q.Reverse || q.To != nil {
				return fmt.Errorf("store: %s is walked forward by agent", commands.CredentialsByAgent.Name())
			}
			rec, ok, err := storedAgent(r, prefix[0])
			if err != nil || !ok {
				return err
			}
			creds := r.tx.Bucket(bucketCreds)
			for _, h := range rec.Creds {
				d, err := hex.DecodeString(h)
				if err != nil || len(d) != len(agents.Digest{}) {
					return fmt.Errorf("store: agent %s has a bad credential digest %q", rec.ID, h)
				}
				v := creds.Get(d)
				if v == nil {
					continue
				}
				var rec any
				if q.Keys == nil {
					c, err := decodeCred(v)
					if err != nil {
						return err
					}
					copy(c.Digest[:], d)
					rec = &c
				}
				if !fn(storage.K(prefix[0], string(d)), rec) {
					return nil
				}
			}
			return nil
		},
	}
	mapped[commands.Credentials] = ck
}

// cutByte splits b at its first c.
func cutByte(b []byte, c byte) (before, after []byte, ok bool) {
	for i, x := range b {
		if x == c {
			return b[:i], b[i+1:], true
		}
	}
	return nil, nil, false
}
