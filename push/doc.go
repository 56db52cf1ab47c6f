// Package push owns push notifications: the configs an agent attaches to
// its tasks (where to POST, with which token and authentication), the
// rules a destination must satisfy (Policy: public https unless the
// operator allows more), and the outbox of deliveries a task transition
// leaves behind, with the retry schedule each delivery follows.
//
// A task's configs and its deliveries live in the store, next to the task:
// the decision of a transition makes one delivery for each config
// (Deliveries), which the store writes in the same transaction as the
// transition it announces, so a notification is as durable as the
// transition. The config commands are decisions too (DecidePut,
// DecideDelete). Sending is the webhook package's job.
//
// The package holds the rules and the Store interfaces a backend
// implements; it imports neither net/http nor bbolt.
package push
