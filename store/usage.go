package store

import (
	"context"
	"encoding/binary"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/tasks"
)

// readWindow is agent's kept time of a limit, zero when it has none.
func readWindow(tx *bolt.Tx, kind byte, agent []byte) time.Time {
	if v := tx.Bucket(bucketRateWindows).Get(cat([]byte{kind}, agent)); len(v) == 8 {
		return time.Unix(0, int64(binary.BigEndian.Uint64(v))).UTC()
	}
	return time.Time{}
}

// AskUsage implements tasks.Store: the ask window and the open-task
// counter the ask transaction checks, read together.
func (s *DB) AskUsage(_ context.Context, ownerID string) (tasks.AskUsage, error) {
	var u tasks.AskUsage
	owner, ok := idBytes(ownerID)
	if !ok {
		return u, errBadID("owner", ownerID)
	}
	err := s.db.View(func(tx *bolt.Tx) error {
		u.Window = readWindow(tx, windowAsk, owner)
		u.Open = readCounter(tx.Bucket(bucketCounts), counterKey(bucketTaskByState, cat(owner, []byte{stateByte(a2a.TaskStateWorking)})))
		return nil
	})
	return u, err
}

// ReplyWindow implements discussions.Store.
func (s *DB) ReplyWindow(_ context.Context, agentID string) (time.Time, error) {
	var w time.Time
	agent, ok := idBytes(agentID)
	if !ok {
		return w, errBadID("agent", agentID)
	}
	err := s.db.View(func(tx *bolt.Tx) error {
		w = readWindow(tx, windowReply, agent)
		return nil
	})
	return w, err
}
