package store

import (
	"bytes"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/storage"
)

// genericKind keeps a kind this store has no mapping for, through the
// kind's codec: bucket "k/<kind>" holds each record under its encoded key
// (storage.Key.Encode), and bucket "i/<index>" each index entry (its
// leading parts, then the record's key, encoded) with the record's
// encoded key as its value. A put of a new record (no old one loaded)
// finds none under its key. A counted index counts its entries by their
// leading parts in the counts bucket, under "i/<index>", a zero byte and
// the encoded parts. The buckets are made by the first write.
type genericKind struct {
	t        storage.Type
	bucket   []byte
	indexes  []storage.Ix
	ixByName map[string][]byte // index name -> its bucket
}

func newGenericKind(t storage.Type) *genericKind {
	k := &genericKind{t: t, bucket: []byte("k/" + t.Name()), indexes: t.Indexes(), ixByName: map[string][]byte{}}
	for _, ix := range k.indexes {
		k.ixByName[ix.Name()] = []byte("i/" + ix.Name())
	}
	return k
}

// decode reads the record stored under encoded key ek.
func (k *genericKind) decode(ek, v []byte) (any, error) {
	key, ok := storage.DecodeKey(ek)
	if !ok {
		return nil, fmt.Errorf("store: %s: malformed key %x", k.t.Name(), ek)
	}
	return k.t.Decode(key, v)
}

func (k *genericKind) get(r *run, g storage.Get) (any, error) {
	if !k.t.Generic() {
		return nil, fmt.Errorf("store: kind %s has neither a codec nor a mapping in this store", k.t.Name())
	}
	b := r.tx.Bucket(k.bucket)
	if b == nil {
		return nil, nil
	}
	ek := g.Key.Encode()
	v := b.Get(ek)
	if v == nil {
		return nil, nil
	}
	rec, err := k.decode(ek, v)
	if err != nil {
		return nil, err
	}
	if g.Owner != "" {
		if o, ok := k.t.OwnerOf(rec); ok && o != g.Owner {
			return nil, nil
		}
	}
	return rec, nil
}

// walk calls fn with each key under prefix in bucket b, and before end
// (nil: no end), in order or reversed, until fn returns false.
func walk(b *bolt.Bucket, prefix, end []byte, reverse bool, fn func(k, v []byte) bool) {
	c := b.Cursor()
	in := func(k []byte) bool {
		return k != nil && bytes.HasPrefix(k, prefix) && (end == nil || bytes.Compare(k, end) < 0)
	}
	if !reverse {
		for k, v := c.Seek(prefix); in(k); k, v = c.Next() {
			if !fn(k, v) {
				return
			}
		}
		return
	}
	start := storage.PrefixEnd(prefix)
	if end != nil && (start == nil || bytes.Compare(end, start) < 0) {
		start = end
	}
	for k, v := seekBefore(c, start); in(k); k, v = c.Prev() {
		if !fn(k, v) {
			return
		}
	}
}

// rangeEnd is the encoded end of q's range (nil: none).
func rangeEnd(q *storage.Range) []byte {
	if q.To == nil {
		return nil
	}
	return storage.PrefixEnd(q.To.Encode())
}

func (k *genericKind) scan(r *run, q *storage.Range, prefix storage.Key, fn func(storage.Key, any) bool) error {
	if !k.t.Generic() {
		return fmt.Errorf("store: kind %s has neither a codec nor a mapping in this store", k.t.Name())
	}
	recs := r.tx.Bucket(k.bucket)
	if recs == nil {
		return nil
	}
	b := recs
	if !q.Index.Primary() {
		if b = r.tx.Bucket(k.ixByName[q.Index.Name()]); b == nil {
			return nil
		}
	}
	var err error
	walk(b, prefix.Encode(), rangeEnd(q), q.Reverse, func(ek, v []byte) bool {
		key, ok := storage.DecodeKey(ek)
		if !ok {
			err = fmt.Errorf("store: %s: malformed key %x", b, ek)
			return false
		}
		if q.Keys != nil {
			return fn(key, nil)
		}
		rk := ek
		if !q.Index.Primary() {
			rk = v
		}
		rv := recs.Get(rk)
		if rv == nil {
			err = fmt.Errorf("store: index %s lists %x, which %s does not hold", b, rk, recs)
			return false
		}
		var rec any
		if rec, err = k.decode(rk, rv); err != nil {
			return false
		}
		return fn(key, rec)
	})
	return err
}

// entries are rec's index entries: each index's bucket and entry key,
// and its counter key when the index is counted.
func (k *genericKind) entries(rec any) (buckets, keys, counters [][]byte) {
	rk := k.t.KeyOf(rec)
	for _, ix := range k.indexes {
		parts, ok := ix.Entry(rec)
		if !ok {
			continue
		}
		buckets = append(buckets, k.ixByName[ix.Name()])
		keys = append(keys, append(append(storage.Key{}, parts...), rk...).Encode())
		var c []byte
		if ix.IsCounted() {
			c = genericCounterKey(ix.Name(), parts)
		}
		counters = append(counters, c)
	}
	return buckets, keys, counters
}

// genericCounterKey is the counts key of a counted index's entries under
// parts.
func genericCounterKey(ix string, parts storage.Key) []byte {
	return cat([]byte("i/"+ix), []byte{0}, parts.Encode())
}

func (k *genericKind) prepare(rec any) ([]byte, error) { return k.t.Encode(rec) }

func (k *genericKind) put(r *run, old, rec any, v []byte) error {
	recs, err := r.tx.CreateBucketIfNotExists(k.bucket)
	if err != nil {
		return err
	}
	ek := k.t.KeyOf(rec).Encode()
	if old == nil && recs.Get(ek) != nil {
		// PostgreSQL's insert fails the same way (and its command runs
		// again, loading the record); the single writer has no such race.
		return fmt.Errorf("store: %s %q exists: a plan puts a record it did not load only when it is new", k.t.Name(), k.t.KeyOf(rec))
	}
	if old != nil {
		if err := k.unindex(r, old); err != nil {
			return err
		}
	}
	if v == nil {
		if v, err = k.t.Encode(rec); err != nil {
			return err
		}
	}
	if err := recs.Put(ek, v); err != nil {
		return err
	}
	buckets, keys, counters := k.entries(rec)
	for i := range buckets {
		b, err := r.tx.CreateBucketIfNotExists(buckets[i])
		if err != nil {
			return err
		}
		if err := b.Put(keys[i], ek); err != nil {
			return err
		}
		if counters[i] != nil {
			r.acc[string(counters[i])]++
		}
	}
	return nil
}

// unindex removes old's index entries.
func (k *genericKind) unindex(r *run, old any) error {
	buckets, keys, counters := k.entries(old)
	for i := range buckets {
		if b := r.tx.Bucket(buckets[i]); b != nil {
			if err := b.Delete(keys[i]); err != nil {
				return err
			}
		}
		if counters[i] != nil {
			r.acc[string(counters[i])]--
		}
	}
	return nil
}

func (k *genericKind) del(r *run, old any) error {
	recs := r.tx.Bucket(k.bucket)
	if recs == nil {
		return nil
	}
	if err := k.unindex(r, old); err != nil {
		return err
	}
	return recs.Delete(k.t.KeyOf(old).Encode())
}

func (k *genericKind) count(r *run, ix storage.Ix, prefix storage.Key) (int, error) {
	if !ix.IsCounted() {
		return 0, fmt.Errorf("store: index %s is not counted", ix.Name())
	}
	return readCounter(r.tx.Bucket(bucketCounts), genericCounterKey(ix.Name(), prefix)), nil
}
