// Package postgres is the PostgreSQL store: the same Store interfaces of
// the domain packages as the bbolt store (package store), over a pgxpool,
// so that several kfa processes can share one database. store/storetest
// runs unchanged against both.
//
// Every command is one SQL transaction in two round trips (command.go):
// BEGIN and the command's loads in one pipelined batch, the command's
// domain decision in this process (the store holds no rule), then the
// decision's writes and COMMIT in a second batch. The loads lock in one
// order, agent, then discussion, then tasks: an ask locks its owner's
// agent row (the idempotent message id, the ask window and the open-task
// bound are the owner's), a reply its author's agent row (the reply
// rate), its discussion and then the WORKING tasks it may complete, a
// cancel its task, so a reply racing a cancel has exactly one winner and
// every per-agent limit holds across processes. No row is written by
// every command: an owner's totals are its counters, totals across owners
// are counted when asked (totals.go). A transaction that loses a deadlock
// or a unique race anyway is run again from the start.
//
// The schema is made by numbered SQL migrations embedded in the binary
// (migrations/NNNN_name.sql), applied by Open under an advisory lock so
// that processes starting together do not race; a database whose schema
// is newer than the binary is refused.
//
// Lists use keyset pagination on composite indexes, never OFFSET.
package postgres
