package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/store/internal/storedoc"
	"github.com/kfa-project/kfa/tasks"
)

func statusByte(s discussions.Status) byte {
	if s == discussions.StatusAnswered {
		return 2
	}
	return 1
}

var keyDiscCount = []byte("discussions")

func discCountKey(s discussions.Status) []byte {
	return cat(keyDiscCount, []byte{0, statusByte(s)})
}

// putDiscussion writes d, moving its status index entry from oldStatus
// ("" for a new discussion).
func putDiscussion(tx *bolt.Tx, d *discussions.Discussion, oldStatus discussions.Status) error {
	v, err := encodeJSON(d)
	if err != nil {
		return err
	}
	return putDiscussionRecord(tx, d, v, oldStatus)
}

// putDiscussionRecord is putDiscussion with d already encoded as v.
func putDiscussionRecord(tx *bolt.Tx, d *discussions.Discussion, v []byte, oldStatus discussions.Status) error {
	k, ok := idBytes(d.ID)
	if !ok {
		return errBadID("discussion", d.ID)
	}
	counts := tx.Bucket(bucketCounts)
	idx := tx.Bucket(bucketDiscByStatus)
	if oldStatus != d.Status {
		if oldStatus != "" {
			if err := idx.Delete(cat([]byte{statusByte(oldStatus)}, k)); err != nil {
				return err
			}
			if err := counter(counts, discCountKey(oldStatus), -1); err != nil {
				return err
			}
		} else if err := counter(counts, keyDiscCount, 1); err != nil {
			return err
		}
		if err := idx.Put(cat([]byte{statusByte(d.Status)}, k), nil); err != nil {
			return err
		}
		if err := counter(counts, discCountKey(d.Status), 1); err != nil {
			return err
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
	k, ok := idBytes(q.DiscussionID)
	if !ok {
		return discussions.ReplyPage{}, discussions.ErrNotFound
	}
	page := discussions.ReplyPage{Replies: []discussions.Reply{}}
	err := s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketReplies).Cursor()
		rk, v := c.Seek(k)
		if q.After != "" {
			after, ok := idBytes(q.After)
			if !ok {
				return nil
			}
			start := cat(k, after)
			if rk, v = c.Seek(start); bytes.Equal(rk, start) {
				rk, v = c.Next()
			}
		}
		for ; rk != nil && bytes.HasPrefix(rk, k); rk, v = c.Next() {
			if len(page.Replies) == q.PageSize {
				page.Next = page.Replies[len(page.Replies)-1].ID
				return nil
			}
			r, err := decodeReply(v)
			if err != nil {
				return err
			}
			page.Replies = append(page.Replies, r)
		}
		return nil
	})
	return page, err
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
		start := prefixEnd(prefix)
		if q.After != "" {
			id, ok := idBytes(q.After)
			if !ok {
				return discussions.ErrNotFound
			}
			start = cat(prefix, id)
		}
		db := tx.Bucket(bucketDiscussions)
		for k, v := seekBefore(c, start); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Prev() {
			if len(page.Discussions) == q.PageSize {
				page.Next = page.Discussions[len(page.Discussions)-1].ID
				return nil
			}
			if prefix != nil {
				v = db.Get(k[len(prefix):])
			}
			d, err := decodeDiscussion(v)
			if err != nil {
				return err
			}
			page.Discussions = append(page.Discussions, d)
		}
		return nil
	})
	return page, err
}

// AddReply implements discussions.Store. In one transaction it stores the
// reply; when it qualifies, completes every WORKING task mapped to the
// discussion except the replier's (tasks.Task.CompleteByReply) and marks
// the discussion answered; and it writes one inbox entry for every agent
// with a task on the discussion (and the author), except the replier.
// It walks the discussion's working tasks and its members, never the tasks
// that are done with. Its checks run first in a read transaction, so a
// refused reply never queues a write.
func (s *DB) AddReply(_ context.Context, r discussions.Reply, lim discussions.Limits) (discussions.ReplyResult, error) {
	rk, ok := idBytes(r.ID)
	if !ok {
		return discussions.ReplyResult{}, errBadID("reply", r.ID)
	}
	if err := s.db.View(func(tx *bolt.Tx) error { _, _, _, err := checkReply(tx, r, lim); return err }); err != nil {
		return discussions.ReplyResult{}, unrefuse(err)
	}
	var res discussions.ReplyResult
	err := s.update(func(tx *bolt.Tx) error {
		res = discussions.ReplyResult{Reply: r}
		d, dk, win, err := checkReply(tx, r, lim)
		if err != nil {
			return err
		}
		// Checks are done; from here on only writes.
		v, err := encodeJSON(r)
		if err != nil {
			return err
		}
		if err := tx.Bucket(bucketReplies).Put(cat(dk, rk), v); err != nil {
			return err
		}
		if err := putWindow(tx, win); err != nil {
			return err
		}
		evs := []changelog.Event{{Kind: changelog.DiscussionReplied, ID: d.ID, Owner: r.AuthorID, Ref: r.ID, At: r.CreatedAt}}
		res.Qualifying = discussions.Qualifies(d, r)
		if res.Qualifying {
			evs[0].Note = changelog.NoteQualifying
			if res.CompletedTaskIDs, err = s.completeWorking(tx, dk, r, &evs); err != nil {
				return err
			}
		}

		oldStatus := d.Status
		d.ReplyCount++
		if res.Qualifying && d.Status == discussions.StatusOpen {
			d.Status = discussions.StatusAnswered
			d.AnsweredAt = r.CreatedAt
		}
		if err := putDiscussion(tx, &d, oldStatus); err != nil {
			return err
		}
		if res.Notified, err = notifyMembers(tx, dk, d, r); err != nil {
			return err
		}
		return s.appendEvents(tx, evs, r.CreatedAt)
	})
	if err != nil {
		return discussions.ReplyResult{}, err
	}
	return res, nil
}

// checkReply is the reading part of a reply: the discussion, its bound on
// replies, the author's reply window. It writes nothing; what it refuses
// is a refusal.
func checkReply(tx *bolt.Tx, r discussions.Reply, lim discussions.Limits) (discussions.Discussion, []byte, *window, error) {
	d, dk, err := getDiscussion(tx, r.DiscussionID)
	if err != nil {
		return d, nil, nil, refuse(err)
	}
	if lim.MaxReplies > 0 && d.ReplyCount >= lim.MaxReplies {
		return d, nil, nil, refuse(discussions.ErrTooManyReplies)
	}
	author, ok := idBytes(r.AuthorID)
	if !ok {
		return d, nil, nil, refuse(errBadID("author", r.AuthorID))
	}
	win, err := takeWindow(tx, windowReply, author, lim.ReplyRate, r.CreatedAt)
	return d, dk, win, err
}

// completeWorking completes the discussion's WORKING tasks that r
// answers (all but the replier's own), and returns their ids in id order;
// it adds the log events of the transitions and their deliveries to evs.
func (s *DB) completeWorking(tx *bolt.Tx, dk []byte, r discussions.Reply, evs *[]changelog.Event) ([]string, error) {
	ref := tasks.ReplyRef{
		DiscussionID: r.DiscussionID, ReplyID: r.ID, AuthorID: r.AuthorID, AuthorName: r.AuthorName,
		Body: r.Body, At: r.CreatedAt,
	}
	var done []string
	moves := newIndexBatch()
	var artifacts []byte // the same for every task the reply completes
	tb := tx.Bucket(bucketTasks)
	c := tx.Bucket(bucketTaskDiscWorking).Cursor()
	for k, ownerBytes := c.Seek(dk); k != nil && bytes.HasPrefix(k, dk); k, ownerBytes = c.Next() {
		if idString(ownerBytes) == r.AuthorID {
			continue
		}
		taskID := idString(k[len(dk):])
		v := tb.Get(k[len(dk):])
		if v == nil {
			return nil, fmt.Errorf("store: discussion %s lists working task %s, which does not exist", r.DiscussionID, taskID)
		}
		old, t, rec, changed, err := completeTask(v, ref, &artifacts)
		if err != nil {
			return nil, err
		}
		if !changed {
			continue
		}
		if err := moves.add(&old, -1); err != nil {
			return nil, err
		}
		if err := moves.add(&t, +1); err != nil {
			return nil, err
		}
		if err := putTaskRecord(tx, &t, rec); err != nil {
			return nil, err
		}
		due, err := enqueuePush(tx, &t)
		if err != nil {
			return nil, err
		}
		*evs = append(append(*evs, taskMoved(&t)), due...)
		done = append(done, t.ID)
	}
	return done, moves.apply(tx)
}

// notifyMembers writes one inbox entry about r for every agent with a task
// on the discussion, and for its author, except r's author. It returns how
// many it wrote.
func notifyMembers(tx *bolt.Tx, dk []byte, d discussions.Discussion, r discussions.Reply) (int, error) {
	n := 0
	notify := func(agent string, taskIDs []string) error {
		if agent == r.AuthorID {
			return nil
		}
		e := discussions.InboxEntry{
			ID: storedoc.InboxEntryID(r.ID, agent, r.CreatedAt), AgentID: agent, DiscussionID: d.ID, ReplyID: r.ID,
			TaskIDs: taskIDs, CreatedAt: r.CreatedAt,
		}
		n++
		return putInbox(tx, e, true)
	}
	// Members are in owner order; the discussion's author goes in its place
	// even without a task of its own.
	authorDone := false
	c := tx.Bucket(bucketDiscMembers).Cursor()
	for k, v := c.Seek(dk); k != nil && bytes.HasPrefix(k, dk); k, v = c.Next() {
		owner := idString(k[len(dk):])
		if !authorDone && owner >= d.AuthorID {
			authorDone = true
			if owner != d.AuthorID {
				if err := notify(d.AuthorID, []string{}); err != nil {
					return n, err
				}
			}
		}
		if err := notify(owner, memberTasks(v)); err != nil {
			return n, err
		}
	}
	if !authorDone {
		if err := notify(d.AuthorID, []string{}); err != nil {
			return n, err
		}
	}
	return n, nil
}

// completeTask applies tasks.Task.CompleteByReply to a stored task and
// returns the task before and after (neither with its history, which a
// completion leaves as it is) and the new record. A format-2 record is
// transitioned without decoding its history: the new record reuses the
// stored history bytes, and only the status and artifacts are encoded.
//
// artifacts carries the JSON of the completion's artifacts from one task
// to the next: CompleteByReply gives every task the same artifacts for the
// same reply, so they are encoded once per reply.
func completeTask(v []byte, ref tasks.ReplyRef, artifacts *[]byte) (old, t tasks.Task, rec []byte, changed bool, err error) {
	if len(v) > 0 && v[0] == taskFormatJSON {
		if t, err = decodeTask(v); err != nil {
			return
		}
		old = t
		if changed = t.CompleteByReply(ref); changed {
			rec, err = encodeTask(&t)
		}
		return
	}
	r, err := parseTask(v)
	if err != nil {
		return
	}
	t = r.header()
	old = t
	if changed = t.CompleteByReply(ref); !changed {
		return
	}
	w := r.wire
	if w.Status, err = json.Marshal(a2a.TaskStatus{State: t.State, Message: t.StatusMessage, Timestamp: a2a.FormatTime(t.StatusTime)}); err != nil {
		return
	}
	w.Artifacts = nil
	if len(t.Artifacts) > 0 {
		if *artifacts == nil {
			if *artifacts, err = json.Marshal(t.Artifacts); err != nil {
				return
			}
		}
		w.Artifacts = *artifacts
	}
	return old, t, encodeTaskWire(&t, &w), true, nil
}
