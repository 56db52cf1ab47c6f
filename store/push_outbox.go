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

	"github.com/kfa-project/kfa/commands"
	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/storage"
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

// deliveryStateByte is a state's code in idx_push_state (the schema's
// one-letter code).
func deliveryStateByte(s push.State) byte {
	if c := commands.DeliveryState(s); c != "" {
		return c[0]
	}
	return 'f'
}

// due reports whether d is in the due indexes (the schema's
// DeliveriesDue: the pending ones).
func due(d *push.Delivery) bool {
	_, ok := commands.DeliveriesDue.Entry(d)
	return ok
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
	v, err := storedoc.EncodeDelivery(d)
	if err != nil {
		return err
	}
	return putDeliveryRecord(tx, old, d, v)
}

// putDeliveryRecord is putDelivery with d encoded as v.
func putDeliveryRecord(tx *bolt.Tx, old, d *push.Delivery, v []byte) error {
	id, ok := idBytes(d.ID)
	if !ok {
		return errBadID("delivery", d.ID)
	}
	state := tx.Bucket(bucketPushByState)
	pending := 0
	if old != nil {
		if due(old) {
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
	if due(d) {
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

// deleteDelivery removes a delivery and its index entries.
func deleteDelivery(tx *bolt.Tx, d *push.Delivery) error {
	id, _ := idBytes(d.ID)
	tk, _ := idBytes(d.TaskID)
	if due(d) {
		if err := deleteDueEntries(tx, d, id); err != nil {
			return err
		}
		if err := counter(tx.Bucket(bucketCounts), pushPendingKey, -1); err != nil {
			return err
		}
	}
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

// The schema's Deliveries, in push_outbox and its indexes.
func init() {
	k := &docKind[push.Delivery]{
		kind: commands.Deliveries, bucket: bucketPushOutbox, parts: []part{pULID},
		decode: func(_, v []byte) (push.Delivery, error) { return storedoc.DecodeDelivery(v) },
		encode: storedoc.EncodeDelivery,
		write:  func(r *run, old, d *push.Delivery, v []byte) error { return putDeliveryRecord(r.tx, old, d, v) },
		remove: func(r *run, old *push.Delivery) error { return deleteDelivery(r.tx, old) },
	}
	k.scans = map[storage.Ix]func(*run, *storage.Range, storage.Key, func(storage.Key, any) bool) error{
		commands.DeliveriesByState: func(r *run, q *storage.Range, prefix storage.Key, fn func(storage.Key, any) bool) error {
			ps := []part{{size: 1}, pULID}
			pb, ok := keyBytes(ps, prefix)
			if !ok {
				return nil
			}
			return k.walkRefs(r, q, bucketPushByState, pb, scanEnd(ps, q), false, func(ik, _ []byte) (storage.Key, []byte, bool) {
				key, ok := keyOf(ps, ik)
				return key, ik[1:], ok
			}, fn)
		},
		commands.DeliveriesByTask: func(r *run, q *storage.Range, prefix storage.Key, fn func(storage.Key, any) bool) error {
			ps := []part{pULID, pULID}
			pb, ok := keyBytes(ps, prefix)
			if !ok {
				return nil
			}
			return k.walkRefs(r, q, bucketPushByTask, pb, scanEnd(ps, q), false, func(ik, _ []byte) (storage.Key, []byte, bool) {
				key, ok := keyOf(ps, ik)
				return key, ik[16:], ok
			}, fn)
		},
	}
	mapped[commands.Deliveries] = k
}
