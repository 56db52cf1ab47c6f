package store

import (
	"bytes"
	"context"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/commands"
	"github.com/kfa-project/kfa/discussions"
)

// putInbox writes an entry under agent | entry id, and in the unacked index
// when it is new.
func putInbox(tx *bolt.Tx, e discussions.InboxEntry, unacked bool) error {
	v, err := encodeJSON(e) // the agent id is in the key
	if err != nil {
		return err
	}
	return putInboxRecord(tx, &e, v, unacked)
}

// putInboxRecord is putInbox with e encoded as v.
func putInboxRecord(tx *bolt.Tx, e *discussions.InboxEntry, v []byte, unacked bool) error {
	a, ok := idBytes(e.AgentID)
	if !ok {
		return errBadID("agent", e.AgentID)
	}
	id, ok := idBytes(e.ID)
	if !ok {
		return errBadID("inbox entry", e.ID)
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

// The schema's Inbox: inbox, agent id (16) | entry id (16) -> the entry
// (the agent is its key's), and idx_inbox_new, the schema's InboxUnacked.
func init() {
	mapped[commands.Inbox] = &docKind[discussions.InboxEntry]{
		kind: commands.Inbox, bucket: bucketInbox, parts: []part{pULID, pULID},
		decode: func(k, v []byte) (discussions.InboxEntry, error) {
			e, err := decodeInbox(v)
			e.AgentID = idString(k[:16])
			return e, err
		},
		encode: encodeDoc[discussions.InboxEntry],
		write: func(r *run, _, e *discussions.InboxEntry, v []byte) error {
			_, unacked := commands.InboxUnacked.Entry(e)
			return putInboxRecord(r.tx, e, v, unacked)
		},
	}
}
