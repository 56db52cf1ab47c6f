// Package postgres is the PostgreSQL store: the same Store interfaces of
// the domain packages as the bbolt store (package store), over a pgxpool,
// so that several kfa processes can share one database. store/storetest
// runs unchanged against both.
//
// Every method is one SQL transaction, and every rule is decided inside
// it, under row locks: an ask locks its owner's agent row (the idempotent
// message id, the ask window and the open-task bound are the owner's), a
// reply locks its discussion and then the WORKING tasks it completes, a
// cancel locks its task, so a reply racing a cancel has exactly one
// winner. Counters (totalSize) move in the transaction that changes what
// they count, last, in name order, so that transactions never wait on
// each other in a cycle; a transaction that loses a deadlock or a unique
// race anyway is run again from the start.
//
// The schema is made by numbered SQL migrations embedded in the binary
// (migrations/NNNN_name.sql), applied by Open under an advisory lock so
// that processes starting together do not race; a database whose schema
// is newer than the binary is refused.
//
// Lists use keyset pagination on composite indexes, never OFFSET.
package postgres
