package store

import (
	"encoding/binary"
	"encoding/hex"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/sessions"
)

// VSession is a web session that disagrees with its expiry index or its
// agent: a session an expiry sweep would never purge, an index entry that
// points at nothing, or a session of an agent that does not exist.
const VSession = "session"

// checkSessions: every session decodes, belongs to an existing agent and
// is in the expiry index at its expiry; every expiry entry points at a
// session that expires then.
func (c *checker) checkSessions() error {
	digestLen := len(sessions.Digest{})
	err := c.walk(bucketSessions, func(tx *bolt.Tx, k, v []byte) {
		id := hex.EncodeToString(k)
		if len(k) != digestLen {
			c.rep.addf(VDecode, bucketSessions, k, id, "", "key is not a session digest")
			return
		}
		var d sessions.Digest
		copy(d[:], k)
		s, err := decodeSession(d, v)
		if err != nil {
			c.rep.addf(VDecode, bucketSessions, k, id, "", "%v", err)
			return
		}
		if tx.Bucket(bucketAgents).Get([]byte(s.AgentID)) == nil {
			c.rep.addf(VSession, bucketSessions, k, id, "", "session of agent %s, which does not exist", s.AgentID)
		}
		if tx.Bucket(bucketSessionExp).Get(sessionExpKey(s.ExpiresAt, d)) == nil {
			c.rep.addf(VSession, bucketSessionExp, k, id, "", "session is missing from the expiry index at %s",
				s.ExpiresAt.UTC().Format("2006-01-02T15:04:05.000Z"))
		}
	})
	if err != nil {
		return err
	}
	return c.walk(bucketSessionExp, func(tx *bolt.Tx, k, _ []byte) {
		if len(k) != 8+digestLen {
			c.rep.addf(VDecode, bucketSessionExp, k, hex.EncodeToString(k), "", "key is not expiry | session digest")
			return
		}
		var d sessions.Digest
		copy(d[:], k[8:])
		v := tx.Bucket(bucketSessions).Get(k[8:])
		if v == nil {
			c.rep.addf(VSession, bucketSessionExp, k, hex.EncodeToString(k[8:]), "", "expiry entry points at a session that is missing")
			return
		}
		if s, err := decodeSession(d, v); err == nil && ms(s.ExpiresAt) != binary.BigEndian.Uint64(k[:8]) {
			c.rep.addf(VSession, bucketSessionExp, k, hex.EncodeToString(k[8:]), "", "expiry entry is at another time than its session")
		}
	})
}
