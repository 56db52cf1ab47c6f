// Package storage is the seam between the commands and the stores.
//
// A command is written once, in package commands: a load plan (the
// records and index ranges it reads and locks, by key), its domain
// decision (pure, in its domain package), and a write plan (the records
// it puts and deletes, the counters it moves and the change-log events it
// appends). A store is a few primitives that run one load plan and one
// write plan in one transaction: Engine. The primitives are at the level
// of records and indexes, not statements, because one of the stores
// (bbolt) is not SQL: get or lock a record by key, a bounded range of an
// index, a counter, an advisory lock; put or delete a record with its
// index entries, add to a counter, append events.
//
// Kinds of record are described here once (Kind: name, key, codec,
// indexes). A store keeps a kind it has no mapping for generically (bbolt:
// a bucket per kind and per index; PostgreSQL: two generic tables), so a
// new kind needs no code in any store. The kinds kfa had before the seam
// keep their buckets and tables, each mapped once per store.
//
// The package knows no store, no driver and no rule; it imports only the
// change log, whose events a write plan appends.
package storage
