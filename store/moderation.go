package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/commands"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/moderation"
)

// windowFlag is the flag rate's window in rate_windows.
const windowFlag byte = 'f'

// putPost indexes post (a discussion, or a reply of discussion disc) as
// author's.
func putPost(tx *bolt.Tx, author, post, disc []byte) error {
	if disc == nil {
		disc = []byte{}
	}
	return tx.Bucket(bucketAuthorPosts).Put(cat(author, post), disc)
}

// putReplyPlace records where reply rk (of discussion dk, by author) is.
func putReplyPlace(tx *bolt.Tx, author, dk, rk []byte) error {
	if err := tx.Bucket(bucketReplyDiscs).Put(rk, dk); err != nil {
		return err
	}
	return putPost(tx, author, rk, dk)
}

// migrateModeration creates the moderation buckets and indexes every
// discussion and reply by its author, and every reply by id.
func migrateModeration(tx *bolt.Tx) error {
	for _, b := range [][]byte{bucketReplyDiscs, bucketAuthorPosts, bucketModItems, bucketModFlags, bucketModQueue, bucketModLog} {
		if _, err := tx.CreateBucketIfNotExists(b); err != nil {
			return fmt.Errorf("create bucket %s: %w", b, err)
		}
	}
	err := tx.Bucket(bucketDiscussions).ForEach(func(k, v []byte) error {
		d, err := decodeDiscussion(v)
		if err != nil {
			return fmt.Errorf("discussion %s: %w", idString(k), err)
		}
		author, ok := idBytes(d.AuthorID)
		if !ok {
			return errBadID("author", d.AuthorID)
		}
		return putPost(tx, author, bytes.Clone(k), nil)
	})
	if err != nil {
		return err
	}
	return tx.Bucket(bucketReplies).ForEach(func(k, v []byte) error {
		r, err := decodeReply(v)
		if err != nil {
			return fmt.Errorf("reply %x: %w", k, err)
		}
		author, ok := idBytes(r.AuthorID)
		if !ok || len(k) != 32 {
			return errBadID("reply author", r.AuthorID)
		}
		return putReplyPlace(tx, author, bytes.Clone(k[:16]), bytes.Clone(k[16:]))
	})
}

func getItem(tx *bolt.Tx, id string) (*moderation.Item, error) {
	k, ok := idBytes(id)
	if !ok {
		return nil, nil
	}
	v := tx.Bucket(bucketModItems).Get(k)
	if v == nil {
		return nil, nil
	}
	var it moderation.Item
	if err := json.Unmarshal(v, &it); err != nil {
		return nil, fmt.Errorf("store: decode moderation item %s: %w", id, err)
	}
	return &it, nil
}

// putItem writes it and keeps its queue entry.
func putItem(tx *bolt.Tx, it *moderation.Item) error {
	v, err := encodeJSON(it)
	if err != nil {
		return err
	}
	return putItemRecord(tx, it, v)
}

// putItemRecord is putItem with it encoded as v.
func putItemRecord(tx *bolt.Tx, it *moderation.Item, v []byte) error {
	k, ok := idBytes(it.ID)
	if !ok {
		return errBadID("item", it.ID)
	}
	if err := tx.Bucket(bucketModItems).Put(k, v); err != nil {
		return err
	}
	if _, queued := commands.ModerationQueue.Entry(it); queued {
		return tx.Bucket(bucketModQueue).Put(k, nil)
	}
	return tx.Bucket(bucketModQueue).Delete(k)
}

func putEntries(tx *bolt.Tx, es []moderation.Entry) error {
	b := tx.Bucket(bucketModLog)
	for i := range es {
		k, ok := idBytes(es[i].ID)
		if !ok {
			return errBadID("log entry", es[i].ID)
		}
		v, err := encodeJSON(&es[i])
		if err != nil {
			return err
		}
		if err := b.Put(k, v); err != nil {
			return err
		}
	}
	return nil
}

// FlagWindow implements moderation.Store.
func (s *DB) FlagWindow(_ context.Context, agentID string) (time.Time, error) {
	var w time.Time
	err := s.db.View(func(tx *bolt.Tx) error {
		if a, ok := idBytes(agentID); ok {
			w = readWindow(tx, windowFlag, a)
		}
		return nil
	})
	return w, err
}

// itemContent reads an item's discussion (nil when none) and the reply
// of the item's id on it (nil for none: a discussion's item has none).
func itemContent(tx *bolt.Tx, it *moderation.Item) (*discussions.Discussion, *discussions.Reply, error) {
	d, err := optDiscussion(tx, it.DiscussionID)
	if err != nil || d == nil {
		return nil, nil, err
	}
	r, err := getReply(tx, it.DiscussionID, it.ID)
	return d, r, err
}

// Queue implements moderation.Store: the queue index holds only the
// items waiting, which are read, sorted, and the first limit read with
// their flags and content.
func (s *DB) Queue(_ context.Context, limit int) ([]moderation.QueueEntry, int, error) {
	var (
		out   []moderation.QueueEntry
		total int
	)
	err := s.db.View(func(tx *bolt.Tx) error {
		var items []moderation.Item
		err := tx.Bucket(bucketModQueue).ForEach(func(k, _ []byte) error {
			it, err := getItem(tx, idString(k))
			if err != nil {
				return err
			}
			if it == nil {
				return fmt.Errorf("store: the moderation queue lists item %s, which does not exist", idString(k))
			}
			items = append(items, *it)
			return nil
		})
		if err != nil {
			return err
		}
		total = len(items)
		slices.SortFunc(items, moderation.CompareQueued)
		for _, it := range items[:min(limit, len(items))] {
			e := moderation.QueueEntry{Item: it}
			ik, _ := idBytes(it.ID)
			c := tx.Bucket(bucketModFlags).Cursor()
			for k, v := c.Seek(ik); k != nil && bytes.HasPrefix(k, ik); k, v = c.Next() {
				var f moderation.Flag
				if err := json.Unmarshal(v, &f); err != nil {
					return fmt.Errorf("store: decode flag on %s: %w", it.ID, err)
				}
				if f.Round == it.Round {
					e.Flags = append(e.Flags, f)
				}
			}
			slices.SortFunc(e.Flags, func(a, b moderation.Flag) int { return a.At.Compare(b.At) })
			d, r, err := itemContent(tx, &it)
			if err != nil {
				return err
			}
			if d == nil {
				return fmt.Errorf("store: moderation item %s is on discussion %s, which does not exist", it.ID, it.DiscussionID)
			}
			e.Discussion, e.Reply = *d, r
			out = append(out, e)
		}
		return nil
	})
	return out, total, err
}

// ListLog implements moderation.Store: newest first, from one seek.
func (s *DB) ListLog(_ context.Context, q moderation.LogQuery) (moderation.LogPage, error) {
	page := moderation.LogPage{Entries: []moderation.Entry{}}
	err := s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketModLog).Cursor()
		var start []byte
		if q.Before != "" {
			k, ok := idBytes(q.Before)
			if !ok {
				return nil
			}
			start = k
		}
		for k, v := seekBefore(c, start); k != nil; k, v = c.Prev() {
			if len(page.Entries) == q.PageSize {
				page.Next = page.Entries[len(page.Entries)-1].ID
				return nil
			}
			var e moderation.Entry
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("store: decode moderation log entry %s: %w", idString(k), err)
			}
			page.Entries = append(page.Entries, e)
		}
		return nil
	})
	return page, err
}

// PostsBy implements moderation.Store, from idx_author_posts.
func (s *DB) PostsBy(_ context.Context, agentID, after string, limit int) ([]moderation.Target, string, error) {
	author, ok := idBytes(agentID)
	if !ok {
		return nil, "", nil
	}
	var (
		out  []moderation.Target
		next string
	)
	err := s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketAuthorPosts).Cursor()
		k, v := c.Seek(author)
		if after != "" {
			a, ok := idBytes(after)
			if !ok {
				return nil
			}
			start := cat(author, a)
			if k, v = c.Seek(start); bytes.Equal(k, start) {
				k, v = c.Next()
			}
		}
		for ; k != nil && bytes.HasPrefix(k, author); k, v = c.Next() {
			if len(out) == limit {
				next = out[len(out)-1].ID
				return nil
			}
			t := moderation.Target{Kind: moderation.KindDiscussion, ID: idString(k[len(author):])}
			if len(v) == 16 {
				t.Kind, t.DiscussionID = moderation.KindReply, idString(v)
			}
			out = append(out, t)
		}
		return nil
	})
	return out, next, err
}
