package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/oklog/ulid/v2"
	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/discussions"
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

// ListReplies implements discussions.Store: replies oldest first.
func (s *DB) ListReplies(_ context.Context, discussionID string) ([]discussions.Reply, error) {
	k, ok := idBytes(discussionID)
	if !ok {
		return nil, discussions.ErrNotFound
	}
	out := []discussions.Reply{}
	err := s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketReplies).Cursor()
		for rk, v := c.Seek(k); rk != nil && bytes.HasPrefix(rk, k); rk, v = c.Next() {
			r, err := decodeReply(v)
			if err != nil {
				return err
			}
			out = append(out, r)
		}
		return nil
	})
	return out, err
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

// inboxEntryID derives the id of the entry telling agentID about replyID.
// It is a function of both, so a re-run of a group-commit transaction
// writes the same entry, and it sorts by the reply's time.
func inboxEntryID(replyID, agentID string, at time.Time) string {
	sum := sha256.Sum256([]byte(replyID + "|" + agentID))
	var id ulid.ULID
	_ = id.SetTime(ulid.Timestamp(at))
	_ = id.SetEntropy(sum[:10])
	return id.String()
}

// AddReply implements discussions.Store. In one transaction it stores the
// reply; when it qualifies, completes every WORKING task mapped to the
// discussion except the replier's (tasks.Task.CompleteByReply) and marks
// the discussion answered; and it writes one inbox entry for every agent
// with a task on the discussion (and the author), except the replier.
func (s *DB) AddReply(_ context.Context, r discussions.Reply) (discussions.ReplyResult, error) {
	rk, ok := idBytes(r.ID)
	if !ok {
		return discussions.ReplyResult{}, errBadID("reply", r.ID)
	}
	var res discussions.ReplyResult
	err := s.update(func(tx *bolt.Tx) error {
		res = discussions.ReplyResult{Reply: r}
		d, dk, err := getDiscussion(tx, r.DiscussionID)
		if err != nil {
			return refuse(err)
		}
		v, err := encodeJSON(r)
		if err != nil {
			return err
		}
		if err := tx.Bucket(bucketReplies).Put(cat(dk, rk), v); err != nil {
			return err
		}
		res.Qualifying = discussions.Qualifies(d, r)
		ref := tasks.ReplyRef{
			DiscussionID: d.ID, ReplyID: r.ID, AuthorID: r.AuthorID, AuthorName: r.AuthorName,
			Body: r.Body, At: r.CreatedAt,
		}

		// Every task on the discussion: complete the waiting ones (when the
		// reply qualifies) and group them by owner for the inbox.
		byOwner := map[string][]string{d.AuthorID: nil}
		moves := newIndexBatch()
		var artifacts []byte // the same for every task the reply completes
		tb := tx.Bucket(bucketTasks)
		c := tx.Bucket(bucketTaskByDisc).Cursor()
		for k, ownerBytes := c.Seek(dk); k != nil && bytes.HasPrefix(k, dk); k, ownerBytes = c.Next() {
			taskID, owner := idString(k[len(dk):]), idString(ownerBytes)
			byOwner[owner] = append(byOwner[owner], taskID)
			if !res.Qualifying || owner == r.AuthorID {
				continue
			}
			v := tb.Get(k[len(dk):])
			if v == nil {
				return fmt.Errorf("store: discussion %s lists task %s, which does not exist", d.ID, taskID)
			}
			old, t, rec, changed, err := completeTask(v, ref, &artifacts)
			if err != nil {
				return err
			}
			if changed {
				if err := moves.add(&old, -1); err != nil {
					return err
				}
				if err := moves.add(&t, +1); err != nil {
					return err
				}
				if err := putTaskRecord(tx, &t, rec); err != nil {
					return err
				}
				s.notifyOnCommit(tx, t)
				res.CompletedTaskIDs = append(res.CompletedTaskIDs, t.ID)
			}
		}
		if err := moves.apply(tx); err != nil {
			return err
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

		owners := make([]string, 0, len(byOwner))
		for o := range byOwner {
			if o != r.AuthorID {
				owners = append(owners, o)
			}
		}
		slices.Sort(owners)
		for _, o := range owners {
			e := discussions.InboxEntry{
				ID: inboxEntryID(r.ID, o, r.CreatedAt), AgentID: o, DiscussionID: d.ID, ReplyID: r.ID,
				TaskIDs: byOwner[o], CreatedAt: r.CreatedAt,
			}
			if e.TaskIDs == nil {
				e.TaskIDs = []string{}
			}
			if err := putInbox(tx, e, true); err != nil {
				return err
			}
			res.Notified++
		}
		return nil
	})
	if err != nil {
		return discussions.ReplyResult{}, err
	}
	return res, nil
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
