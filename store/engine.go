package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/storage"
)

// The seam (package storage): this store runs every command's load plan
// and write plan. A command decides in the single writer's transaction
// (group commit, exec), after a first decision in a read transaction; a
// read runs in a read transaction. Loads run at once (bbolt has no round
// trips), locks are the single writer's, and Flush does nothing.

// boltKind is how this store keeps one kind of record: mapped (the kinds
// that had buckets before the seam, each mapped once in kind_*.go) or
// generic (genericKind: a bucket per kind and per index).
type boltKind interface {
	// get reads g's record (nil when there is none, or when it is not
	// g.Owner's).
	get(r *run, g storage.Get) (any, error)
	// scan calls fn with each entry of q's index under prefix, in order (or
	// reversed), with its record unless q asks for keys only (rec nil),
	// until fn returns false.
	scan(r *run, q *storage.Range, prefix storage.Key, fn func(key storage.Key, rec any) bool) error
	// prepare encodes rec (nil: the kind encodes in put), in a command's
	// first phase: outside the single writer when the decision ran in a
	// read transaction.
	prepare(rec any) ([]byte, error)
	// put writes rec, which was old (nil: new), with its index entries; v
	// is what prepare made of it (nil: not prepared).
	put(r *run, old, rec any, v []byte) error
	// del deletes old with its index entries.
	del(r *run, old any) error
	// count reads how many entries of a counted index start with prefix.
	count(r *run, ix storage.Ix, prefix storage.Key) (int, error)
}

// mapped are the kinds this store maps, by kind (kind_*.go).
var mapped = map[storage.Type]boltKind{}

// generics caches the generic kinds met so far.
var generics sync.Map // storage.Type -> *genericKind

// kindOf is how this store keeps t.
func kindOf(t storage.Type) boltKind {
	if k, ok := mapped[t]; ok {
		return k
	}
	if k, ok := generics.Load(t); ok {
		return k.(*genericKind)
	}
	k, _ := generics.LoadOrStore(t, newGenericKind(t))
	return k.(*genericKind)
}

// run is one command's, or one read's, use of a transaction: the
// storage.Loader of its load plan, and the writer of its write plan.
type run struct {
	s     *DB
	tx    *bolt.Tx
	loads []loaded      // by Ref
	err   error         // the first load that failed
	acc   counterDeltas // the write plan's counter moves, applied once
	// moves are the task index moves of the write plan, applied once.
	moves *indexBatch
	// bulk marks a run of LoadAsks: its moves (new tasks' entries too) are
	// the whole load's, which applies them at its end.
	bulk bool
	buf  [smallPlan]loaded
}

// loaded is what a later load under a load's keys needs of it: the key
// of the record a Get found, or the keys of a range's records.
type loaded struct {
	one  storage.Key
	many []storage.Key
	// lockOnly marks a Get that read nothing: nothing ranges under it.
	lockOnly bool
}

// keys are the records' keys.
func (l *loaded) keys() []storage.Key {
	if l.one != nil {
		return []storage.Key{l.one}
	}
	return l.many
}

// smallPlan is how many loads a run holds before it allocates again.
const smallPlan = 8

func (s *DB) newRun(tx *bolt.Tx) *run {
	r := &run{s: s, tx: tx}
	r.loads = r.buf[:0]
	return r
}

// Run implements storage.Engine.
func (s *DB) Run(_ context.Context, c storage.Command) error {
	if c.Solo {
		return s.solo(c)
	}
	return s.exec(func(tx *bolt.Tx) (func(*bolt.Tx) error, error) {
		r := s.newRun(tx)
		if err := c.Load(r); err != nil {
			return nil, err
		}
		if r.err != nil {
			return nil, r.err
		}
		w, err := c.Decide()
		if err != nil || w.Empty() {
			return nil, err
		}
		var encoded [][]byte
		if tx.Writable() { // a read's decision only says whether to queue
			if encoded, err = prepare(w); err != nil {
				return nil, err
			}
		}
		return func(tx *bolt.Tx) error { return s.newRun(tx).write(w, encoded) }, nil
	})
}

// solo runs c in a write transaction of its own, outside the group
// commit: decided once, and a refusal rolls back what nothing wrote.
func (s *DB) solo(c storage.Command) error {
	if s.readOnly {
		return errReadOnly
	}
	var refused error
	err := s.db.Update(func(tx *bolt.Tx) error {
		tuneTx(tx)
		r := s.newRun(tx)
		if err := c.Load(r); err != nil {
			return err
		}
		if r.err != nil {
			return r.err
		}
		w, err := c.Decide()
		if err != nil {
			refused = err
			return err
		}
		if w.Empty() {
			return nil
		}
		return r.write(w, nil)
	})
	if refused != nil {
		return refused
	}
	return err
}

// prepare encodes w's records, in the command's first phase (their
// encodings hold nothing of the transaction that loaded them).
func prepare(w *storage.Writes) ([][]byte, error) {
	encoded := make([][]byte, len(w.Ops))
	for i, op := range w.Ops {
		if op.New == nil {
			continue
		}
		v, err := kindOf(op.Type).prepare(op.New)
		if err != nil {
			return nil, err
		}
		encoded[i] = v
	}
	return encoded, nil
}

// View implements storage.Engine.
func (s *DB) View(_ context.Context, _ string, load func(storage.Loader) error) error {
	return s.db.View(func(tx *bolt.Tx) error {
		r := s.newRun(tx)
		if err := load(r); err != nil {
			return err
		}
		return r.err
	})
}

// add keeps what a load found and returns its Ref.
func (r *run) add(l loaded) storage.Ref {
	r.loads = append(r.loads, l)
	return storage.Ref(len(r.loads) - 1)
}

// fail keeps the first error of a load.
func (r *run) fail(err error) storage.Ref {
	if r.err == nil {
		r.err = err
	}
	return r.add(loaded{})
}

// Get implements storage.Loader. A Get without a destination only locks,
// which the single writer holds already: it reads nothing.
func (r *run) Get(g storage.Get) storage.Ref {
	if g.Dst == nil {
		return r.add(loaded{lockOnly: true})
	}
	rec, err := kindOf(g.Type).get(r, g)
	if err != nil {
		return r.fail(err)
	}
	g.Type.Set(g.Dst, rec)
	if rec == nil {
		return r.add(loaded{})
	}
	return r.add(loaded{one: g.Key})
}

// GetAll implements storage.Loader.
func (r *run) GetAll(g storage.GetAll) storage.Ref {
	g.Type.Reset(g.Dst)
	keys := slices.Clone(g.Keys)
	slices.SortFunc(keys, storage.Key.Compare)
	keys = slices.CompactFunc(keys, func(a, b storage.Key) bool { return a.Compare(b) == 0 })
	k := kindOf(g.Type)
	var found []storage.Key
	for _, key := range keys {
		rec, err := k.get(r, storage.Get{Type: g.Type, Key: key, Mode: g.Mode})
		if err != nil {
			return r.fail(err)
		}
		if rec != nil {
			g.Type.Append(g.Dst, rec)
			found = append(found, key)
		}
	}
	return r.add(loaded{many: found})
}

// Range implements storage.Loader.
func (r *run) Range(q storage.Range) storage.Ref {
	t := q.Index.Type()
	if q.Dst != nil {
		t.Reset(q.Dst)
	}
	if q.Keys != nil {
		*q.Keys = (*q.Keys)[:0]
	}
	one := [1]storage.Key{q.Prefix}
	prefixes := one[:]
	if q.Of != storage.NoRef {
		if int(q.Of) < 0 || int(q.Of) >= len(r.loads) || r.loads[q.Of].lockOnly {
			return r.fail(fmt.Errorf("store: a range of %s is under load %d, which is not a queued read", t.Name(), q.Of))
		}
		prefixes = r.loads[q.Of].keys()
		if q.Parts > 0 {
			cut := make([]storage.Key, 0, len(prefixes))
			for _, k := range prefixes {
				if k = k[:min(q.Parts, len(k))]; len(cut) == 0 || cut[len(cut)-1].Compare(k) != 0 {
					cut = append(cut, k)
				}
			}
			prefixes = cut
		}
	}
	var keys []storage.Key
	n := 0
	k := kindOf(t)
	for _, p := range prefixes {
		if n == q.Limit {
			break
		}
		err := k.scan(r, &q, p, func(key storage.Key, rec any) bool {
			if q.Keys != nil {
				*q.Keys = append(*q.Keys, key)
			} else {
				t.Append(q.Dst, rec)
				keys = append(keys, t.KeyOf(rec))
			}
			n++
			return n < q.Limit
		})
		if err != nil {
			return r.fail(err)
		}
	}
	return r.add(loaded{many: keys})
}

// Count implements storage.Loader.
func (r *run) Count(ix storage.Ix, prefix storage.Key, dst *int) {
	n, err := kindOf(ix.Type()).count(r, ix, prefix)
	if err != nil {
		r.fail(err)
		return
	}
	*dst = n
}

// planCounterKey is the counts key of a write plan's counter: "c/" and
// its name, apart from the counters the store keeps itself.
func planCounterKey(name string) []byte { return append([]byte("c/"), name...) }

// Counter implements storage.Loader.
func (r *run) Counter(name string, dst *int64) {
	*dst = int64(readCounter(r.tx.Bucket(bucketCounts), planCounterKey(name)))
}

// Lock implements storage.Loader: the single writer holds every lock.
func (r *run) Lock(string) {}

// Flush implements storage.Loader: every load ran already.
func (r *run) Flush() error { return r.err }

// write writes w: each record with its index entries (with its
// encoding, when prepare made it), the counters, then the events.
func (r *run) write(w *storage.Writes, encoded [][]byte) error {
	r.acc = counterDeltas{}
	for i, op := range w.Ops {
		var err error
		switch {
		case op.Counter != "":
			r.acc[string(planCounterKey(op.Counter))] += op.N
		case op.New != nil:
			var v []byte
			if encoded != nil {
				v = encoded[i]
			}
			err = kindOf(op.Type).put(r, op.Old, op.New, v)
		case op.Old != nil:
			err = kindOf(op.Type).del(r, op.Old)
		default:
			err = errors.New("store: a write plan's op writes nothing")
		}
		if err != nil {
			return err
		}
	}
	if r.moves != nil && !r.bulk {
		if err := r.moves.apply(r.tx); err != nil {
			return err
		}
	}
	if err := r.acc.apply(r.tx); err != nil {
		return err
	}
	return r.s.appendEvents(r.tx, w.Events, w.At)
}

var _ storage.Engine = (*DB)(nil)
