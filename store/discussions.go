package store

import (
	"bytes"
	"context"
	"errors"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/commands"
	"github.com/kfa-project/kfa/discussions"
)

// statusBytes are the statuses' bytes in idx_disc_status and the
// counters' keys.
var statusBytes = map[discussions.Status]byte{discussions.StatusOpen: 1, discussions.StatusAnswered: 2}

func statusByte(s discussions.Status) byte {
	if b, ok := statusBytes[s]; ok {
		return b
	}
	return 1
}

// keyDiscCount counts the listed discussions (those readers see: hidden
// ones are neither listed nor counted), and discCountKey those of one
// status.
var keyDiscCount = []byte("discussions")

func discCountKey(s discussions.Status) []byte {
	return cat(keyDiscCount, []byte{0, statusByte(s)})
}

// listing is where d is listed: its status byte in idx_disc_status, or
// 0 when the schema's DiscussionsListed leaves it out (or d is nil).
func listing(d *discussions.Discussion) byte {
	if d == nil {
		return 0
	}
	parts, ok := commands.DiscussionsListed.Entry(d)
	if !ok {
		return 0
	}
	return statusByte(discussions.Status(parts[0]))
}

// putDiscussion writes d, moving its status index entry and counters
// from was, where it was listed before (listing; 0 for a new discussion
// or a hidden one).
func putDiscussion(tx *bolt.Tx, d *discussions.Discussion, was byte) error {
	v, err := encodeJSON(d)
	if err != nil {
		return err
	}
	return putDiscussionRecord(tx, d, v, was)
}

// putDiscussionRecord is putDiscussion with d already encoded as v.
func putDiscussionRecord(tx *bolt.Tx, d *discussions.Discussion, v []byte, was byte) error {
	k, ok := idBytes(d.ID)
	if !ok {
		return errBadID("discussion", d.ID)
	}
	if now := listing(d); now != was {
		counts := tx.Bucket(bucketCounts)
		idx := tx.Bucket(bucketDiscByStatus)
		if was != 0 {
			if err := idx.Delete(cat([]byte{was}, k)); err != nil {
				return err
			}
			if err := counter(counts, cat(keyDiscCount, []byte{0, was}), -1); err != nil {
				return err
			}
			if err := counter(counts, keyDiscCount, -1); err != nil {
				return err
			}
		}
		if now != 0 {
			if err := idx.Put(cat([]byte{now}, k), nil); err != nil {
				return err
			}
			if err := counter(counts, cat(keyDiscCount, []byte{0, now}), 1); err != nil {
				return err
			}
			if err := counter(counts, keyDiscCount, 1); err != nil {
				return err
			}
		}
	}
	return tx.Bucket(bucketDiscussions).Put(k, v)
}

func getDiscussion(tx *bolt.Tx, id string) (discussions.Discussion, []byte, error) {
	k, ok := idBytes(id)
	if !ok {
		return discussions.Discussion{}, nil, discussions.ErrNotFound
	}
	v := tx.Bucket(bucketDiscussions).Get(k)
	if v == nil {
		return discussions.Discussion{}, nil, discussions.ErrNotFound
	}
	d, err := decodeDiscussion(v)
	return d, k, err
}

// GetDiscussion implements discussions.Store.
func (s *DB) GetDiscussion(_ context.Context, id string) (discussions.Discussion, error) {
	var d discussions.Discussion
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		d, _, err = getDiscussion(tx, id)
		return err
	})
	return d, err
}

// ListReplies implements discussions.Store: one page of replies, oldest
// first (reply ids are ULIDs), from one seek and PageSize+1 steps.
func (s *DB) ListReplies(_ context.Context, q discussions.ReplyQuery) (discussions.ReplyPage, error) {
	var page discussions.ReplyPage
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		page, err = listReplies(tx, q)
		return err
	})
	return page, err
}

// GetThread implements discussions.Store, in one read transaction.
func (s *DB) GetThread(_ context.Context, q discussions.ReplyQuery) (discussions.Discussion, discussions.ReplyPage, error) {
	var (
		d    discussions.Discussion
		page discussions.ReplyPage
	)
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		if d, _, err = getDiscussion(tx, q.DiscussionID); err != nil {
			return err
		}
		page, err = listReplies(tx, q)
		return err
	})
	return d, page, err
}

// listReplies reads ListReplies' page in tx.
func listReplies(tx *bolt.Tx, q discussions.ReplyQuery) (discussions.ReplyPage, error) {
	page := discussions.ReplyPage{Replies: []discussions.Reply{}}
	k, ok := idBytes(q.DiscussionID)
	if !ok {
		return page, discussions.ErrNotFound
	}
	c := tx.Bucket(bucketReplies).Cursor()
	rk, v := c.Seek(k)
	if q.After != "" {
		after, ok := idBytes(q.After)
		if !ok {
			return page, nil
		}
		start := cat(k, after)
		if rk, v = c.Seek(start); bytes.Equal(rk, start) {
			rk, v = c.Next()
		}
	}
	for ; rk != nil && bytes.HasPrefix(rk, k); rk, v = c.Next() {
		r, err := decodeReply(v)
		if err != nil {
			return page, err
		}
		if r.Hidden && !q.IncludeHidden {
			continue
		}
		if len(page.Replies) == q.PageSize {
			page.Next = page.Replies[len(page.Replies)-1].ID
			return page, nil
		}
		page.Replies = append(page.Replies, r)
	}
	return page, nil
}

// getReply reads reply rid of discussion did (nil, nil when there is
// none).
func getReply(tx *bolt.Tx, did, rid string) (*discussions.Reply, error) {
	dk, ok1 := idBytes(did)
	rk, ok2 := idBytes(rid)
	if !ok1 || !ok2 {
		return nil, nil
	}
	v := tx.Bucket(bucketReplies).Get(cat(dk, rk))
	if v == nil {
		return nil, nil
	}
	r, err := decodeReply(v)
	if err != nil {
		return nil, err
	}
	return &r, nil
}

// GetReply implements discussions.Store.
func (s *DB) GetReply(_ context.Context, discussionID, replyID string) (discussions.Reply, error) {
	var r *discussions.Reply
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		r, err = getReply(tx, discussionID, replyID)
		return err
	})
	if err == nil && r == nil {
		err = &discussions.ReplyNotFoundError{DiscussionID: discussionID, ReplyID: replyID}
	}
	if err != nil {
		return discussions.Reply{}, err
	}
	return *r, nil
}

// optDiscussion reads discussion id, nil when there is none.
func optDiscussion(tx *bolt.Tx, id string) (*discussions.Discussion, error) {
	d, _, err := getDiscussion(tx, id)
	switch {
	case errors.Is(err, discussions.ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, err
	}
	return &d, nil
}

// ListDiscussions implements discussions.Store: newest first (ids are
// ULIDs, so key order is creation order), one seek and PageSize+1 steps.
func (s *DB) ListDiscussions(_ context.Context, q discussions.ListQuery) (discussions.Page, error) {
	page := discussions.Page{Discussions: []discussions.Discussion{}}
	err := s.db.View(func(tx *bolt.Tx) error {
		var (
			c      *bolt.Cursor
			prefix []byte
		)
		if q.Status != "" {
			c = tx.Bucket(bucketDiscByStatus).Cursor()
			prefix = []byte{statusByte(q.Status)}
			page.Total = readCounter(tx.Bucket(bucketCounts), discCountKey(q.Status))
		} else {
			c = tx.Bucket(bucketDiscussions).Cursor()
			page.Total = readCounter(tx.Bucket(bucketCounts), keyDiscCount)
		}
		var after []byte
		if q.After != "" {
			id, ok := idBytes(q.After)
			if !ok {
				return discussions.ErrNotFound
			}
			after = cat(prefix, id)
		}
		// Newest first walks back from the cursor (or the prefix's end);
		// oldest first forward from just after it (or the prefix's start).
		first, next := func() ([]byte, []byte) {
			if after == nil {
				return seekBefore(c, prefixEnd(prefix))
			}
			return seekBefore(c, after)
		}, c.Prev
		if q.Oldest {
			first, next = func() ([]byte, []byte) {
				k, v := c.Seek(prefix)
				if after != nil {
					if k, v = c.Seek(after); bytes.Equal(k, after) {
						k, v = c.Next()
					}
				}
				return k, v
			}, c.Next
		}
		db := tx.Bucket(bucketDiscussions)
		for k, v := first(); k != nil && bytes.HasPrefix(k, prefix); k, v = next() {
			if prefix != nil {
				v = db.Get(k[len(prefix):])
			}
			d, err := decodeDiscussion(v)
			if err != nil {
				return err
			}
			if d.Hidden {
				continue // only in the walk of every discussion: the status index lists none
			}
			if len(page.Discussions) == q.PageSize {
				page.Next = page.Discussions[len(page.Discussions)-1].ID
				return nil
			}
			page.Discussions = append(page.Discussions, d)
		}
		return nil
	})
	return page, err
}
