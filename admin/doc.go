// Package admin is the operator's channel into a running kfa: an HTTP API
// served only on a unix socket in the data directory (mode 0600, in a 0700
// directory), which the kfa CLI uses while the server holds the bbolt file.
// When no server runs, the CLI opens the file itself and serves the same
// handler to itself over an in-memory pipe (PipeListener), so every command
// runs the same code either way.
//
// Like the public surfaces, it translates HTTP to the service layer
// (service.Operator: agents, tasks, discussions, inboxes, records, the
// push outbox and the signing keys) and never opens the store itself;
// what is the database's or the index's alone (stats, check, backup, the
// index's sync and rebuild) goes through interfaces of its own (Store,
// Indexer) that the server implements.
package admin
