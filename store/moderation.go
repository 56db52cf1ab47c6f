package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/changelog"
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

// replyDiscussion is the id of reply id's discussion ("" when none).
func replyDiscussion(tx *bolt.Tx, id string) string {
	k, ok := idBytes(id)
	if !ok {
		return ""
	}
	if v := tx.Bucket(bucketReplyDiscs).Get(k); len(v) == 16 {
		return idString(v)
	}
	return ""
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
	k, ok := idBytes(it.ID)
	if !ok {
		return errBadID("item", it.ID)
	}
	v, err := encodeJSON(it)
	if err != nil {
		return err
	}
	if err := tx.Bucket(bucketModItems).Put(k, v); err != nil {
		return err
	}
	if it.Queued {
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

// putContent writes what a moderation command changed of the content:
// the discussion (listed before as was) and the reply.
func putContent(tx *bolt.Tx, c moderation.Content, was byte) error {
	if c.Discussion != nil {
		if err := putDiscussion(tx, c.Discussion, was); err != nil {
			return err
		}
	}
	if c.Reply != nil {
		dk, ok1 := idBytes(c.Reply.DiscussionID)
		rk, ok2 := idBytes(c.Reply.ID)
		if !ok1 || !ok2 {
			return errBadID("reply", c.Reply.ID)
		}
		v, err := encodeJSON(c.Reply)
		if err != nil {
			return err
		}
		if err := tx.Bucket(bucketReplies).Put(cat(dk, rk), v); err != nil {
			return err
		}
	}
	return nil
}

// loadTarget loads the discussion and reply target t names (for a reply
// named by id alone, its discussion from reply_discs) and the item.
func loadTarget(tx *bolt.Tx, t moderation.Target) (d *discussions.Discussion, r *discussions.Reply, it *moderation.Item, err error) {
	discID := t.ID
	if t.Kind == moderation.KindReply {
		if discID = t.DiscussionID; discID == "" {
			discID = replyDiscussion(tx, t.ID)
		}
	}
	if d, err = optDiscussion(tx, discID); err != nil || d == nil {
		return nil, nil, nil, err
	}
	if t.Kind == moderation.KindReply {
		if r, err = getReply(tx, discID, t.ID); err != nil {
			return nil, nil, nil, err
		}
	}
	it, err = getItem(tx, t.ID)
	return d, r, it, err
}

// replyHeader is what firstAnswer reads of a reply: not its body.
type replyHeader struct {
	ID        string    `json:"id"`
	AuthorID  string    `json:"authorId"`
	CreatedAt time.Time `json:"createdAt"`
	Hidden    bool      `json:"hidden"`
}

// firstAnswer loads what answers discussion d besides reply skip (a
// moderation command's Answer): its earliest visible reply, other than
// skip, by someone other than d's author; nil when it has none. Replies
// are read in key order (ids are ULIDs: in time order), bodies left
// undecoded, until one is found: at most the discussion's replies,
// which --max-replies bounds.
func firstAnswer(tx *bolt.Tx, d *discussions.Discussion, skip string) (*discussions.Reply, error) {
	dk, ok := idBytes(d.ID)
	if !ok {
		return nil, nil
	}
	c := tx.Bucket(bucketReplies).Cursor()
	for k, v := c.Seek(dk); k != nil && bytes.HasPrefix(k, dk); k, v = c.Next() {
		var h replyHeader
		if err := json.Unmarshal(v, &h); err != nil {
			return nil, fmt.Errorf("store: decode reply %s: %w", idString(k[len(dk):]), err)
		}
		if h.Hidden || h.ID == skip || h.AuthorID == d.AuthorID {
			continue
		}
		r, err := decodeReply(v)
		return &r, err
	}
	return nil, nil
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

// FlagItem implements moderation.Store: load, moderation.DecideFlag,
// persist, in one transaction.
func (s *DB) FlagItem(_ context.Context, c moderation.FlagCommand, p moderation.Policy) (moderation.FlagResult, error) {
	agent, ok := idBytes(c.AgentID)
	if !ok {
		return moderation.FlagResult{}, errBadID("agent", c.AgentID)
	}
	var out moderation.FlagOutcome
	err := s.exec(func(tx *bolt.Tx) (func(*bolt.Tx) error, error) {
		var (
			st  moderation.FlagState
			err error
		)
		if st.Agent, err = loadAgent(tx, c.AgentID); err != nil {
			return nil, err
		}
		if st.Discussion, st.Reply, st.Item, err = loadTarget(tx, c.Target); err != nil {
			return nil, err
		}
		if st.Reply != nil {
			if st.Answer, err = firstAnswer(tx, st.Discussion, st.Reply.ID); err != nil {
				return nil, err
			}
		}
		if ik, ok := idBytes(c.Target.ID); ok {
			st.Flagged = tx.Bucket(bucketModFlags).Get(cat(ik, agent)) != nil
		}
		st.Window = readWindow(tx, windowFlag, agent)
		if out, err = moderation.DecideFlag(st, c, p); err != nil || out.Result.AlreadyFlagged {
			return nil, err
		}
		was := listing(st.Discussion)
		return func(tx *bolt.Tx) error {
			ik, _ := idBytes(out.Flag.ItemID)
			v, err := encodeJSON(&out.Flag)
			if err != nil {
				return err
			}
			if err := tx.Bucket(bucketModFlags).Put(cat(ik, agent), v); err != nil {
				return err
			}
			if out.Window != nil {
				if err := putWindow(tx, windowFlag, agent, *out.Window); err != nil {
					return err
				}
			}
			return s.persistModeration(tx, &out.Item, out.Content, was, out.Entries, out.Events, c.At)
		}, nil
	})
	return out.Result, err
}

// persistModeration writes an item, the content a command changed, its
// audit entries and its events.
func (s *DB) persistModeration(tx *bolt.Tx, it *moderation.Item, c moderation.Content, was byte,
	es []moderation.Entry, evs []changelog.Event, at time.Time) error {
	if err := putItem(tx, it); err != nil {
		return err
	}
	if err := putContent(tx, c, was); err != nil {
		return err
	}
	if err := putEntries(tx, es); err != nil {
		return err
	}
	return s.appendEvents(tx, evs, at)
}

// Moderate implements moderation.Store: find the target, load,
// moderation.DecideModerate, persist, in one transaction.
func (s *DB) Moderate(_ context.Context, c moderation.Command) (moderation.Result, error) {
	var out moderation.Outcome
	err := s.exec(func(tx *bolt.Tx) (func(*bolt.Tx) error, error) {
		cmd := c
		if cmd.Target.Kind == "" {
			cmd.Target.Kind = moderation.KindDiscussion
			if k, ok := idBytes(c.Target.ID); !ok || tx.Bucket(bucketDiscussions).Get(k) == nil {
				cmd.Target.Kind = moderation.KindReply
			}
		}
		var (
			st  moderation.State
			err error
		)
		if c.Actor.Kind == moderation.ActorAgent {
			if st.Actor, err = loadAgent(tx, c.Actor.ID); err != nil {
				return nil, err
			}
		}
		if st.Discussion, st.Reply, st.Item, err = loadTarget(tx, cmd.Target); err != nil {
			return nil, err
		}
		if st.Reply != nil {
			if st.Answer, err = firstAnswer(tx, st.Discussion, st.Reply.ID); err != nil {
				return nil, err
			}
		}
		if out, err = moderation.DecideModerate(st, cmd); err != nil {
			if c.Target.Kind == "" {
				err = &moderation.ItemNotFoundError{ID: c.Target.ID} // it was looked for as either
			}
			return nil, err
		}
		if !out.Result.Changed {
			return nil, nil
		}
		was := listing(st.Discussion)
		return func(tx *bolt.Tx) error {
			return s.persistModeration(tx, &out.Item, out.Content, was, out.Entries, out.Events, c.At)
		}, nil
	})
	return out.Result, err
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
			d, r, _, err := loadTarget(tx, moderation.Target{Kind: it.Kind, ID: it.ID, DiscussionID: it.DiscussionID})
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
