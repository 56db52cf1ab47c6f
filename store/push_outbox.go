package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"time"

	"github.com/oklog/ulid/v2"
	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/store/internal/storedoc"
)

// The outbox. push_outbox holds each delivery under its id; three
// indexes, written with it, serve the sender and the operator:
//
//	idx_push_due    next attempt (ms, 8) | id (16)   pending deliveries, in due order;
//	                                                 the value is the destination
//	idx_push_state  state (1) | id (16)              every delivery by state, in transition order
//	idx_push_task   task id (16) | id (16)           every delivery of a task
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
	due, state := tx.Bucket(bucketPushDue), tx.Bucket(bucketPushByState)
	pending := 0
	if old != nil {
		if old.State == push.Pending {
			pending--
			if err := due.Delete(dueKey(old.NextAt, id)); err != nil {
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
		if err := due.Put(dueKey(d.NextAt, id), []byte(d.Destination)); err != nil {
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

// DueDeliveries implements push.OutboxStore. The due index holds each
// delivery's destination, so what want refuses is never read; the walk
// stops after maxDueScan steps per delivery asked for.
func (s *DB) DueDeliveries(_ context.Context, now time.Time, limit int, want func(string) bool) ([]push.Delivery, error) {
	var out []push.Delivery
	err := s.db.View(func(tx *bolt.Tx) error {
		cur := tx.Bucket(bucketPushDue).Cursor()
		steps := 0
		for k, v := cur.First(); k != nil && len(out) < limit && steps < maxDueScan*limit; k, v = cur.Next() {
			steps++
			if len(k) != 24 || binary.BigEndian.Uint64(k[:8]) > ms(now) {
				break
			}
			if want != nil && len(v) > 0 && !want(string(v)) {
				continue
			}
			d, err := getDelivery(tx, k[8:])
			if err != nil {
				return err
			}
			if want != nil && len(v) == 0 && !want(d.Destination) {
				continue
			}
			out = append(out, d)
		}
		return nil
	})
	return out, err
}

// maxDueScan bounds the due entries DueDeliveries steps over per
// delivery it may return.
const maxDueScan = 16

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
