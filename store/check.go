package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/tasks"
)

// MaxViolations bounds the violations a report lists; the rest are only
// counted (CheckReport.Truncated), so a badly damaged file still gives a
// readable report.
const MaxViolations = 1000

// Kinds of violation. Each names the invariant that is broken.
const (
	// VBolt is a problem bbolt's own consistency check found (pages,
	// freelist, key order).
	VBolt = "bbolt"
	// VDecode is a value that does not decode, or a key of the wrong shape.
	VDecode = "decode"
	// VIndexDangling is a task index entry whose task does not exist.
	VIndexDangling = "index-dangling"
	// VIndexStale is a task index entry for an existing task at the wrong
	// position (old state, time, owner or context): the task is indexed
	// twice, or in the wrong place.
	VIndexStale = "index-stale"
	// VIndexMissing is a task missing from one of its indexes.
	VIndexMissing = "index-missing"
	// VCounter is a counter that differs from what it counts.
	VCounter = "counter"
	// VMsgID is a message-id map entry that is missing or wrong.
	VMsgID = "msgid"
	// VTaskDisc is an idx_task_disc entry that is missing or wrong.
	VTaskDisc = "task-disc"
	// VTask is a task that breaks a rule of its own: an unknown owner or
	// discussion, or a state ask-network never sets.
	VTask = "task"
	// VCompletion is a COMPLETED task without its qualifying reply, or a
	// WORKING task that a stored qualifying reply should have completed.
	VCompletion = "completion"
	// VDiscussion is a discussion whose status, answer time or reply count
	// disagrees with its replies, or whose status index entry is wrong.
	VDiscussion = "discussion"
	// VReply is a reply stored under the wrong key or without discussion.
	VReply = "reply"
	// VInbox is an inbox entry that points at nothing, an unacked index
	// entry that disagrees with its entry, or a notice a reply should have
	// written and did not.
	VInbox = "inbox"
	// VAgent is an agent or credential record that disagrees with another.
	VAgent = "agent"
)

// Violation is one broken invariant.
type Violation struct {
	Kind   string // one of the V* constants
	Bucket string // the bucket holding the offending entry
	Key    string // the entry's key, decoded for people
	KeyHex string // the raw key, for repair by hand
	TaskID string // the task concerned, when there is one
	Detail string // what is wrong, in a sentence
}

// CheckReport is the result of a check.
type CheckReport struct {
	Path          string
	SchemaVersion int
	// Examined counts the entries looked at, by bucket.
	Examined   map[string]int
	Violations []Violation
	// Truncated is how many more violations were found than listed.
	Truncated int
	// Notes say what was not checked, and why.
	Notes []string
}

// OK reports whether no violation was found.
func (r *CheckReport) OK() bool { return len(r.Violations) == 0 }

func (r *CheckReport) add(v Violation) {
	if len(r.Violations) >= MaxViolations {
		r.Truncated++
		return
	}
	r.Violations = append(r.Violations, v)
}

func (r *CheckReport) addf(kind string, bucket []byte, key []byte, keyDesc, taskID, format string, args ...any) {
	r.add(Violation{Kind: kind, Bucket: string(bucket), Key: keyDesc, KeyHex: hex.EncodeToString(key), TaskID: taskID,
		Detail: fmt.Sprintf(format, args...)})
}

func (r *CheckReport) examined(bucket []byte, n int) {
	if r.Examined == nil {
		r.Examined = map[string]int{}
	}
	r.Examined[string(bucket)] += n
}

// errRollback ends the write transaction bbolt's check runs in without
// committing anything.
var errRollback = errors.New("store: check done")

// Check verifies the open store: bbolt's own consistency check, then kfa's
// invariants (see the V* kinds) over one read transaction, so the
// invariants are judged on a single consistent snapshot while the server
// keeps serving. bbolt's check reads the shared freelist, which a writer
// may change; it runs in a write transaction that is rolled back, so
// writers wait for that part only.
func (s *DB) Check(ctx context.Context) (CheckReport, error) {
	rep := CheckReport{Path: s.path}
	check := func(tx *bolt.Tx) error {
		checkBolt(tx, &rep)
		return errRollback
	}
	var err error
	if s.readOnly {
		err = s.db.View(check)
	} else {
		err = s.db.Update(check)
	}
	if err != nil && !errors.Is(err, errRollback) {
		return CheckReport{}, fmt.Errorf("store: check: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return CheckReport{}, err
	}
	err = s.db.View(func(tx *bolt.Tx) error {
		rep.SchemaVersion = schemaOf(tx)
		checkInvariants(tx, &rep)
		return nil
	})
	if err != nil {
		return CheckReport{}, fmt.Errorf("store: check: %w", err)
	}
	return rep, nil
}

func checkBolt(tx *bolt.Tx, rep *CheckReport) {
	for err := range tx.Check() {
		rep.add(Violation{Kind: VBolt, Detail: err.Error()})
	}
}

// Everything the invariant check remembers of one task.
type taskFacts struct {
	id, owner, ctx, disc []byte
	state                a2a.TaskState
	ts                   time.Time
	created              time.Time
	msgID                string
	replyID              string // COMPLETED: the reply its artifact names
}

type replyFacts struct {
	id, author string
	created    time.Time
}

type discFacts struct {
	key     []byte // its key in the discussions bucket
	d       discussions.Discussion
	replies []replyFacts
}

// key16 turns a 16-byte id into a map key.
func key16(b []byte) [16]byte {
	var k [16]byte
	copy(k[:], b)
	return k
}

// checkInvariants checks every kfa invariant in tx, adding to rep.
func checkInvariants(tx *bolt.Tx, rep *CheckReport) {
	c := &checker{tx: tx, rep: rep, expected: map[string]int{}}
	c.loadAgents()
	c.loadDiscussions()
	c.loadReplies()
	c.loadTasks()
	c.taskIndexes()
	c.msgIDs()
	c.taskDisc()
	c.completions()
	c.inbox()
	c.counters()
}

type checker struct {
	tx  *bolt.Tx
	rep *CheckReport

	agentIDs map[string]bool
	// Discussions and tasks by id, and in key order so that reports
	// list violations in a stable order.
	discs    map[[16]byte]*discFacts
	discList []*discFacts
	tasks    map[[16]byte]*taskFacts
	taskList []*taskFacts
	// expected holds what each counter should read: counter key -> count.
	expected map[string]int
}

func (c *checker) loadAgents() {
	c.agentIDs = map[string]bool{}
	creds := map[string]string{} // digest hex -> agent listing it
	ab := c.tx.Bucket(bucketAgents)
	n := 0
	_ = ab.ForEach(func(k, v []byte) error {
		n++
		var r agentRecord
		if err := json.Unmarshal(v, &r); err != nil {
			c.rep.addf(VDecode, bucketAgents, k, string(k), "", "agent record does not decode: %v", err)
			return nil
		}
		if r.ID != string(k) {
			c.rep.addf(VAgent, bucketAgents, k, string(k), "", "agent record has id %q under key %q", r.ID, k)
		}
		c.agentIDs[string(k)] = true
		for _, d := range r.Creds {
			creds[d] = string(k)
		}
		return nil
	})
	c.rep.examined(bucketAgents, n)
	c.expected[string(keyAgentCount)] = n

	cb := c.tx.Bucket(bucketCreds)
	n = 0
	_ = cb.ForEach(func(k, v []byte) error {
		n++
		short := hex.EncodeToString(k)
		if len(short) > 12 {
			short = short[:12] + "..."
		}
		cred, err := decodeCred(v)
		if err != nil {
			c.rep.addf(VDecode, bucketCreds, nil, "digest "+short, "", "credential does not decode: %v", err)
			return nil
		}
		switch owner, listed := creds[hex.EncodeToString(k)]; {
		case !c.agentIDs[cred.AgentID]:
			c.rep.addf(VAgent, bucketCreds, nil, "digest "+short, "", "credential of agent %s, which does not exist", cred.AgentID)
		case !listed || owner != cred.AgentID:
			c.rep.addf(VAgent, bucketCreds, nil, "digest "+short, "", "credential of agent %s is not listed by that agent, so rotate and revoke cannot find it", cred.AgentID)
		}
		delete(creds, hex.EncodeToString(k))
		return nil
	})
	c.rep.examined(bucketCreds, n)
	for _, d := range slices.Sorted(maps.Keys(creds)) {
		agent := creds[d]
		short := d
		if len(short) > 12 {
			short = short[:12] + "..."
		}
		c.rep.addf(VAgent, bucketAgents, []byte(agent), agent, "", "agent lists credential %s, which does not exist", short)
	}
}

func (c *checker) loadDiscussions() {
	c.discs = map[[16]byte]*discFacts{}
	n := 0
	_ = c.tx.Bucket(bucketDiscussions).ForEach(func(k, v []byte) error {
		n++
		if len(k) != 16 {
			c.rep.addf(VDecode, bucketDiscussions, k, hex.EncodeToString(k), "", "key is not a 16-byte id")
			return nil
		}
		d, err := decodeDiscussion(v)
		if err != nil {
			c.rep.addf(VDecode, bucketDiscussions, k, idString(k), "", "%v", err)
			return nil
		}
		if d.ID != idString(k) {
			c.rep.addf(VDiscussion, bucketDiscussions, k, idString(k), "", "discussion record has id %q", d.ID)
		}
		if !c.agentIDs[d.AuthorID] {
			c.rep.addf(VDiscussion, bucketDiscussions, k, idString(k), "", "author %s does not exist", d.AuthorID)
		}
		df := &discFacts{key: bytes.Clone(k), d: d}
		c.discs[key16(k)] = df
		c.discList = append(c.discList, df)
		c.expected[string(keyDiscCount)]++
		c.expected[string(discCountKey(d.Status))]++
		if d.Status != discussions.StatusOpen && d.Status != discussions.StatusAnswered {
			c.rep.addf(VDiscussion, bucketDiscussions, k, idString(k), "", "unknown status %q", d.Status)
		}
		return nil
	})
	c.rep.examined(bucketDiscussions, n)

	// The status index: one entry per discussion, under its status.
	seen := map[[16]byte]bool{}
	n = 0
	_ = c.tx.Bucket(bucketDiscByStatus).ForEach(func(k, _ []byte) error {
		n++
		if len(k) != 17 {
			c.rep.addf(VDecode, bucketDiscByStatus, k, hex.EncodeToString(k), "", "key is not status (1) | discussion id (16)")
			return nil
		}
		id := idString(k[1:])
		status := "open"
		if k[0] == statusByte(discussions.StatusAnswered) {
			status = "answered"
		}
		desc := status + "|" + id
		df, ok := c.discs[key16(k[1:])]
		switch {
		case !ok:
			c.rep.addf(VDiscussion, bucketDiscByStatus, k, desc, "", "entry for discussion %s, which does not exist", id)
		case statusByte(df.d.Status) != k[0] || (k[0] != 1 && k[0] != 2):
			c.rep.addf(VDiscussion, bucketDiscByStatus, k, desc, "", "entry says %s, the discussion is %s", status, df.d.Status)
		default:
			seen[key16(k[1:])] = true
		}
		return nil
	})
	c.rep.examined(bucketDiscByStatus, n)
	for _, df := range c.discList {
		if !seen[key16(df.key)] {
			c.rep.addf(VDiscussion, bucketDiscByStatus, df.key, df.d.ID, "", "discussion %s (%s) is missing from the status index", df.d.ID, df.d.Status)
		}
	}
}

func (c *checker) loadReplies() {
	n := 0
	_ = c.tx.Bucket(bucketReplies).ForEach(func(k, v []byte) error {
		n++
		if len(k) != 32 {
			c.rep.addf(VDecode, bucketReplies, k, hex.EncodeToString(k), "", "key is not discussion id (16) | reply id (16)")
			return nil
		}
		desc := idString(k[:16]) + "|" + idString(k[16:])
		r, err := decodeReply(v)
		if err != nil {
			c.rep.addf(VDecode, bucketReplies, k, desc, "", "%v", err)
			return nil
		}
		if r.ID != idString(k[16:]) || r.DiscussionID != idString(k[:16]) {
			c.rep.addf(VReply, bucketReplies, k, desc, "", "reply record says id %s on discussion %s", r.ID, r.DiscussionID)
		}
		df, ok := c.discs[key16(k[:16])]
		if !ok {
			c.rep.addf(VReply, bucketReplies, k, desc, "", "reply on discussion %s, which does not exist", idString(k[:16]))
			return nil
		}
		df.replies = append(df.replies, replyFacts{id: r.ID, author: r.AuthorID, created: r.CreatedAt})
		return nil
	})
	c.rep.examined(bucketReplies, n)

	for _, df := range c.discList {
		d := df.d
		k := df.key
		if d.ReplyCount != len(df.replies) {
			c.rep.addf(VDiscussion, bucketDiscussions, k, d.ID, "", "replyCount is %d, %d replies are stored", d.ReplyCount, len(df.replies))
		}
		var first time.Time
		for _, r := range df.replies {
			if r.author != d.AuthorID && (first.IsZero() || r.created.Before(first)) {
				first = r.created
			}
		}
		switch {
		case d.Status == discussions.StatusOpen && !first.IsZero():
			c.rep.addf(VDiscussion, bucketDiscussions, k, d.ID, "", "open, but has a qualifying reply (by someone other than the author)")
		case d.Status == discussions.StatusAnswered && first.IsZero():
			c.rep.addf(VDiscussion, bucketDiscussions, k, d.ID, "", "answered, but has no qualifying reply")
		case d.Status == discussions.StatusAnswered && !d.AnsweredAt.Equal(first):
			c.rep.addf(VDiscussion, bucketDiscussions, k, d.ID, "", "answeredAt is %s, the first qualifying reply is from %s",
				a2a.FormatTime(d.AnsweredAt), a2a.FormatTime(first))
		}
	}
}

func (c *checker) loadTasks() {
	c.tasks = map[[16]byte]*taskFacts{}
	n := 0
	_ = c.tx.Bucket(bucketTasks).ForEach(func(k, v []byte) error {
		n++
		if len(k) != 16 {
			c.rep.addf(VDecode, bucketTasks, k, hex.EncodeToString(k), "", "key is not a 16-byte id")
			return nil
		}
		id := idString(k)
		t, err := decodeTask(v)
		if err != nil {
			c.rep.addf(VDecode, bucketTasks, k, id, id, "%v", err)
			return nil
		}
		if t.ID != id {
			c.rep.addf(VTask, bucketTasks, k, id, id, "task record has id %q", t.ID)
			return nil
		}
		owner, ok1 := idBytes(t.OwnerID)
		disc, ok2 := idBytes(t.DiscussionID)
		if !ok1 || !ok2 || len(t.ContextID) > 255 {
			c.rep.addf(VTask, bucketTasks, k, id, id, "owner %q, discussion %q or context id is malformed", t.OwnerID, t.DiscussionID)
			return nil
		}
		f := &taskFacts{id: bytes.Clone(k), owner: owner, ctx: []byte(t.ContextID), disc: disc, state: t.State,
			ts: t.StatusTime, created: t.CreatedAt, msgID: t.MessageID}
		c.tasks[key16(k)] = f
		c.taskList = append(c.taskList, f)
		if !c.agentIDs[t.OwnerID] {
			c.rep.addf(VTask, bucketTasks, k, id, id, "owner %s does not exist", t.OwnerID)
		}
		if _, ok := c.discs[key16(disc)]; !ok {
			c.rep.addf(VTask, bucketTasks, k, id, id, "discussion %s does not exist", t.DiscussionID)
		}
		switch t.State {
		case a2a.TaskStateWorking, a2a.TaskStateCanceled:
		case a2a.TaskStateCompleted:
			f.replyID = completingReply(&t)
		default:
			c.rep.addf(VTask, bucketTasks, k, id, id, "state %s is never set by ask-network", t.State)
		}
		return nil
	})
	c.rep.examined(bucketTasks, n)
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

// indexKey is where task f belongs in index ix.
func (f *taskFacts) indexKey(ix int) []byte {
	t := &tasks.Task{ContextID: string(f.ctx), State: f.state}
	return cat(taskIndexes[ix].prefix(f.owner, t), tsID(f.ts, f.id))
}

func (c *checker) taskIndexes() {
	for ix, ti := range taskIndexes {
		b := c.tx.Bucket(ti.bucket)
		// Every task is in the index at its one position...
		for _, f := range c.taskList {
			if k := f.indexKey(ix); b.Get(k) == nil {
				c.rep.addf(VIndexMissing, ti.bucket, k, describeIndexKey(ix, k), idString(f.id),
					"task %s (%s) is missing from this index", idString(f.id), f.state)
			}
		}
		// ...and every entry is some task's position. An entry that is not
		// is stale: the task is listed twice, or under an old state or time.
		n := 0
		_ = b.ForEach(func(k, _ []byte) error {
			n++
			if len(k) < 24 {
				c.rep.addf(VDecode, ti.bucket, k, hex.EncodeToString(k), "", "key is shorter than timestamp (8) | task id (16)")
				return nil
			}
			prefix := k[:len(k)-24]
			c.expected[string(counterKey(ti.bucket, prefix))]++
			id := k[len(k)-16:]
			f, ok := c.tasks[key16(id)]
			switch {
			case !ok:
				c.rep.addf(VIndexDangling, ti.bucket, k, describeIndexKey(ix, k), idString(id),
					"entry points at task %s, which does not exist", idString(id))
			case !bytes.Equal(k, f.indexKey(ix)):
				c.rep.addf(VIndexStale, ti.bucket, k, describeIndexKey(ix, k), idString(id),
					"entry does not match task %s (%s since %s): the task is indexed at %s",
					idString(id), f.state, a2a.FormatTime(f.ts), describeIndexKey(ix, f.indexKey(ix)))
			}
			return nil
		})
		c.rep.examined(ti.bucket, n)
	}
}

func (c *checker) msgIDs() {
	b := c.tx.Bucket(bucketTaskMsgIDs)
	for _, f := range c.taskList {
		k := msgIDKey(f.owner, f.msgID)
		if v := b.Get(k); !bytes.Equal(v, f.id) {
			detail := "missing: a retry of the ask would create a second task"
			if v != nil {
				detail = "points at task " + idString(v)
			}
			c.rep.addf(VMsgID, bucketTaskMsgIDs, k, idString(f.owner)+"|"+strconv.Quote(f.msgID), idString(f.id),
				"message id entry of task %s is %s", idString(f.id), detail)
		}
	}
	n := 0
	_ = b.ForEach(func(k, v []byte) error {
		n++
		if len(k) < 16 || len(v) != 16 {
			c.rep.addf(VDecode, bucketTaskMsgIDs, k, hex.EncodeToString(k), "", "entry is not owner (16) | message id -> task id (16)")
			return nil
		}
		desc := idString(k[:16]) + "|" + strconv.Quote(string(k[16:]))
		f, ok := c.tasks[key16(v)]
		switch {
		case !ok:
			c.rep.addf(VMsgID, bucketTaskMsgIDs, k, desc, idString(v), "entry points at task %s, which does not exist", idString(v))
		case !bytes.Equal(f.owner, k[:16]) || f.msgID != string(k[16:]):
			c.rep.addf(VMsgID, bucketTaskMsgIDs, k, desc, idString(v), "entry points at task %s, whose owner and message id differ", idString(v))
		}
		return nil
	})
	c.rep.examined(bucketTaskMsgIDs, n)
}

func (c *checker) taskDisc() {
	b := c.tx.Bucket(bucketTaskByDisc)
	for _, f := range c.taskList {
		k := cat(f.disc, f.id)
		if v := b.Get(k); !bytes.Equal(v, f.owner) {
			c.rep.addf(VTaskDisc, bucketTaskByDisc, k, idString(f.disc)+"|"+idString(f.id), idString(f.id),
				"task %s is missing from its discussion's task list (a reply would not complete it)", idString(f.id))
		}
	}
	n := 0
	_ = b.ForEach(func(k, v []byte) error {
		n++
		if len(k) != 32 || len(v) != 16 {
			c.rep.addf(VDecode, bucketTaskByDisc, k, hex.EncodeToString(k), "", "entry is not discussion id (16) | task id (16) -> owner (16)")
			return nil
		}
		desc := idString(k[:16]) + "|" + idString(k[16:])
		f, ok := c.tasks[key16(k[16:])]
		switch {
		case !ok:
			c.rep.addf(VTaskDisc, bucketTaskByDisc, k, desc, idString(k[16:]), "entry points at task %s, which does not exist", idString(k[16:]))
		case !bytes.Equal(f.disc, k[:16]) || !bytes.Equal(f.owner, v):
			c.rep.addf(VTaskDisc, bucketTaskByDisc, k, desc, idString(k[16:]),
				"entry says task %s of %s is on discussion %s; the task says %s of %s",
				idString(k[16:]), idString(v), idString(k[:16]), idString(f.disc), idString(f.owner))
		}
		return nil
	})
	c.rep.examined(bucketTaskByDisc, n)
}

// completions: a COMPLETED task names a qualifying reply on its discussion
// by someone other than its owner, timestamped with that reply; a WORKING
// task has no such reply (it would have been completed by it).
func (c *checker) completions() {
	for _, f := range c.taskList {
		df, ok := c.discs[key16(f.disc)]
		if !ok {
			continue // reported as VTask
		}
		id := idString(f.id)
		owner := idString(f.owner)
		switch f.state {
		case a2a.TaskStateCompleted:
			var r *replyFacts
			for i := range df.replies {
				if df.replies[i].id == f.replyID {
					r = &df.replies[i]
				}
			}
			switch {
			case f.replyID == "":
				c.rep.addf(VCompletion, bucketTasks, f.id, id, id, "completed, but has no reply artifact (reply-<replyId>)")
			case r == nil:
				c.rep.addf(VCompletion, bucketTasks, f.id, id, id, "completed by reply %s, which is not on discussion %s", f.replyID, df.d.ID)
			case r.author == df.d.AuthorID:
				c.rep.addf(VCompletion, bucketTasks, f.id, id, id, "completed by reply %s of the discussion's own author, which does not qualify", r.id)
			case r.author == owner:
				c.rep.addf(VCompletion, bucketTasks, f.id, id, id, "completed by reply %s of its own owner", r.id)
			case !r.created.Equal(f.ts):
				c.rep.addf(VCompletion, bucketTasks, f.id, id, id, "status timestamp %s differs from the time of reply %s (%s)",
					a2a.FormatTime(f.ts), r.id, a2a.FormatTime(r.created))
			}
		case a2a.TaskStateWorking:
			for _, r := range df.replies {
				if r.author != df.d.AuthorID && r.author != owner {
					c.rep.addf(VCompletion, bucketTasks, f.id, id, id, "still working, but qualifying reply %s by %s should have completed it", r.id, r.author)
					break
				}
			}
		}
	}
}

func (c *checker) inbox() {
	type entryKey = string // agent (16) | entry (16)
	entries := map[entryKey]*discussions.InboxEntry{}
	b := c.tx.Bucket(bucketInbox)
	unacked := c.tx.Bucket(bucketInboxUnacked)
	n := 0
	_ = b.ForEach(func(k, v []byte) error {
		n++
		if len(k) != 32 {
			c.rep.addf(VDecode, bucketInbox, k, hex.EncodeToString(k), "", "key is not agent id (16) | entry id (16)")
			return nil
		}
		desc := idString(k[:16]) + "|" + idString(k[16:])
		e, err := decodeInbox(v)
		if err != nil {
			c.rep.addf(VDecode, bucketInbox, k, desc, "", "%v", err)
			return nil
		}
		entries[string(k)] = &e
		agent := idString(k[:16])
		if e.ID != idString(k[16:]) {
			c.rep.addf(VInbox, bucketInbox, k, desc, "", "entry record has id %s", e.ID)
		}
		if !c.agentIDs[agent] {
			c.rep.addf(VInbox, bucketInbox, k, desc, "", "entry of agent %s, which does not exist", agent)
		}
		dk, ok1 := idBytes(e.DiscussionID)
		rk, ok2 := idBytes(e.ReplyID)
		if !ok1 || !ok2 || c.tx.Bucket(bucketReplies).Get(cat(dk, rk)) == nil {
			c.rep.addf(VInbox, bucketInbox, k, desc, "", "entry names reply %s on discussion %s, which does not exist", e.ReplyID, e.DiscussionID)
		}
		for _, tid := range e.TaskIDs {
			tk, _ := idBytes(tid)
			f, ok := c.tasks[key16(tk)]
			if tk == nil || !ok || !bytes.Equal(f.owner, k[:16]) || !bytes.Equal(f.disc, dk) {
				c.rep.addf(VInbox, bucketInbox, k, desc, tid, "entry lists task %s, which is not the agent's task on discussion %s", tid, e.DiscussionID)
			}
		}
		if isNew := unacked.Get(k) != nil; isNew != e.AckedAt.IsZero() {
			if isNew {
				c.rep.addf(VInbox, bucketInboxUnacked, k, desc, "", "entry is acknowledged but still in the unacked index")
			} else {
				c.rep.addf(VInbox, bucketInboxUnacked, k, desc, "", "entry is not acknowledged but missing from the unacked index")
			}
		}
		return nil
	})
	c.rep.examined(bucketInbox, n)
	n = 0
	_ = unacked.ForEach(func(k, _ []byte) error {
		n++
		if _, ok := entries[string(k)]; !ok && len(k) == 32 {
			c.rep.addf(VInbox, bucketInboxUnacked, k, idString(k[:16])+"|"+idString(k[16:]), "", "unacked index entry without an inbox entry")
		} else if len(k) != 32 {
			c.rep.addf(VDecode, bucketInboxUnacked, k, hex.EncodeToString(k), "", "key is not agent id (16) | entry id (16)")
		}
		return nil
	})
	c.rep.examined(bucketInboxUnacked, n)

	// Every reply told the discussion's author (unless the author wrote
	// it), and every task it completed is in its owner's entry. Owners of
	// other tasks are not checked: whether a task joined before or after a
	// reply cannot be told from timestamps taken outside the transaction.
	completedBy := map[string][]*taskFacts{} // reply id -> tasks
	for _, f := range c.taskList {
		if f.state == a2a.TaskStateCompleted && f.replyID != "" {
			completedBy[f.replyID] = append(completedBy[f.replyID], f)
		}
	}
	for _, df := range c.discList {
		for _, r := range df.replies {
			want := map[string][]string{}
			if df.d.AuthorID != r.author {
				want[df.d.AuthorID] = nil
			}
			for _, f := range completedBy[r.id] {
				if o := idString(f.owner); o != r.author {
					want[o] = append(want[o], idString(f.id))
				}
			}
			for _, agent := range slices.Sorted(maps.Keys(want)) {
				taskIDs := want[agent]
				ak, ok := idBytes(agent)
				if !ok {
					continue // reported with the discussion or task
				}
				ek, _ := idBytes(inboxEntryID(r.id, agent, r.created))
				k := cat(ak, ek)
				e := entries[string(k)]
				if e == nil {
					c.rep.addf(VInbox, bucketInbox, k, agent+"|"+idString(ek), "",
						"agent %s was not notified of reply %s on discussion %s", agent, r.id, df.d.ID)
					continue
				}
				for _, tid := range taskIDs {
					found := false
					for _, x := range e.TaskIDs {
						found = found || x == tid
					}
					if !found {
						c.rep.addf(VInbox, bucketInbox, k, agent+"|"+idString(ek), tid,
							"entry for reply %s does not list task %s, which the reply completed", r.id, tid)
					}
				}
			}
		}
	}
}

// counters compares every counter of a known family with what it counts.
// Counters of families this build does not know are left alone.
func (c *checker) counters() {
	c.expected[string(recordCountKey)] = c.tx.Bucket(bucketRecords).Stats().KeyN
	known := func(k []byte) bool {
		name, _, _ := bytes.Cut(k, []byte{0})
		if string(name) == string(keyDiscCount) || string(name) == string(keyAgentCount) || string(name) == string(recordCountKey) {
			return true
		}
		for _, ti := range taskIndexes {
			if bytes.Equal(name, ti.bucket) {
				return true
			}
		}
		return false
	}
	b := c.tx.Bucket(bucketCounts)
	n := 0
	_ = b.ForEach(func(k, v []byte) error {
		n++
		if !known(k) {
			return nil
		}
		want := c.expected[string(k)]
		delete(c.expected, string(k))
		if len(v) != 8 {
			c.rep.addf(VCounter, bucketCounts, k, describeCounter(k), "", "value is %d bytes, not an 8-byte count", len(v))
			return nil
		}
		if got := binary.BigEndian.Uint64(v); got != uint64(want) {
			c.rep.addf(VCounter, bucketCounts, k, describeCounter(k), "", "counter is %d, counted %d", got, want)
		}
		return nil
	})
	c.rep.examined(bucketCounts, n)
	for _, k := range slices.Sorted(maps.Keys(c.expected)) {
		if want := c.expected[k]; want != 0 {
			c.rep.addf(VCounter, bucketCounts, []byte(k), describeCounter([]byte(k)), "", "counter is missing (reads 0), counted %d", want)
		}
	}
}

// recordCountKey is the counter of knowledge records (kept by the
// records code).
var recordCountKey = []byte("records")

// describeCounter renders a counter key for people.
func describeCounter(k []byte) string {
	name, rest, found := bytes.Cut(k, []byte{0})
	if !found {
		return string(name)
	}
	if string(name) == string(keyDiscCount) && len(rest) == 1 {
		if rest[0] == statusByte(discussions.StatusAnswered) {
			return "discussions/answered"
		}
		return "discussions/open"
	}
	for ix, ti := range taskIndexes {
		if bytes.Equal(name, ti.bucket) {
			if parts, ok := describePrefix(ix, rest); ok {
				if len(parts) == 0 {
					return string(name)
				}
				return string(name) + "/" + strings.Join(parts, " ")
			}
		}
	}
	return string(name) + "/" + hex.EncodeToString(rest)
}

// describeIndexKey renders a task index key for people: its prefix parts,
// the status timestamp and the task id.
func describeIndexKey(ix int, k []byte) string {
	if len(k) < 24 {
		return hex.EncodeToString(k)
	}
	parts, ok := describePrefix(ix, k[:len(k)-24])
	if !ok {
		return hex.EncodeToString(k)
	}
	ts := fromMS(binary.BigEndian.Uint64(k[len(k)-24 : len(k)-16]))
	parts = append(parts, "ts="+a2a.FormatTime(ts), "task="+idString(k[len(k)-16:]))
	return strings.Join(parts, " ")
}

// describePrefix splits a task index prefix into its named parts.
func describePrefix(ix int, p []byte) ([]string, bool) {
	var parts []string
	owner := func() bool {
		if len(p) < 16 {
			return false
		}
		parts = append(parts, "owner="+idString(p[:16]))
		p = p[16:]
		return true
	}
	ctx := func() bool {
		if len(p) < 1 || len(p) < 1+int(p[0]) {
			return false
		}
		parts = append(parts, "ctx="+strconv.Quote(string(p[1:1+int(p[0])])))
		p = p[1+int(p[0]):]
		return true
	}
	state := func() bool {
		if len(p) < 1 || int(p[0]) >= len(taskStates) {
			return false
		}
		parts = append(parts, "state="+string(taskStates[p[0]]))
		p = p[1:]
		return true
	}
	var steps []func() bool
	switch ix {
	case idxAllState:
		steps = []func() bool{state}
	case idxOwner:
		steps = []func() bool{owner}
	case idxOwnerState:
		steps = []func() bool{owner, state}
	case idxOwnerCtx:
		steps = []func() bool{owner, ctx}
	case idxOwnerCtxState:
		steps = []func() bool{owner, ctx, state}
	}
	for _, s := range steps {
		if !s() {
			return nil, false
		}
	}
	return parts, len(p) == 0
}
