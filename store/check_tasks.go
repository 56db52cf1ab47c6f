package store

import (
	"bytes"
	"encoding/hex"
	"github.com/kfa-project/kfa/asknet"
	"strconv"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/tasks"
)

// taskHeader reads the task id without its messages.
func taskHeader(tx *bolt.Tx, id string) (tasks.Task, error) {
	k, ok := idBytes(id)
	if !ok {
		return tasks.Task{}, tasks.ErrNotFound
	}
	return headerOf(tx.Bucket(bucketTasks).Get(k))
}

// completingReply is the reply id a completed task's artifact names, or "".
func completingReply(t *tasks.Task) string {
	if len(t.Artifacts) != 1 {
		return ""
	}
	id, ok := strings.CutPrefix(t.Artifacts[0].ArtifactID, "reply-")
	if !ok {
		return ""
	}
	return id
}

// indexKey is where t, owned by owner, belongs in index ix.
func indexKey(ix int, owner []byte, t *tasks.Task) []byte {
	id, _ := idBytes(t.ID)
	return cat(taskIndexes[ix].prefix(owner, t), tsID(t.StatusTime, id))
}

// checkTasks: every task has a known owner, discussion and state; is in
// each of its indexes at its one position, in the message-id map, among
// its discussion's members and (WORKING) working tasks; a COMPLETED task
// names a qualifying reply whose time it carries and whose notice its
// owner got; a WORKING task has no reply that should have completed it.
func (c *checker) checkTasks() error {
	return c.walk(bucketTasks, func(tx *bolt.Tx, k, v []byte) {
		if len(k) != 16 {
			c.rep.addf(VDecode, bucketTasks, k, hex.EncodeToString(k), "", "key is not a 16-byte id")
			return
		}
		id := idString(k)
		t, err := decodeTask(v)
		if err != nil {
			c.rep.addf(VDecode, bucketTasks, k, id, id, "%v", err)
			return
		}
		if t.ID != id {
			c.rep.addf(VTask, bucketTasks, k, id, id, "task record has id %q", t.ID)
			return
		}
		owner, ok1 := idBytes(t.OwnerID)
		disc, ok2 := idBytes(t.DiscussionID)
		if !ok1 || !ok2 || len(t.ContextID) > 255 {
			c.rep.addf(VTask, bucketTasks, k, id, id, "owner %q, discussion %q or context id is malformed", t.OwnerID, t.DiscussionID)
			return
		}
		if tx.Bucket(bucketAgents).Get([]byte(t.OwnerID)) == nil {
			c.rep.addf(VTask, bucketTasks, k, id, id, "owner %s does not exist", t.OwnerID)
		}
		if !tasks.Reachable(t.State) {
			c.rep.addf(VTask, bucketTasks, k, id, id, "state %s is never set by ask-network", t.State)
		}
		for ix, ti := range taskIndexes {
			if ik := indexKey(ix, owner, &t); tx.Bucket(ti.bucket).Get(ik) == nil {
				c.rep.addf(VIndexMissing, ti.bucket, ik, describeIndexKey(ix, ik), id, "task %s (%s) is missing from this index", id, t.State)
			}
		}
		if mk := msgIDKey(owner, t.MessageID); !bytes.Equal(tx.Bucket(bucketTaskMsgIDs).Get(mk), k) {
			detail := "missing: a retry of the ask would create a second task"
			if v := tx.Bucket(bucketTaskMsgIDs).Get(mk); v != nil {
				detail = "points at task " + idString(v)
			}
			c.rep.addf(VMsgID, bucketTaskMsgIDs, mk, t.OwnerID+"|"+strconv.Quote(t.MessageID), id,
				"message id entry of task %s is %s", id, detail)
		}
		mk := cat(disc, owner)
		if !hasID(tx.Bucket(bucketDiscMembers).Get(mk), k) {
			c.rep.addf(VTaskDisc, bucketDiscMembers, mk, t.DiscussionID+"|"+t.OwnerID, id,
				"task %s is missing from its discussion's members (its owner would not hear of replies)", id)
		}
		wk := cat(disc, k)
		if w := tx.Bucket(bucketTaskDiscWorking).Get(wk); inWorking(&t) && !bytes.Equal(w, owner) {
			c.rep.addf(VTaskDisc, bucketTaskDiscWorking, wk, t.DiscussionID+"|"+id, id,
				"working task %s is missing from its discussion's working tasks (a reply would not complete it)", id)
		}
		dv := tx.Bucket(bucketDiscussions).Get(disc)
		if dv == nil {
			c.rep.addf(VTask, bucketTasks, k, id, id, "discussion %s does not exist", t.DiscussionID)
			return
		}
		d, err := decodeDiscussion(dv)
		if err != nil {
			return // reported with the discussion
		}
		c.completion(tx, k, &t, d)
	})
}

// hasID reports whether ids (16 bytes each) holds id.
func hasID(ids, id []byte) bool {
	for i := 0; i+16 <= len(ids); i += 16 {
		if bytes.Equal(ids[i:i+16], id) {
			return true
		}
	}
	return false
}

// completion checks a COMPLETED task's reply and notice, and that no
// stored reply should have completed a WORKING one.
func (c *checker) completion(tx *bolt.Tx, k []byte, t *tasks.Task, d discussions.Discussion) {
	id := t.ID
	disc, _ := idBytes(t.DiscussionID)
	replies := tx.Bucket(bucketReplies)
	switch {
	case t.Answered():
		replyID := completingReply(t)
		rk, ok := idBytes(replyID)
		var rv []byte
		if ok {
			rv = replies.Get(cat(disc, rk))
		}
		if replyID == "" {
			c.rep.addf(VCompletion, bucketTasks, k, id, id, "completed, but has no reply artifact (reply-<replyId>)")
			return
		}
		if rv == nil {
			c.rep.addf(VCompletion, bucketTasks, k, id, id, "completed by reply %s, which is not on discussion %s", replyID, d.ID)
			return
		}
		r, err := decodeReply(rv)
		switch {
		case err != nil:
			return // reported with the reply
		case !asknet.Completes(d, *t, r):
			c.rep.addf(VCompletion, bucketTasks, k, id, id,
				"completed by reply %s, which does not complete it (by the discussion's own author, or its own owner)", r.ID)
			return
		case !r.CreatedAt.Equal(t.StatusTime):
			c.rep.addf(VCompletion, bucketTasks, k, id, id, "status timestamp %s differs from the time of reply %s (%s)",
				a2a.FormatTime(t.StatusTime), r.ID, a2a.FormatTime(r.CreatedAt))
		}
		// The reply told the owner, naming this task.
		owner, _ := idBytes(t.OwnerID)
		ek, _ := idBytes(discussions.InboxEntryID(r.ID, t.OwnerID, r.CreatedAt))
		ik := cat(owner, ek)
		ev := tx.Bucket(bucketInbox).Get(ik)
		if ev == nil {
			c.rep.addf(VInbox, bucketInbox, ik, t.OwnerID+"|"+idString(ek), "",
				"agent %s was not notified of reply %s on discussion %s", t.OwnerID, r.ID, d.ID)
			return
		}
		if e, err := decodeInbox(ev); err == nil && !containsString(e.TaskIDs, id) {
			c.rep.addf(VInbox, bucketInbox, ik, t.OwnerID+"|"+idString(ek), id,
				"entry for reply %s does not list task %s, which the reply completed", r.ID, id)
		}
	case t.Waiting():
		// A qualifying reply completes the tasks its decision saw, and
		// its notice to their owner lists them: a task still waiting that
		// such a notice lists was seen and not completed. A reply that did
		// not see it (one committed before the task, while every answer
		// was hidden, say) is no fault, whatever the times say.
		owner, _ := idBytes(t.OwnerID)
		inbox := tx.Bucket(bucketInbox)
		var late string
		prefixed(replies, disc, func(_, v []byte) {
			r, err := decodeReply(v)
			if late != "" || err != nil || owner == nil || !asknet.Completes(d, *t, r) {
				return
			}
			ek, _ := idBytes(discussions.InboxEntryID(r.ID, t.OwnerID, r.CreatedAt))
			if ev := inbox.Get(cat(owner, ek)); ev != nil {
				if e, err := decodeInbox(ev); err == nil && containsString(e.TaskIDs, id) {
					late = r.ID + " by " + r.AuthorID
				}
			}
		})
		if late != "" {
			c.rep.addf(VCompletion, bucketTasks, k, id, id, "still working, but qualifying reply %s saw it and should have completed it", late)
		}
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// checkTaskIndexes: every entry of the task indexes is some task's
// position, with the value the task gives it (an entry that is not is
// stale: the task is listed twice, or under an old state, time or owner),
// counted for the counters of the counted indexes.
func (c *checker) checkTaskIndexes() error {
	for ix, ti := range taskIndexes {
		err := c.walk(ti.bucket, func(tx *bolt.Tx, k, v []byte) {
			if len(k) < 24 {
				c.rep.addf(VDecode, ti.bucket, k, hex.EncodeToString(k), "", "key is shorter than timestamp (8) | task id (16)")
				return
			}
			if ti.counted {
				c.expected[string(counterKey(ti.bucket, k[:len(k)-24]))]++
			}
			id := k[len(k)-16:]
			t, err := headerOf(tx.Bucket(bucketTasks).Get(id))
			if err != nil {
				c.rep.addf(VIndexDangling, ti.bucket, k, describeIndexKey(ix, k), idString(id),
					"entry points at task %s, which does not exist", idString(id))
				return
			}
			owner, _ := idBytes(t.OwnerID)
			if want := indexKey(ix, owner, &t); !bytes.Equal(k, want) {
				c.rep.addf(VIndexStale, ti.bucket, k, describeIndexKey(ix, k), idString(id),
					"entry does not match task %s (%s since %s): the task is indexed at %s",
					idString(id), t.State, a2a.FormatTime(t.StatusTime), describeIndexKey(ix, want))
			} else if want := indexValue(ix, owner, &t); !bytes.Equal(v, want) {
				c.rep.addf(VIndexStale, ti.bucket, k, describeIndexKey(ix, k), idString(id),
					"entry's value %s does not match task %s (owner %s, %s)", describeIndexValue(ix, v), idString(id), t.OwnerID, t.State)
			}
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// checkTaskMaps: the message-id map, the discussion members and the
// working tasks point at existing tasks that agree with them.
func (c *checker) checkTaskMaps() error {
	err := c.walk(bucketTaskMsgIDs, func(tx *bolt.Tx, k, v []byte) {
		if len(k) < 16 || len(v) != 16 {
			c.rep.addf(VDecode, bucketTaskMsgIDs, k, hex.EncodeToString(k), "", "entry is not owner (16) | message id -> task id (16)")
			return
		}
		desc := idString(k[:16]) + "|" + strconv.Quote(string(k[16:]))
		t, err := headerOf(tx.Bucket(bucketTasks).Get(v))
		switch {
		case err != nil:
			c.rep.addf(VMsgID, bucketTaskMsgIDs, k, desc, idString(v), "entry points at task %s, which does not exist", idString(v))
		case t.OwnerID != idString(k[:16]) || t.MessageID != string(k[16:]):
			c.rep.addf(VMsgID, bucketTaskMsgIDs, k, desc, idString(v), "entry points at task %s, whose owner and message id differ", idString(v))
		}
	})
	if err != nil {
		return err
	}
	err = c.walk(bucketDiscMembers, func(tx *bolt.Tx, k, v []byte) {
		if len(k) != 32 || len(v) == 0 || len(v)%16 != 0 {
			c.rep.addf(VDecode, bucketDiscMembers, k, hex.EncodeToString(k), "", "entry is not discussion id (16) | owner (16) -> task ids (16 each)")
			return
		}
		desc := idString(k[:16]) + "|" + idString(k[16:])
		for i := 0; i < len(v); i += 16 {
			tid := idString(v[i : i+16])
			t, err := headerOf(tx.Bucket(bucketTasks).Get(v[i : i+16]))
			switch {
			case err != nil:
				c.rep.addf(VTaskDisc, bucketDiscMembers, k, desc, tid, "entry lists task %s, which does not exist", tid)
			case t.DiscussionID != idString(k[:16]) || t.OwnerID != idString(k[16:]):
				c.rep.addf(VTaskDisc, bucketDiscMembers, k, desc, tid,
					"entry says task %s of %s is on discussion %s; the task says %s of %s", tid, idString(k[16:]), idString(k[:16]),
					t.DiscussionID, t.OwnerID)
			}
		}
	})
	if err != nil {
		return err
	}
	return c.walk(bucketTaskDiscWorking, func(tx *bolt.Tx, k, v []byte) {
		if len(k) != 32 || len(v) != 16 {
			c.rep.addf(VDecode, bucketTaskDiscWorking, k, hex.EncodeToString(k), "", "entry is not discussion id (16) | task id (16) -> owner (16)")
			return
		}
		desc := idString(k[:16]) + "|" + idString(k[16:])
		tid := idString(k[16:])
		t, err := headerOf(tx.Bucket(bucketTasks).Get(k[16:]))
		switch {
		case err != nil:
			c.rep.addf(VTaskDisc, bucketTaskDiscWorking, k, desc, tid, "entry points at task %s, which does not exist", tid)
		case !inWorking(&t):
			c.rep.addf(VTaskDisc, bucketTaskDiscWorking, k, desc, tid, "entry lists task %s as working; it is %s", tid, t.State)
		case t.DiscussionID != idString(k[:16]) || t.OwnerID != idString(v):
			c.rep.addf(VTaskDisc, bucketTaskDiscWorking, k, desc, tid,
				"entry says task %s of %s is on discussion %s; the task says %s of %s", tid, idString(v), idString(k[:16]),
				t.DiscussionID, t.OwnerID)
		}
	})
}
