package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"
	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/store/internal/storedoc"
)

// The outbox. push_outbox holds each delivery under its id; four
// indexes, written with it, serve the sender and the operator:
//
//	idx_push_due    next attempt (ms, 8) | id (16)   pending deliveries, in due order;
//	                                                 the value is the destination
//	idx_push_dest   destination | 0 | next attempt (ms, 8) | id (16)
//	                                                 pending deliveries by destination, each
//	                                                 destination's in due order
//	idx_push_state  state (1) | id (16)              every delivery by state, in transition order
//	idx_push_task   task id (16) | id (16)           every delivery of a task
//
// The sender walks idx_push_dest one destination at a time (a seek to
// each destination's first entry), so a destination with a flood of due
// deliveries costs a walk one step; idx_push_due gives the earliest due
// time of all in one seek.
//
// The counter pushPendingKey counts the pending ones (the queue depth).

var pushPendingKey = []byte("push_pending")

func deliveryStateByte(s push.State) byte {
	switch s {
	case push.Pending:
		return 'p'
	case push.Delivered:
		return 'd'
	}
	return 'f'
}

func dueKey(at time.Time, id []byte) []byte { return cat(u64(ms(at)), id) }

// destPrefix is the part of a destination's idx_push_dest keys before the
// time. A destination (scheme://host:port of a parsed URL) holds no NUL,
// so the NUL ends it: every key of a destination sorts before those of
// any longer destination it is a prefix of.
func destPrefix(dest string) []byte { return append([]byte(dest), 0) }

// destKey is a pending delivery's idx_push_dest key.
func destKey(dest string, at time.Time, id []byte) []byte {
	return cat(destPrefix(dest), u64(ms(at)), id)
}

// splitDestKey splits an idx_push_dest key; ok is false for a malformed one.
func splitDestKey(k []byte) (dest string, at uint64, id []byte, ok bool) {
	n := len(k) - 25
	if n < 0 || k[n] != 0 || bytes.IndexByte(k[:n], 0) >= 0 {
		return "", 0, nil, false
	}
	return string(k[:n]), binary.BigEndian.Uint64(k[n+1 : n+9]), k[n+9:], true
}

// putDueEntries indexes the pending delivery d under id.
func putDueEntries(tx *bolt.Tx, d *push.Delivery, id []byte) error {
	if strings.IndexByte(d.Destination, 0) >= 0 {
		return fmt.Errorf("store: delivery %s: destination %q holds a NUL", d.ID, d.Destination)
	}
	if err := tx.Bucket(bucketPushDue).Put(dueKey(d.NextAt, id), []byte(d.Destination)); err != nil {
		return err
	}
	return tx.Bucket(bucketPushDest).Put(destKey(d.Destination, d.NextAt, id), nil)
}

// deleteDueEntries removes the index entries putDueEntries made.
func deleteDueEntries(tx *bolt.Tx, d *push.Delivery, id []byte) error {
	if err := tx.Bucket(bucketPushDue).Delete(dueKey(d.NextAt, id)); err != nil {
		return err
	}
	return tx.Bucket(bucketPushDest).Delete(destKey(d.Destination, d.NextAt, id))
}

func getDelivery(tx *bolt.Tx, id []byte) (push.Delivery, error) {
	v := tx.Bucket(bucketPushOutbox).Get(id)
	if v == nil {
		return push.Delivery{}, push.ErrDeliveryNotFound
	}
	return storedoc.DecodeDelivery(v)
}

// putDelivery writes d, which was old (nil for a new delivery), moving
// its index entries and the pending counter.
func putDelivery(tx *bolt.Tx, old, d *push.Delivery) error {
	id, ok := idBytes(d.ID)
	if !ok {
		return errBadID("delivery", d.ID)
	}
	v, err := storedoc.EncodeDelivery(d)
	if err != nil {
		return err
	}
	state := tx.Bucket(bucketPushByState)
	pending := 0
	if old != nil {
		if old.State == push.Pending {
			pending--
			if err := deleteDueEntries(tx, old, id); err != nil {
				return err
			}
		}
		if err := state.Delete(cat([]byte{deliveryStateByte(old.State)}, id)); err != nil {
			return err
		}
	} else {
		tk, ok := idBytes(d.TaskID)
		if !ok {
			return errBadID("task", d.TaskID)
		}
		if err := tx.Bucket(bucketPushByTask).Put(cat(tk, id), nil); err != nil {
			return err
		}
	}
	if d.State == push.Pending {
		pending++
		if err := putDueEntries(tx, d, id); err != nil {
			return err
		}
	}
	if err := state.Put(cat([]byte{deliveryStateByte(d.State)}, id), nil); err != nil {
		return err
	}
	if pending != 0 {
		if err := counter(tx.Bucket(bucketCounts), pushPendingKey, int64(pending)); err != nil {
			return err
		}
	}
	return tx.Bucket(bucketPushOutbox).Put(id, v)
}

// deleteDelivery removes a finished delivery and its index entries.
func deleteDelivery(tx *bolt.Tx, d *push.Delivery) error {
	id, _ := idBytes(d.ID)
	tk, _ := idBytes(d.TaskID)
	if err := tx.Bucket(bucketPushByState).Delete(cat([]byte{deliveryStateByte(d.State)}, id)); err != nil {
		return err
	}
	if err := tx.Bucket(bucketPushByTask).Delete(cat(tk, id)); err != nil {
		return err
	}
	return tx.Bucket(bucketPushOutbox).Delete(id)
}

// DueDestinations implements push.OutboxStore: one seek per destination
// visited, to its first idx_push_dest entry, whose time is the
// destination's earliest.
func (s *DB) DueDestinations(_ context.Context, q push.DueQuery) ([]string, string, error) {
	var (
		out  []string
		next string
	)
	skip := make(map[string]bool, len(q.Skip))
	for _, d := range q.Skip {
		skip[d] = true
	}
	now := ms(q.Now)
	err := s.db.View(func(tx *bolt.Tx) error {
		cur := tx.Bucket(bucketPushDest).Cursor()
		k, _ := cur.First()
		if q.After != "" {
			k, _ = cur.Seek(prefixEnd(destPrefix(q.After)))
		}
		for visits := 0; k != nil; visits++ {
			if len(out) == q.Limit || visits == push.MaxDueScan*q.Limit {
				return nil
			}
			dest, at, _, ok := splitDestKey(k)
			if !ok { // kfa check reports it; it stops no delivery
				k, _ = cur.Next()
				continue
			}
			next = dest
			if at <= now && !skip[dest] {
				out = append(out, dest)
			}
			k, _ = cur.Seek(prefixEnd(destPrefix(dest)))
		}
		next = ""
		return nil
	})
	return out, next, err
}

// DueDeliveries implements push.OutboxStore: a seek to the destination's
// first entry, then one step per delivery.
func (s *DB) DueDeliveries(_ context.Context, dest string, now time.Time, limit int) ([]push.Delivery, error) {
	var out []push.Delivery
	prefix := destPrefix(dest)
	err := s.db.View(func(tx *bolt.Tx) error {
		cur := tx.Bucket(bucketPushDest).Cursor()
		for k, _ := cur.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && len(out) < limit; k, _ = cur.Next() {
			_, at, id, ok := splitDestKey(k)
			if !ok || len(id) != 16 {
				continue // kfa check reports it
			}
			if at > ms(now) {
				break
			}
			d, err := getDelivery(tx, id)
			if err != nil {
				return err
			}
			out = append(out, d)
		}
		return nil
	})
	return out, err
}

// NextDue implements push.OutboxStore.
func (s *DB) NextDue(context.Context) (time.Time, bool, error) {
	var (
		at time.Time
		ok bool
	)
	err := s.db.View(func(tx *bolt.Tx) error {
		if k, _ := tx.Bucket(bucketPushDue).Cursor().First(); len(k) == 24 {
			at, ok = fromMS(binary.BigEndian.Uint64(k[:8])), true
		}
		return nil
	})
	return at, ok, err
}

// RecordAttempt implements push.OutboxStore.
func (s *DB) RecordAttempt(_ context.Context, id string, a push.Attempt) (push.Delivery, error) {
	k, ok := idBytes(id)
	if !ok {
		return push.Delivery{}, push.ErrDeliveryNotFound
	}
	var out push.Delivery
	err := s.update(func(tx *bolt.Tx) error {
		d, err := getDelivery(tx, k)
		if err != nil {
			return refuse(err)
		}
		if d.Recorded(a) {
			out = d // writes nothing
			return nil
		}
		if d.State != push.Pending {
			return refuse(push.ErrNotPending)
		}
		old := d
		d.Apply(a)
		out = d
		return putDelivery(tx, &old, &d)
	})
	return out, err
}

// Delivery implements push.OutboxStore.
func (s *DB) Delivery(_ context.Context, id string) (push.Delivery, error) {
	k, ok := idBytes(id)
	if !ok {
		return push.Delivery{}, push.ErrDeliveryNotFound
	}
	var d push.Delivery
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		d, err = getDelivery(tx, k)
		return err
	})
	return d, err
}

// Deliveries implements push.OutboxStore: newest first (ids are ULIDs of
// the transition time), one seek and PageSize steps.
func (s *DB) Deliveries(_ context.Context, q push.DeliveryQuery) (push.DeliveryPage, error) {
	page := push.DeliveryPage{Deliveries: []push.Delivery{}}
	err := s.db.View(func(tx *bolt.Tx) error {
		var (
			c      *bolt.Cursor
			prefix []byte
		)
		switch {
		case q.TaskID != "":
			tk, ok := idBytes(q.TaskID)
			if !ok {
				return nil
			}
			c, prefix = tx.Bucket(bucketPushByTask).Cursor(), tk
		case q.State != "":
			c, prefix = tx.Bucket(bucketPushByState).Cursor(), []byte{deliveryStateByte(q.State)}
		default:
			c = tx.Bucket(bucketPushOutbox).Cursor()
		}
		start := prefixEnd(prefix)
		if q.After != "" {
			id, ok := idBytes(q.After)
			if !ok {
				return push.ErrDeliveryNotFound
			}
			start = cat(prefix, id)
		}
		for k, _ := seekBefore(c, start); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Prev() {
			d, err := getDelivery(tx, k[len(prefix):])
			if err != nil {
				return err
			}
			if q.State != "" && d.State != q.State {
				continue
			}
			if len(page.Deliveries) == q.PageSize {
				page.Next = page.Deliveries[len(page.Deliveries)-1].ID
				return nil
			}
			page.Deliveries = append(page.Deliveries, d)
		}
		return nil
	})
	return page, err
}

// checkRetry is the reading part of RetryDelivery.
func checkRetry(tx *bolt.Tx, k []byte) (push.Delivery, error) {
	d, err := getDelivery(tx, k)
	if err != nil {
		return d, refuse(err)
	}
	if d.State != push.Failed {
		return d, refuse(push.ErrNotFailed)
	}
	tk, _ := idBytes(d.TaskID)
	if tx.Bucket(bucketPushConfigs).Get(pushConfigKey(tk, d.ConfigID)) == nil {
		return d, refuse(push.ErrNotFound)
	}
	return d, nil
}

// RetryDelivery implements push.OutboxStore. The delivery gets a new
// retry period from at.
func (s *DB) RetryDelivery(_ context.Context, id string, at time.Time) (push.Delivery, error) {
	k, ok := idBytes(id)
	if !ok {
		return push.Delivery{}, push.ErrDeliveryNotFound
	}
	if err := s.db.View(func(tx *bolt.Tx) error { _, err := checkRetry(tx, k); return err }); err != nil {
		return push.Delivery{}, unrefuse(err)
	}
	var out push.Delivery
	err := s.update(func(tx *bolt.Tx) error {
		d, err := checkRetry(tx, k)
		if err != nil {
			return err
		}
		old := d
		d.State, d.NextAt, d.FinishedAt, d.Reason, d.RetriedAt = push.Pending, at, time.Time{}, "", at
		out = d
		if err := putDelivery(tx, &old, &d); err != nil {
			return err
		}
		return s.appendEvents(tx, []changelog.Event{deliveryDue(&d, at)}, at)
	})
	return out, err
}

// PurgeDeliveries implements push.OutboxStore. It walks the finished
// deliveries in transition order and stops at the first whose transition
// is after before: none after it can have finished before before. The
// walk runs first in a read transaction, so a purge with nothing to do
// writes nothing.
func (s *DB) PurgeDeliveries(_ context.Context, before time.Time, limit int) (int, error) {
	var doomed []push.Delivery
	if err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		doomed, err = purgeable(tx, before, limit)
		return err
	}); err != nil || len(doomed) == 0 {
		return 0, err
	}
	n := 0
	err := s.update(func(tx *bolt.Tx) error {
		doomed, err := purgeable(tx, before, limit)
		if err != nil {
			return err
		}
		for i := range doomed {
			if err := deleteDelivery(tx, &doomed[i]); err != nil {
				return err
			}
		}
		n = len(doomed)
		return nil
	})
	return n, err
}

// purgeable finds at most limit deliveries that finished before before.
func purgeable(tx *bolt.Tx, before time.Time, limit int) ([]push.Delivery, error) {
	var doomed []push.Delivery
	for _, st := range []push.State{push.Delivered, push.Failed} {
		prefix := []byte{deliveryStateByte(st)}
		cur := tx.Bucket(bucketPushByState).Cursor()
		for k, _ := cur.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && len(doomed) < limit; k, _ = cur.Next() {
			var id ulid.ULID
			copy(id[:], k[1:])
			if ulid.Time(id.Time()).After(before) {
				break
			}
			d, err := getDelivery(tx, k[1:])
			if err != nil {
				return nil, err
			}
			if d.FinishedAt.Before(before) {
				doomed = append(doomed, d)
			}
		}
	}
	return doomed, nil
}

// OutboxStats implements push.OutboxStore: the pending counter and the
// first pending entry, whose id tells its transition time.
func (s *DB) OutboxStats(context.Context) (push.OutboxStats, error) {
	var st push.OutboxStats
	err := s.db.View(func(tx *bolt.Tx) error {
		st.Pending = readCounter(tx.Bucket(bucketCounts), pushPendingKey)
		prefix := []byte{deliveryStateByte(push.Pending)}
		if k, _ := tx.Bucket(bucketPushByState).Cursor().Seek(prefix); len(k) == 17 && k[0] == prefix[0] {
			var id ulid.ULID
			copy(id[:], k[1:])
			st.OldestPending = ulid.Time(id.Time()).UTC()
		}
		return nil
	})
	return st, err
}
