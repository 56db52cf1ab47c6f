// Package asknet decides the two commands of the ask network that change
// tasks and discussions together: an ask (a WORKING task, and a public
// discussion unless the ask joins one) and a reply (stored on its
// discussion; when it qualifies, it completes the discussion's waiting
// tasks, and it tells everyone on the discussion).
//
// A decision is a pure function: it takes the state the command names,
// which the store has loaded and locked, the command and the time, and
// returns a refusal (a typed error saying why) or an outcome: the rows to
// write, the task transitions, the inbox entries, the push deliveries,
// the rate windows to keep and the change log's events. It does no I/O
// and reads no clock. Both stores (bbolt and PostgreSQL) load, call the
// decision and persist its outcome in one transaction; neither holds a
// rule of its own.
//
// The rules themselves stay where they belong: a task's transitions in
// tasks, a discussion's bounds and limits in discussions, deliveries in
// push. asknet composes them, which is why it exists: tasks and
// discussions do not import each other for a command, and the one
// package that may import both holds the commands that span them.
package asknet
