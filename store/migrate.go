package store

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"github.com/kfa-project/kfa/tasks"

	bolt "go.etcd.io/bbolt"
)

// migration is one numbered, forward-only change of the schema. Each runs in
// its own transaction together with the new schema version.
type migration struct {
	version int
	name    string
	apply   func(tx *bolt.Tx) error
}

// chunkedSteps are the parts of a migration that run outside its
// transaction, by version, so that migrating a large file holds a chunk
// in memory at a time.
type chunkedSteps struct {
	// prepare runs before the migration's transaction, in transactions of
	// its own. It must leave a valid file of the previous schema and be
	// safe to run again (a crash runs it again at the next open).
	prepare func(db *bolt.DB) error
	// sweep runs at every writable open once the migration is done: it
	// removes what the migration retired, in chunks, and costs a few seeks
	// when nothing is left.
	sweep func(db *bolt.DB) error
}

var migrationSteps = map[int]chunkedSteps{
	6: {prepare: rewriteContextValues, sweep: sweepContextCounters},
}

// migrations in order; version n is migrations[n-1]. Never edit one that
// has shipped: add the next.
var migrations = []migration{
	{1, "initial buckets and token secret", func(tx *bolt.Tx) error {
		for _, b := range [][]byte{
			bucketAgents, bucketCreds,
			bucketTasks, bucketTaskMsgIDs, bucketTaskAll, bucketTaskAllSt, bucketTaskByOwner, bucketTaskByState,
			bucketTaskByCtx, bucketTaskByCtxSt, bucketTaskByDisc, bucketCounts,
			bucketDiscussions, bucketDiscByStatus, bucketReplies,
			bucketInbox, bucketInboxUnacked,
			bucketRecords, bucketFeed,
		} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return fmt.Errorf("create bucket %s: %w", b, err)
			}
		}
		secret := make([]byte, 32)
		_, _ = rand.Read(secret)
		return tx.Bucket(bucketMeta).Put(metaSecret, secret)
	}},
	{2, "task records in binary format 2, with their wire JSON", func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketTasks)
		var keys [][]byte
		if err := b.ForEach(func(k, v []byte) error {
			if len(v) > 0 && v[0] == taskFormatJSON {
				keys = append(keys, bytes.Clone(k))
			}
			return nil
		}); err != nil {
			return err
		}
		for _, k := range keys {
			t, err := decodeTask(b.Get(k))
			if err != nil {
				return fmt.Errorf("task %s: %w", idString(k), err)
			}
			v, err := encodeTask(&t)
			if err != nil {
				return err
			}
			if err := b.Put(k, v); err != nil {
				return err
			}
		}
		return nil
	}},
	{3, "web sign-in sessions and their expiry index", func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketSessions, bucketSessionExp} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return fmt.Errorf("create bucket %s: %w", b, err)
			}
		}
		return nil
	}},
	{4, "discussion members and working-task index instead of idx_task_disc; per-agent rate windows; context index", migrateMembers},
	{5, "push notification configs, the delivery outbox and its indexes, signing keys", func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketPushConfigs, bucketPushOutbox, bucketPushDue, bucketPushByState, bucketPushByTask, bucketSignKeys} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return fmt.Errorf("create bucket %s: %w", b, err)
			}
		}
		return nil
	}},
	{6, "one context index with owner and state values instead of idx_task_ctx, idx_task_ctxst and context counters", dropOwnerContextIndexes},
	{7, "the change log", func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(bucketLog)
		return err
	}},
	{8, "agents by name, for the duplicate-name decision", indexAgentNames},
	{9, "the records' change feed carried into the change log, indexed there; durable follower cursors", migrateFeedToLog},
	{10, "the outbox's due index by destination", indexDueByDestination},
	{11, "agents by OAuth identity (issuer, subject)", indexAgentIdentities},
	{12, "moderation: flags, items, the review queue and the audit log; replies' discussions and authors' posts", migrateModeration},
	{13, "discussions answered by their earliest visible qualifying reply", reanswerDiscussions},
}

// indexAgentNames creates agent_names and fills it from the agents.
func indexAgentNames(tx *bolt.Tx) error {
	names, err := tx.CreateBucketIfNotExists(bucketAgentNames)
	if err != nil {
		return err
	}
	return tx.Bucket(bucketAgents).ForEach(func(k, v []byte) error {
		var r agentRecord
		if err := json.Unmarshal(v, &r); err != nil {
			return fmt.Errorf("agent %s: %w", k, err)
		}
		return names.Put(agentNameKey(r.Name, r.ID), nil)
	})
}

// SchemaVersion is the schema this build writes.
func SchemaVersion() int { return len(migrations) }

func schemaOf(tx *bolt.Tx) int {
	b := tx.Bucket(bucketMeta)
	if b == nil {
		return 0
	}
	v := b.Get(metaSchema)
	if len(v) != 8 {
		return 0
	}
	return int(binary.BigEndian.Uint64(v))
}

// migrate brings the file up to SchemaVersion, refusing files written by a
// newer kfa.
func (s *DB) migrate() error {
	var current int
	if err := s.db.View(func(tx *bolt.Tx) error { current = schemaOf(tx); return nil }); err != nil {
		return err
	}
	if current > SchemaVersion() {
		return fmt.Errorf("%w: %s has schema version %d, this kfa understands up to %d; run a newer kfa",
			ErrTooNew, s.path, current, SchemaVersion())
	}
	if s.readOnly {
		if current < SchemaVersion() {
			return fmt.Errorf("store: %s has schema version %d and needs migrating to %d; open it read-write once (kfa serve)",
				s.path, current, SchemaVersion())
		}
		return nil
	}
	for _, m := range migrations[current:] {
		if prepare := migrationSteps[m.version].prepare; prepare != nil {
			if err := prepare(s.db); err != nil {
				return fmt.Errorf("store: migration %d (%s): %w", m.version, m.name, err)
			}
		}
		err := s.db.Update(func(tx *bolt.Tx) error {
			if _, err := tx.CreateBucketIfNotExists(bucketMeta); err != nil {
				return err
			}
			if err := m.apply(tx); err != nil {
				return err
			}
			return tx.Bucket(bucketMeta).Put(metaSchema, u64(uint64(m.version)))
		})
		if err != nil {
			return fmt.Errorf("store: migration %d (%s): %w", m.version, m.name, err)
		}
	}
	for _, m := range migrations {
		sweep := migrationSteps[m.version].sweep
		if sweep == nil {
			continue
		}
		if err := sweep(s.db); err != nil {
			return fmt.Errorf("store: sweep after migration %d (%s): %w", m.version, m.name, err)
		}
	}
	return nil
}

// migrateMembers splits idx_task_disc (every task under its discussion)
// into disc_members (each agent's tasks on a discussion, what a reply's
// inbox needs) and idx_task_discw (the WORKING tasks, what a reply
// completes), so that a reply walks neither every task ever mapped to
// its discussion nor anything twice; creates the rate windows; and
// indexes every task by its context alone (idx_task_allctx), for the
// operator's context filter.
func migrateMembers(tx *bolt.Tx) error {
	for _, b := range [][]byte{bucketDiscMembers, bucketTaskDiscWorking, bucketRateWindows, bucketTaskAllCtx} {
		if _, err := tx.CreateBucketIfNotExists(b); err != nil {
			return fmt.Errorf("create bucket %s: %w", b, err)
		}
	}
	ctxIndex := taskIndexes[idxAllCtx]
	acc := counterDeltas{}
	err := tx.Bucket(bucketTasks).ForEach(func(k, v []byte) error {
		t, err := headerOf(v)
		if err != nil {
			return fmt.Errorf("task %s: %w", idString(k), err)
		}
		p := ctxIndex.prefix(nil, &t)
		acc[string(counterKey(ctxIndex.bucket, p))]++
		return tx.Bucket(ctxIndex.bucket).Put(cat(p, tsID(t.StatusTime, k)), nil)
	})
	if err != nil {
		return err
	}
	if err := acc.apply(tx); err != nil {
		return err
	}
	old := tx.Bucket(bucketTaskByDisc)
	if old == nil {
		return nil
	}
	tb := tx.Bucket(bucketTasks)
	err = old.ForEach(func(k, owner []byte) error {
		if len(k) != 32 || len(owner) != 16 {
			return fmt.Errorf("idx_task_disc entry %x is malformed", k)
		}
		disc, id := k[:16], k[16:]
		if err := addMember(tx, disc, owner, id); err != nil {
			return err
		}
		v := tb.Get(id)
		if v == nil {
			return nil // a dangling entry: kfa check reported it; nothing to carry over
		}
		snap, err := snapshotOf(v)
		if err != nil {
			return fmt.Errorf("task %s: %w", idString(id), err)
		}
		if inWorking(&tasks.Task{State: snap.State}) {
			return tx.Bucket(bucketTaskDiscWorking).Put(bytes.Clone(k), bytes.Clone(owner))
		}
		return nil
	})
	if err != nil {
		return err
	}
	return tx.DeleteBucket(bucketTaskByDisc)
}
