package storage

// Mode is how a load holds what it reads until its command ends.
type Mode uint8

const (
	// Read reads without a lock (bbolt's single writer serializes
	// anyway; PostgreSQL reads the command's snapshot).
	Read Mode = iota
	// Share locks the record against writers: they wait for the command,
	// other sharers do not (FOR SHARE).
	Share
	// Lock locks the record against other lockers and writers (FOR
	// UPDATE). A command takes its locks first, in the order agent,
	// discussion, tasks, so that two commands never wait on each other in
	// opposite orders.
	Lock
)

// Ref names a load already queued, for a later load of the same batch
// whose prefix is each of its records' keys (Range.Of).
type Ref int

// NoRef is the Ref of nothing.
const NoRef Ref = -1

// Get loads one record by key.
type Get struct {
	Type Type
	Key  Key
	Mode Mode
	// Owner, when not "", loads the record only if the kind's owner of it
	// is Owner: another owner's record is loaded (and locked) as a missing
	// one is, not at all.
	Owner string
	// Brief loads the record without the parts a decision does not read
	// (a task's history), where the store can leave them out; a Put of a
	// record loaded brief rewrites only what the plan changed.
	Brief bool
	// Dst receives the record, a **T (nil when there is none). A Get
	// without Dst only locks (Mode): it reads nothing.
	Dst any
}

// GetAll loads the records of a set of keys (bounded by its caller), in
// key order: one statement on PostgreSQL, whatever the number of keys.
type GetAll struct {
	Type Type
	Keys []Key
	Mode Mode
	// Dst receives the records found, a *[]T.
	Dst any
}

// Range loads a bounded range of an index: the records whose entries
// start with Prefix (or, with Of, with each key of another load's
// records), in entry order.
type Range struct {
	Index  Ix
	Prefix Key
	// Of, when not NoRef (set it: the zero Ref is the first load), takes
	// the prefix from the records of another load instead: every record
	// of the index under each of their keys. The stores say it in the same
	// round trip.
	Of Ref
	// Parts, with Of, takes only the first Parts parts of each key (0:
	// all): a reply's key begins with its discussion's.
	Parts int
	// To, when set, ends the range: entries whose first len(To) parts
	// sort after To are left out (To's own, and those under it, are in).
	To    Key
	Limit int // at most this many (a range is always bounded)
	// Reverse walks from the end of the range.
	Reverse bool
	Mode    Mode
	Brief   bool
	// Dst receives the records, a *[]T; nil with Keys set.
	Dst any
	// Keys, when set, receives each entry's key (its leading parts, then
	// the record's key) instead of the records, which are not read.
	Keys *[]Key
}

// Loader runs the loads of one command, or of one read, in the store's
// transaction. bbolt loads at once; PostgreSQL queues each load into the
// batch that begins the transaction, and fills the destinations when
// Flush sends it (the store flushes after the load plan returns). A plan
// reads its destinations only after a Flush, or in its decision.
type Loader interface {
	// Get queues one record's load.
	Get(g Get) Ref
	// GetAll queues the load of the records of a set of keys.
	GetAll(g GetAll) Ref
	// Range queues a range's.
	Range(r Range) Ref
	// Count queues the read of how many entries of a counted index start
	// with prefix (its whole leading parts).
	Count(ix Ix, prefix Key, dst *int)
	// Counter queues the read of a counter a write plan moves (0 when it
	// never moved).
	Counter(name string, dst *int64)
	// Lock takes an advisory lock on name until the command ends (no
	// record is read). bbolt's single writer holds every lock already.
	Lock(name string)
	// Flush runs what is queued (one PostgreSQL round trip). A plan calls
	// it only when a load needs a value that no Ref can carry; it costs a
	// round trip, so no hot command does.
	Flush() error
}

// One queues the load of k's record under key into dst.
func One[T any](l Loader, k *Kind[T], key Key, mode Mode, dst **T) Ref {
	*dst = nil
	return l.Get(Get{Type: k, Key: key, Mode: mode, Dst: dst})
}

// LockOnly queues the lock of k's record under key, reading nothing of
// it: the lock a command orders itself by (bbolt's single writer holds
// it already).
func LockOnly[T any](l Loader, k *Kind[T], key Key) Ref {
	return l.Get(Get{Type: k, Key: key, Mode: Lock})
}

// Owned queues the load of k's record under key into dst if owner owns
// it (any owner when owner is "").
func Owned[T any](l Loader, k *Kind[T], key Key, owner string, mode Mode, dst **T) Ref {
	*dst = nil
	return l.Get(Get{Type: k, Key: key, Mode: mode, Owner: owner, Dst: dst})
}

// All queues the load of k's records under keys (those that exist, in
// key order) into dst.
func All[T any](l Loader, k *Kind[T], keys []Key, mode Mode, dst *[]T) Ref {
	*dst = (*dst)[:0]
	return l.GetAll(GetAll{Type: k, Keys: keys, Mode: mode, Dst: dst})
}

// Many queues the load of at most limit records of ix under prefix into
// dst.
func Many[T any](l Loader, ix *Index[T], prefix Key, limit int, mode Mode, dst *[]T) Ref {
	*dst = (*dst)[:0]
	return l.Range(Range{Index: ix, Prefix: prefix, Of: NoRef, Limit: limit, Mode: mode, Dst: dst})
}

// Under queues the load of ix's records under the key of each record of
// the load of, at most limit in all, into dst.
func Under[T any](l Loader, ix *Index[T], of Ref, limit int, mode Mode, dst *[]T) Ref {
	*dst = (*dst)[:0]
	return l.Range(Range{Index: ix, Of: of, Limit: limit, Mode: mode, Dst: dst})
}

// Entries queues the load of at most limit entry keys of ix under prefix
// into dst, without their records.
func Entries[T any](l Loader, ix *Index[T], prefix Key, limit int, dst *[]Key) Ref {
	*dst = (*dst)[:0]
	return l.Range(Range{Index: ix, Prefix: prefix, Of: NoRef, Limit: limit, Keys: dst})
}
