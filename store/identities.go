package store

import (
	"context"

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
