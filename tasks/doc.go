// Package tasks owns the lifecycle of ask-network tasks: ask, get, list,
// cancel, and the completion rule a qualifying reply applies.
//
// A task is created TASK_STATE_WORKING, owned by the asking agent's id and
// mapped to one discussion. It leaves WORKING exactly once: to COMPLETED by
// a qualifying reply, or to CANCELED by its owner (or the operator).
// Terminal states never change. The status timestamp moves only on those
// three events; the transition methods here are the only code that sets it.
//
// The package holds the rules and the Store it needs; it imports neither
// net/http nor bbolt.
package tasks
