package store

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math"

	bolt "go.etcd.io/bbolt"
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
	// VTaskDisc is a disc_members or idx_task_discw entry that is missing
	// or wrong: a task its owner would not hear about, or a working task a
	// reply would not complete.
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
	// VAgent is an agent, credential or rate window record that disagrees
	// with another.
	VAgent = "agent"
	// VModeration is a moderation item, flag or queue entry that
	// disagrees with another or with the content it is about.
	VModeration = "moderation"
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

// DefaultCheckChunk is how many entries one read transaction of a check
// examines.
const DefaultCheckChunk = 1000

// CheckOptions tune CheckWith. The zero value checks kfa's invariants only.
type CheckOptions struct {
	// Pages runs bbolt's own page check (pages, freelist, key order) too.
	// bbolt's check reads the shared freelist, which a writer changes, so
	// on a store open for writing it runs in a write transaction that is
	// rolled back: writes wait for it. Leave it off on a busy server.
	Pages bool
	// Chunk is how many entries one read transaction examines; default
	// DefaultCheckChunk.
	Chunk int

	// afterChunk, when set (tests), runs between two read transactions.
	afterChunk func()
}

// errRollback ends the write transaction bbolt's check runs in without
// committing anything.
var errRollback = errors.New("store: check done")

// Check is CheckWith with bbolt's page check: for a store no one else
// writes to (the CLI's own, tests).
func (s *DB) Check(ctx context.Context) (CheckReport, error) {
	return s.CheckWith(ctx, CheckOptions{Pages: true})
}

// CheckWith verifies the open store: bbolt's page check when o.Pages, then
// kfa's invariants (see the V* kinds), read in short read transactions of
// o.Chunk entries each, so a check of a large file holds no writer back
// and pins no old pages for long.
//
// Every invariant about one record (a task and its index entries, its
// message id, its discussion entries and its completing reply; a
// discussion and its replies; an inbox entry and what it names) is judged
// inside one of those transactions, on one snapshot. Only the counters
// add up entries across transactions: a counter that disagrees with that
// sum is counted again in one read transaction over its range before it
// is reported, so writes made during a check are never taken for damage.
// That recount is the one read that grows with the data (the busiest
// counters cover every task).
func (s *DB) CheckWith(ctx context.Context, o CheckOptions) (CheckReport, error) {
	rep := CheckReport{Path: s.path}
	if o.Pages {
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
	} else {
		rep.Notes = append(rep.Notes, "bbolt's page check was not run: it holds writes back while it runs; "+
			"run kfa check --pages off-peak, or kfa check with the server stopped")
	}
	if err := ctx.Err(); err != nil {
		return CheckReport{}, err
	}
	if err := s.db.View(func(tx *bolt.Tx) error { rep.SchemaVersion = schemaOf(tx); return nil }); err != nil {
		return CheckReport{}, fmt.Errorf("store: check: %w", err)
	}
	if o.Chunk <= 0 {
		o.Chunk = DefaultCheckChunk
	}
	c := newChecker(ctx, &rep, s.db.View, o.Chunk)
	c.after = o.afterChunk
	if err := c.run(); err != nil {
		return CheckReport{}, fmt.Errorf("store: check: %w", err)
	}
	return rep, nil
}

func checkBolt(tx *bolt.Tx, rep *CheckReport) {
	for err := range tx.Check() {
		rep.add(Violation{Kind: VBolt, Detail: err.Error()})
	}
}

// checkInvariants checks every kfa invariant in the one transaction tx
// (a file no one writes to), adding to rep.
func checkInvariants(tx *bolt.Tx, rep *CheckReport) error {
	view := func(fn func(*bolt.Tx) error) error { return fn(tx) }
	return newChecker(context.Background(), rep, view, math.MaxInt).run()
}
