package storage

import "fmt"

// Kind describes one kind of record once: its name, its key, its codec
// and its indexes. A store that has no mapping of its own for a kind
// keeps it generically, through the codec; the kinds a store maps (those
// that had buckets and tables before the seam) may have no codec.
type Kind[T any] struct {
	name    string
	key     func(*T) Key
	codec   Codec[T]
	owner   func(*T) string
	primary *Index[T]
	indexes []*Index[T]
}

// Codec encodes a kind's records for a store that keeps them
// generically. Decode receives the record's key too, for a kind whose
// document does not repeat it.
type Codec[T any] struct {
	Encode func(*T) ([]byte, error)
	Decode func(key Key, v []byte) (T, error)
}

// NewKind describes a kind named name (unique among kinds, [a-z0-9_.]),
// whose records are keyed by key, encoded by c (zero for a kind every
// store maps).
func NewKind[T any](name string, key func(*T) Key, c Codec[T]) *Kind[T] {
	k := &Kind[T]{name: name, key: key, codec: c}
	k.primary = &Index[T]{kind: k, primary: true, entry: func(*T) (Key, bool) { return nil, true }}
	return k
}

// Owned says that a record of k belongs to the agent owner returns: a
// Get may then ask for an owner's record only, so another agent's costs
// what a missing one does.
func (k *Kind[T]) Owned(owner func(*T) string) *Kind[T] {
	k.owner = owner
	return k
}

// Index adds a secondary index named name (unique among indexes) to k:
// entry returns the leading parts of a record's entry (the record's key
// follows them), or false for a record the index leaves out.
func (k *Kind[T]) Index(name string, entry func(*T) (Key, bool)) *Index[T] {
	ix := &Index[T]{kind: k, name: name, entry: entry}
	k.indexes = append(k.indexes, ix)
	return ix
}

// Keys is k's records in key order, as an index: a range of it is the
// records whose keys start with a prefix.
func (k *Kind[T]) Keys() *Index[T] { return k.primary }

// Name implements Type.
func (k *Kind[T]) Name() string { return k.name }

// KeyOf implements Type.
func (k *Kind[T]) KeyOf(rec any) Key { return k.key(rec.(*T)) }

// Generic implements Type.
func (k *Kind[T]) Generic() bool { return k.codec.Encode != nil && k.codec.Decode != nil }

// Encode implements Type.
func (k *Kind[T]) Encode(rec any) ([]byte, error) {
	if !k.Generic() {
		return nil, fmt.Errorf("record: kind %s has no codec: a store must map it", k.name)
	}
	return k.codec.Encode(rec.(*T))
}

// Decode implements Type.
func (k *Kind[T]) Decode(key Key, v []byte) (any, error) {
	if !k.Generic() {
		return nil, fmt.Errorf("record: kind %s has no codec: a store must map it", k.name)
	}
	t, err := k.codec.Decode(key, v)
	if err != nil {
		return nil, fmt.Errorf("record: decode %s %q: %w", k.name, key, err)
	}
	return &t, nil
}

// OwnerOf implements Type.
func (k *Kind[T]) OwnerOf(rec any) (string, bool) {
	if k.owner == nil {
		return "", false
	}
	return k.owner(rec.(*T)), true
}

// Indexes implements Type.
func (k *Kind[T]) Indexes() []Ix {
	out := make([]Ix, len(k.indexes))
	for i, ix := range k.indexes {
		out[i] = ix
	}
	return out
}

// Set implements Type: dst is a **T.
func (k *Kind[T]) Set(dst, rec any) {
	if rec == nil {
		*dst.(**T) = nil
		return
	}
	*dst.(**T) = rec.(*T)
}

// Append implements Type: dst is a *[]T.
func (k *Kind[T]) Append(dst, rec any) {
	s := dst.(*[]T)
	*s = append(*s, *rec.(*T))
}

// Reset implements Type: dst, a **T or a *[]T, is emptied.
func (k *Kind[T]) Reset(dst any) {
	switch d := dst.(type) {
	case **T:
		*d = nil
	case *[]T:
		*d = (*d)[:0]
	}
}

// Type is a Kind as a store sees it: untyped, since a store keeps every
// kind. A record is passed as a *T of its kind.
type Type interface {
	// Name is the kind's name.
	Name() string
	// KeyOf is rec's key.
	KeyOf(rec any) Key
	// Generic reports whether the kind has a codec.
	Generic() bool
	// Encode encodes rec for generic storage.
	Encode(rec any) ([]byte, error)
	// Decode decodes a record kept generically under key; it returns a *T.
	Decode(key Key, v []byte) (any, error)
	// OwnerOf is rec's owner; ok is false for a kind without owners.
	OwnerOf(rec any) (owner string, ok bool)
	// Indexes are the kind's secondary indexes.
	Indexes() []Ix
	// Set sets dst (a **T) to rec (a *T, or nil).
	Set(dst, rec any)
	// Append appends rec (a *T) to dst (a *[]T).
	Append(dst, rec any)
	// Reset empties dst (a **T or a *[]T).
	Reset(dst any)
}

// Index is an index of a kind's records: the kind's keys themselves
// (Kind.Keys), or a secondary index (Kind.Index), whose entries are a
// record's leading parts followed by its key.
type Index[T any] struct {
	kind    *Kind[T]
	name    string
	primary bool
	counted bool
	entry   func(*T) (Key, bool)
}

// Counted makes the store keep a count of ix's entries by their leading
// parts, read with Count.
func (ix *Index[T]) Counted() *Index[T] {
	ix.counted = true
	return ix
}

// Name implements Ix: "" for a kind's keys.
func (ix *Index[T]) Name() string { return ix.name }

// Type implements Ix.
func (ix *Index[T]) Type() Type { return ix.kind }

// Primary implements Ix.
func (ix *Index[T]) Primary() bool { return ix.primary }

// IsCounted implements Ix.
func (ix *Index[T]) IsCounted() bool { return ix.counted }

// Entry implements Ix: rec's leading parts in the index.
func (ix *Index[T]) Entry(rec any) (Key, bool) { return ix.entry(rec.(*T)) }

// Ix is an Index as a store sees it.
type Ix interface {
	// Name is the index's name, "" for its kind's keys.
	Name() string
	// Type is the index's kind.
	Type() Type
	// Primary reports whether the index is its kind's keys.
	Primary() bool
	// IsCounted reports whether the store counts the entries by their
	// leading parts.
	IsCounted() bool
	// Entry is rec's leading parts (nil for the kind's keys); ok is false
	// when the index leaves rec out.
	Entry(rec any) (parts Key, ok bool)
}
