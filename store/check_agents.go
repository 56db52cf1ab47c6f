package store

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"slices"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/agents"
)

// Agents and credentials: every agent's credential digests exist, and
// every credential belongs to an agent that lists it.
func (c *checker) checkAgents() error {
	err := c.walk(bucketAgents, func(tx *bolt.Tx, k, v []byte) {
		c.expected[string(keyAgentCount)]++
		var r agentRecord
		if err := json.Unmarshal(v, &r); err != nil {
			c.rep.addf(VDecode, bucketAgents, k, string(k), "", "agent record does not decode: %v", err)
			return
		}
		if r.ID != string(k) {
			c.rep.addf(VAgent, bucketAgents, k, string(k), "", "agent record has id %q under key %q", r.ID, k)
		}
		if tx.Bucket(bucketAgentNames).Get(agentNameKey(r.Name, r.ID)) == nil {
			c.rep.addf(VAgent, bucketAgents, k, string(k), "", "agent is missing from agent_names, so a duplicate of its name would be allowed")
		}
		if r.Linked() && identityAgent(tx, r.Identity()) != r.ID {
			c.rep.addf(VAgent, bucketAgents, k, string(k), "", "agent is linked to %s, which agent_identities does not map to it, so its tokens would make another agent", r.Identity())
		}
		creds := tx.Bucket(bucketCreds)
		for _, d := range r.Creds {
			raw, err := hex.DecodeString(d)
			if err != nil || creds.Get(raw) == nil {
				c.rep.addf(VAgent, bucketAgents, k, string(k), "", "agent lists credential %s, which does not exist", shortHex(d))
			}
		}
	})
	if err != nil {
		return err
	}
	err = c.walk(bucketAgentNames, func(tx *bolt.Tx, k, _ []byte) {
		i := bytes.LastIndexByte(k, 0)
		if i < 0 {
			c.rep.addf(VDecode, bucketAgentNames, k, string(k), "", "entry is not name | 0 | agent id")
			return
		}
		id := string(k[i+1:])
		r, err := getAgent(tx, id)
		if err != nil || !bytes.Equal(agentNameKey(r.Name, r.ID), k) {
			c.rep.addf(VAgent, bucketAgentNames, k, id, "", "agent_names lists agent %s under a name it does not have", id)
		}
	})
	if err != nil {
		return err
	}
	err = c.walk(bucketAgentIdentities, func(tx *bolt.Tx, k, v []byte) {
		i := bytes.IndexByte(k, 0)
		if i < 0 {
			c.rep.addf(VDecode, bucketAgentIdentities, k, string(k), "", "entry is not issuer | 0 | subject")
			return
		}
		id := agents.Identity{Issuer: string(k[:i]), Subject: string(k[i+1:])}
		r, err := getAgent(tx, string(v))
		if err != nil || r.Identity() != id {
			c.rep.addf(VAgent, bucketAgentIdentities, k, string(v), "", "agent_identities maps %s to agent %s, which is not linked to it", id, v)
		}
	})
	if err != nil {
		return err
	}
	return c.walk(bucketCreds, func(tx *bolt.Tx, k, v []byte) {
		short := shortHex(hex.EncodeToString(k))
		cred, err := decodeCred(v)
		if err != nil {
			c.rep.addf(VDecode, bucketCreds, nil, "digest "+short, "", "credential does not decode: %v", err)
			return
		}
		r, err := getAgent(tx, cred.AgentID)
		switch {
		case err != nil:
			c.rep.addf(VAgent, bucketCreds, nil, "digest "+short, "", "credential of agent %s, which does not exist", cred.AgentID)
		case !slices.Contains(r.Creds, hex.EncodeToString(k)):
			c.rep.addf(VAgent, bucketCreds, nil, "digest "+short, "", "credential of agent %s is not listed by that agent, so rotate and revoke cannot find it", cred.AgentID)
		}
	})
}

// Rate windows: each is a known limit of an existing agent.
func (c *checker) checkWindows() error {
	return c.walk(bucketRateWindows, func(tx *bolt.Tx, k, v []byte) {
		if len(k) != 17 || (k[0] != windowAsk && k[0] != windowReply && k[0] != windowFlag) || len(v) != 8 {
			c.rep.addf(VDecode, bucketRateWindows, k, hex.EncodeToString(k), "", "entry is not limit (1) | agent id (16) -> time (8)")
			return
		}
		agent := idString(k[1:])
		if tx.Bucket(bucketAgents).Get([]byte(agent)) == nil {
			c.rep.addf(VAgent, bucketRateWindows, k, string(k[:1])+"|"+agent, "", "rate window of agent %s, which does not exist", agent)
		}
	})
}

// shortHex shortens a digest for a report.
func shortHex(h string) string {
	if len(h) > 12 {
		return h[:12] + "..."
	}
	return h
}
