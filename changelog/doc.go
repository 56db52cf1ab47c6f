// Package changelog is kfa's one change log: every transaction that
// commits appends, in that same transaction, the events that say what it
// changed (a task created or moved, a discussion opened or replied to, a
// record upserted or deleted, a delivery that became due, an agent
// revoked or rotated), each at a position that only grows.
//
// The log is the single source of "what changed" for everything that
// follows the store: the search index, the push worker, the stream
// broker, the metrics and the credential caches, in every process, on
// either backend. A commit hook (bbolt) or NOTIFY (PostgreSQL) only wakes
// followers; a follower that misses a wake-up loses nothing, because it
// reads from its own cursor.
//
// The package holds the event model and the interfaces; the stores
// implement Log. It imports neither net/http nor a database.
package changelog
