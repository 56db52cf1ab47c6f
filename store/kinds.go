package store

import (
	"fmt"

	"github.com/kfa-project/kfa/storage"
)

// The kinds this store kept in buckets before the seam, mapped once each
// (kind_*.go): the key's bytes, the record's encoding, and the buckets
// its index entries and counters live in. Which records an index holds is
// the schema's (commands: each index's entry function), never decided
// here.

// part is how one key part is laid out in a bucket key.
type part struct {
	size int  // bytes; 0: the rest of the key (last part only)
	ulid bool // a ULID string kept as its 16 bytes
}

var (
	pULID = part{size: 16, ulid: true}
	pU64  = part{size: 8} // storage.Uint, storage.Millis: 8 bytes already
	pRest = part{}
)

// keyBytes lays out the first len(k) parts of a key; ok is false for a
// part no stored key can hold (a malformed id), which finds nothing.
func keyBytes(ps []part, k storage.Key) ([]byte, bool) {
	if len(k) > len(ps) {
		return nil, false
	}
	n := 0
	for i, s := range k {
		if ps[i].ulid {
			n += 16
		} else {
			n += len(s)
		}
	}
	out := make([]byte, 0, n)
	for i, s := range k {
		p := ps[i]
		switch {
		case p.ulid:
			var ok bool
			if out, ok = appendID(out, s); !ok {
				return nil, false
			}
		case p.size > 0 && len(s) != p.size:
			return nil, false
		default:
			out = append(out, s...)
		}
	}
	return out, true
}

// keyOf reads a whole key back from its bytes.
func keyOf(ps []part, b []byte) (storage.Key, bool) {
	k := make(storage.Key, 0, len(ps))
	for _, p := range ps {
		n := p.size
		if n == 0 {
			n = len(b)
		}
		if len(b) < n {
			return nil, false
		}
		if p.ulid {
			k = append(k, idString(b[:n]))
		} else {
			k = append(k, string(b[:n]))
		}
		b = b[n:]
	}
	return k, len(b) == 0
}

// scanEnd is the bytes a range of q ends before (nil: no end).
func scanEnd(ps []part, q *storage.Range) []byte {
	if q.To == nil {
		return nil
	}
	b, ok := keyBytes(ps, q.To)
	if !ok {
		return nil
	}
	return prefixEnd(b)
}

// docKind maps a kind kept as one document per key in one bucket, with
// what each put and delete does beside it (its index entries and
// counters) and the scans of its secondary indexes.
type docKind[T any] struct {
	kind   *storage.Kind[T]
	bucket []byte
	parts  []part
	decode func(k, v []byte) (T, error)
	encode func(*T) ([]byte, error)
	// owner, when set, reads a stored record's owner without decoding it.
	owner func(v []byte) (string, error)
	// onPut and onDel keep what lives beside the document.
	onPut func(r *run, old, rec *T) error
	onDel func(r *run, old *T) error
	// write and remove, when set, do the whole put (given the record's
	// encoding, nil when the kind has no encode) and delete instead (for a
	// kind whose store code writes the document with its entries).
	write  func(r *run, old, rec *T, v []byte) error
	remove func(r *run, old *T) error
	// decodeKey, when set, decodes a record read by its key (a Get), for a
	// kind whose record repeats its key's parts.
	decodeKey func(key storage.Key, v []byte) (T, error)
	// brief, when set, decodes a record of a brief range (storage.Range.
	// Brief) without the parts a decision does not read.
	brief func(k, v []byte) (T, error)
	// scans are the secondary indexes' walks.
	scans map[storage.Ix]func(r *run, q *storage.Range, prefix storage.Key, fn func(storage.Key, any) bool) error
	// counts are the counted indexes' counters.
	counts map[storage.Ix]func(r *run, prefix storage.Key) (int, error)
}

func (k *docKind[T]) get(r *run, g storage.Get) (any, error) {
	kb, ok := keyBytes(k.parts, g.Key)
	if !ok || len(g.Key) != len(k.parts) {
		return nil, nil
	}
	v := r.tx.Bucket(k.bucket).Get(kb)
	if v == nil {
		return nil, nil
	}
	if g.Owner != "" && k.owner != nil {
		o, err := k.owner(v)
		if err != nil || o != g.Owner {
			return nil, err
		}
	}
	var t T
	var err error
	if k.decodeKey != nil {
		t, err = k.decodeKey(g.Key, v)
	} else {
		t, err = k.decode(kb, v)
	}
	if err != nil {
		return nil, err
	}
	if g.Owner != "" && k.owner == nil {
		if o, ok := k.kind.OwnerOf(&t); ok && o != g.Owner {
			return nil, nil
		}
	}
	return &t, nil
}

func (k *docKind[T]) scan(r *run, q *storage.Range, prefix storage.Key, fn func(storage.Key, any) bool) error {
	if !q.Index.Primary() {
		s, ok := k.scans[q.Index]
		if !ok {
			return fmt.Errorf("store: %s has no walk of index %s", k.kind.Name(), q.Index.Name())
		}
		return s(r, q, prefix, fn)
	}
	pb, ok := keyBytes(k.parts, prefix)
	if !ok {
		return nil
	}
	var err error
	walk(r.tx.Bucket(k.bucket), pb, scanEnd(k.parts, q), q.Reverse, func(kb, v []byte) bool {
		key, ok := keyOf(k.parts, kb)
		if !ok {
			return true // kfa check reports it
		}
		if q.Keys != nil {
			return fn(key, nil)
		}
		decode := k.decode
		if q.Brief && k.brief != nil {
			decode = k.brief
		}
		var t T
		if t, err = decode(kb, v); err != nil {
			return false
		}
		return fn(key, &t)
	})
	return err
}

// keyOfRecord is rec's key bytes.
func (k *docKind[T]) keyOfRecord(rec *T) ([]byte, error) {
	key := k.kind.KeyOf(rec)
	kb, ok := keyBytes(k.parts, key)
	if !ok || len(key) != len(k.parts) {
		return nil, fmt.Errorf("store: %s key %q is malformed", k.kind.Name(), key)
	}
	return kb, nil
}

func (k *docKind[T]) prepare(rec any) ([]byte, error) {
	if k.encode == nil {
		return nil, nil
	}
	return k.encode(rec.(*T))
}

func (k *docKind[T]) put(r *run, old, rec any, v []byte) error {
	t := rec.(*T)
	var o *T
	if old != nil {
		o = old.(*T)
	}
	if v == nil && k.encode != nil {
		var err error
		if v, err = k.encode(t); err != nil {
			return err
		}
	}
	if k.write != nil {
		return k.write(r, o, t, v)
	}
	kb, err := k.keyOfRecord(t)
	if err != nil {
		return err
	}
	if err := r.tx.Bucket(k.bucket).Put(kb, v); err != nil {
		return err
	}
	if k.onPut == nil {
		return nil
	}
	return k.onPut(r, o, t)
}

func (k *docKind[T]) del(r *run, old any) error {
	t := old.(*T)
	if k.remove != nil {
		return k.remove(r, t)
	}
	kb, err := k.keyOfRecord(t)
	if err != nil {
		return err
	}
	if err := r.tx.Bucket(k.bucket).Delete(kb); err != nil {
		return err
	}
	if k.onDel == nil {
		return nil
	}
	return k.onDel(r, t)
}

func (k *docKind[T]) count(r *run, ix storage.Ix, prefix storage.Key) (int, error) {
	c, ok := k.counts[ix]
	if !ok {
		return 0, fmt.Errorf("store: %s has no count of index %s", k.kind.Name(), ix.Name())
	}
	return c(r, prefix)
}

// walkRefs walks an index bucket whose keys are prefix bytes then a
// record's key bytes (or whose value is the record's key bytes, when
// value is set), reading each record of k.
func (k *docKind[T]) walkRefs(r *run, q *storage.Range, bucket, pb, end []byte, value bool,
	entry func(ik, v []byte) (storage.Key, []byte, bool), fn func(storage.Key, any) bool) error {
	recs := r.tx.Bucket(k.bucket)
	var err error
	walk(r.tx.Bucket(bucket), pb, end, q.Reverse, func(ik, v []byte) bool {
		key, rk, ok := entry(ik, v)
		if !ok {
			return true // kfa check reports it
		}
		if q.Keys != nil {
			return fn(key, nil)
		}
		rv := recs.Get(rk)
		if rv == nil {
			err = fmt.Errorf("store: %s lists %x, which %s does not hold", bucket, rk, k.bucket)
			return false
		}
		var t T
		if t, err = k.decode(rk, rv); err != nil {
			return false
		}
		return fn(key, &t)
	})
	return err
}
