// Package store is kfa's bbolt storage: one file, <data>/kfa.db, holding
// agents, credentials, tasks, discussions, replies, inbox entries, knowledge
// records and the record change feed.
//
// Every method is one bbolt transaction, and holds no rule: a command
// loads what it names, calls its domain decision (asknet.DecideAsk,
// tasks.DecideCancel, ...) and writes what the decision returned. Writes
// that come from requests go through group commit (commit.go): a write
// shares its transaction with the writes that arrived while the previous
// one was committing, and is acknowledged only after that transaction has
// committed and been fsynced. A command runs in two phases, load and
// decide (which only reads), then persist, so a refusal has written
// nothing and leaves the rest of its batch alone; it is decided first in a
// read transaction too, so a refusal the state already settles never
// queues. A command may run more than once, so ids, times and encodings
// are made by the callers before it starts.
//
// Task records hold the task's A2A JSON, encoded once when the task is
// written (codec.go): reads that show a task copy those bytes, and only
// transitions decode a task.
//
// Secondary indexes and counters are written in the same transaction as the
// records they describe, and their keys are laid out so that a page is one
// cursor seek followed by pageSize steps.
//
// The package implements the Store interfaces of the domain packages; the
// behaviour every implementation must have is tested once in storetest.
package store
