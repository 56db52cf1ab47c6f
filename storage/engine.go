package storage

import "context"

// Command is one command as a plan: Load queues what it reads and locks;
// Decide runs on what Load read and returns the write plan (nil, or
// empty, for nothing to write) or a refusal, which writes nothing. Both
// may run more than once (a store runs a command again after a deadlock,
// or decides first on a read), so Load resets what it fills and neither
// has an effect outside its own variables.
type Command struct {
	// Name names the command in the store's statistics.
	Name string
	// Solo runs the command in a transaction of its own, decided once: a
	// large one (an import batch) that a group commit would decide twice
	// and hold its company behind.
	Solo bool
	// Bookkeeping marks a command that records what happened already or
	// keeps the store in order, and answers no client: a push attempt
	// made, the purge of finished deliveries, the first signing key. A
	// store that refuses writes for now (PostgreSQL's
	// --require-sync-replica, while no synchronous standby streams) still
	// runs it: refusing to record an attempt made would only have the
	// delivery sent again.
	Bookkeeping bool
	Load        func(Loader) error
	Decide      func() (*Writes, error)
}

// Engine is what a store is to the commands: it runs one command in one
// transaction, or one read in one snapshot.
//
// On PostgreSQL, Run is two round trips: BEGIN with every load of the
// plan (one batch; the locks are taken in the order the plan queues
// them), then the writes with COMMIT (another). View is one. On bbolt,
// Run decides in the single writer's transaction (group commit), and
// View reads in a read transaction.
type Engine interface {
	// Run runs c. It returns Decide's refusal as it is, or the store's
	// error.
	Run(ctx context.Context, c Command) error
	// View runs load in one snapshot and flushes it.
	View(ctx context.Context, name string, load func(Loader) error) error
}
