package store

import (
	"bytes"
	"context"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/discussions"
)

// putInbox writes an entry under agent | entry id, and in the unacked index
// when it is new.
func putInbox(tx *bolt.Tx, e discussions.InboxEntry, unacked bool) error {
	a, ok := idBytes(e.AgentID)
	if !ok {
		return errBadID("agent", e.AgentID)
	}
	id, ok := idBytes(e.ID)
	if !ok {
		return errBadID("inbox entry", e.ID)
	}
	v, err := encodeJSON(e) // the agent id is in the key
	if err != nil {
		return err
	}
	k := cat(a, id)
	if err := tx.Bucket(bucketInbox).Put(k, v); err != nil {
		return err
	}
	if unacked {
		return tx.Bucket(bucketInboxUnacked).Put(k, nil)
	}
	return tx.Bucket(bucketInboxUnacked).Delete(k)
}

// ListInbox implements discussions.Store: oldest first from one seek.
func (s *DB) ListInbox(_ context.Context, q discussions.InboxQuery) (discussions.InboxPage, error) {
	page := discussions.InboxPage{Entries: []discussions.InboxEntry{}}
	a, ok := idBytes(q.AgentID)
	if !ok {
		return page, nil
	}
	err := s.db.View(func(tx *bolt.Tx) error {
		src := tx.Bucket(bucketInbox)
		c := src.Cursor()
		if q.UnackedOnly {
			c = tx.Bucket(bucketInboxUnacked).Cursor()
		}
		var k []byte
		if q.After != "" {
			id, ok := idBytes(q.After)
			if !ok {
				return nil
			}
			start := cat(a, id)
			if k, _ = c.Seek(start); bytes.Equal(k, start) {
				k, _ = c.Next()
			}
		} else {
			k, _ = c.Seek(a)
		}
		for ; k != nil && bytes.HasPrefix(k, a); k, _ = c.Next() {
			if len(page.Entries) == q.PageSize {
				page.Next = page.Entries[len(page.Entries)-1].ID
				return nil
			}
			e, err := decodeInbox(src.Get(k))
			if err != nil {
				return err
			}
			e.AgentID = q.AgentID
			page.Entries = append(page.Entries, e)
		}
		return nil
	})
	return page, err
}

// AckInbox implements discussions.Store: load the agent and its entries
// among ids, discussions.DecideAck, write the entries it acknowledges. It
// touches inbox entries only.
func (s *DB) AckInbox(_ context.Context, agentID string, ids []string, at time.Time) (discussions.AckResult, error) {
	var out discussions.AckOutcome
	err := s.exec(func(tx *bolt.Tx) (func(*bolt.Tx) error, error) {
		agent, err := loadAgent(tx, agentID)
		if err != nil {
			return nil, err
		}
		found, err := loadInbox(tx, agentID, ids)
		if err != nil {
			return nil, err
		}
		if out, err = discussions.DecideAck(agent, agentID, ids, found, at); err != nil || len(out.Acked) == 0 {
			return nil, err
		}
		return func(tx *bolt.Tx) error {
			for _, e := range out.Acked {
				if err := putInbox(tx, e, false); err != nil {
					return err
				}
			}
			return nil
		}, nil
	})
	return out.Result, err
}

// loadInbox loads agentID's entries among ids, by id.
func loadInbox(tx *bolt.Tx, agentID string, ids []string) (map[string]discussions.InboxEntry, error) {
	found := map[string]discussions.InboxEntry{}
	a, ok := idBytes(agentID)
	if !ok {
		return found, nil
	}
	b := tx.Bucket(bucketInbox)
	for _, id := range ids {
		ib, ok := idBytes(id)
		if !ok {
			continue
		}
		v := b.Get(cat(a, ib))
		if v == nil {
			continue
		}
		e, err := decodeInbox(v)
		if err != nil {
			return nil, err
		}
		e.AgentID = agentID
		found[id] = e
	}
	return found, nil
}
