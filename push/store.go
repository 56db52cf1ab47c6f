package push

import (
	"context"
	"time"

	"github.com/kfa-project/kfa/input"
)

// ConfigStore persists push configs. Each method is one transaction.
type ConfigStore interface {
	// PutPushConfig stores c on its task, replacing the task's config of
	// the same id, as DecidePut decides under the task's lock. created
	// says whether c is new.
	PutPushConfig(ctx context.Context, c Config, max int) (stored Config, created bool, err error)
	// PushConfigs returns the task's configs in id order, if ownerID owns
	// the task (any owner when ownerID is "").
	PushConfigs(ctx context.Context, ownerID, taskID string) ([]Config, error)
	// DeletePushConfig deletes the config, as DecideDelete decides under
	// the task's lock; a config the task does not have is no error
	// (deleted is false). The config's deliveries still pending fail in
	// the same transaction.
	DeletePushConfig(ctx context.Context, ownerID, taskID, id string, at time.Time) (deleted bool, err error)
}

// DeliveryQuery selects deliveries, newest first.
type DeliveryQuery struct {
	State    State  // "" for any
	TaskID   string // "" for any
	PageSize int
	After    string // a delivery id: the page starts after it
}

// Page sizes of the outbox listing.
const (
	DefaultDeliveryPageSize = 50
	MaxDeliveryPageSize     = 100
)

// NewDeliveryQuery checks an outbox listing as a client wrote it: the
// state filter (pending, delivered, failed, or "" for any) and the page
// size (DefaultDeliveryPageSize when nil).
func NewDeliveryQuery(state, taskID string, pageSize *int, after string) (DeliveryQuery, error) {
	size, err := input.PageSize(pageSize, DefaultDeliveryPageSize, MaxDeliveryPageSize)
	if err != nil {
		return DeliveryQuery{}, err
	}
	q := DeliveryQuery{TaskID: taskID, PageSize: size, After: after}
	switch st := State(state); st {
	case "", Pending, Delivered, Failed:
		q.State = st
	default:
		return DeliveryQuery{}, input.Errorf("state", "must be pending, delivered or failed, not %q", clipped(state, 32))
	}
	return q, nil
}

// DeliveryPage is one page of deliveries.
type DeliveryPage struct {
	Deliveries []Delivery
	Next       string // the After of the next page; "" on the last
}

// OutboxStats are the outbox's gauges, read without walking it.
type OutboxStats struct {
	Pending int
	// OldestPending is when the oldest pending delivery's transition
	// happened; zero when none is pending.
	OldestPending time.Time
}

// OutboxStore is the outbox of deliveries. The store writes deliveries
// itself, in the transaction of each transition (one per config of the
// task); these methods serve the sender and the operator.
//
// The sender walks the pending deliveries by destination (scheme, host
// and port): DueDestinations names the destinations that have something
// due, round-robin, and DueDeliveries reads one destination's due
// deliveries, so a destination with a flood of deliveries costs a scan
// one step and delays no other.
type OutboxStore interface {
	// DueDestinations walks the destinations that have pending
	// deliveries, in destination order, starting at the first after
	// q.After ("": the first), and returns those whose earliest pending
	// delivery is due at q.Now and that q.Skip does not name, at most
	// q.Limit. The walk visits at most MaxDueScan destinations per one
	// asked for; next is the last destination it visited when it stopped
	// early (the After of the next walk), "" when it reached the end.
	DueDestinations(ctx context.Context, q DueQuery) (dests []string, next string, err error)
	// DueDeliveries returns destination's pending deliveries due at now
	// (NextAt <= now), in due order (NextAt, then id), at most limit.
	DueDeliveries(ctx context.Context, destination string, now time.Time, limit int) ([]Delivery, error)
	// NextDue is when the earliest pending delivery is due; ok is false
	// when none is pending.
	NextDue(ctx context.Context) (at time.Time, ok bool, err error)
	// PushConfig returns the config a delivery is for (any owner).
	PushConfig(ctx context.Context, taskID, id string) (Config, error)
	// RecordAttempt applies a to the pending delivery (Delivery.Apply)
	// and returns it; ErrNotPending when it is pending no more. An attempt
	// the delivery has counted already (Delivery.Recorded) changes
	// nothing, and its delivery comes back as it is, whatever its state.
	RecordAttempt(ctx context.Context, id string, a Attempt) (Delivery, error)
	// Delivery returns one delivery.
	Delivery(ctx context.Context, id string) (Delivery, error)
	// Deliveries lists deliveries, newest first.
	Deliveries(ctx context.Context, q DeliveryQuery) (DeliveryPage, error)
	// RetryDelivery makes a failed delivery pending again, due at at (the
	// operator's retry); ErrNotFailed for one that has not failed.
	RetryDelivery(ctx context.Context, id string, at time.Time) (Delivery, error)
	// PurgeDeliveries deletes at most limit delivered or failed deliveries
	// that finished before before, and says how many it deleted.
	PurgeDeliveries(ctx context.Context, before time.Time, limit int) (int, error)
	// OutboxStats reads the gauges.
	OutboxStats(ctx context.Context) (OutboxStats, error)
}

// MaxDueScan bounds the destinations one DueDestinations walk visits, per
// destination it may return: a walk past many destinations with nothing
// due yet stops, and the next walk goes on from where it stopped.
const MaxDueScan = 16

// DueQuery is one walk of DueDestinations.
type DueQuery struct {
	Now   time.Time
	After string // the walk starts after this destination; "" at the first
	Limit int    // destinations returned at most
	// Skip names destinations not to return (those the sender is busy
	// with); each costs the walk one step.
	Skip []string
}

// DestinationLocker is an outbox several processes send from. A sender
// holds a destination's lock from before it reads the destination's due
// deliveries until their attempts are recorded, so one destination has at
// most one request in flight across every process, a delivery is never
// sent by two processes for one attempt, and a destination's deliveries go
// in due order. An outbox only one process sends from (bbolt's: the file
// is locked to its process) need not implement it.
type DestinationLocker interface {
	// DestinationLocks opens this sender's set of locks. Closing it
	// releases every lock it holds; so does the sender's process dying.
	DestinationLocks(ctx context.Context) (DestinationLocks, error)
}

// Claimer is a shared outbox whose destination locks can end while their
// sender lives: on PostgreSQL they are session locks, which a failover
// ends on every process at once, while a sender may have sent a delivery
// whose attempt it has not yet recorded. So that no other sender reads
// that delivery as due and sends it again for the same attempt, a sender
// claims each delivery before it sends it, in a write that commits (and,
// with synchronous replication, reaches the standby) first. Recording the
// attempt ends the claim; a sender that died without recording it leaves
// the claim to expire, and the delivery is sent again then.
type Claimer interface {
	// Claim makes the pending delivery id, due at or before at, due at
	// until instead. False: it was not due (another sender claimed it, or
	// its attempt was recorded meanwhile), and must not be sent.
	Claim(ctx context.Context, id string, at, until time.Time) (bool, error)
}

// DestinationLocks are one sender's destination locks. Its methods are
// safe for concurrent use; one destination is locked at most once at a
// time through one DestinationLocks.
type DestinationLocks interface {
	// TryLock takes destination's lock unless another sender holds it
	// (ok false); it does not wait.
	TryLock(ctx context.Context, destination string) (ok bool, err error)
	// Held says whether the lock TryLock took is still held: false once
	// the locks' session was found broken (the database then released
	// every lock of it), so the sender stops sending to destination.
	Held(destination string) bool
	// Unlock releases destination's lock.
	Unlock(ctx context.Context, destination string) error
	// Close releases every lock and ends the session.
	Close() error
}

// clipped shortens s to n bytes for an error message.
func clipped(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
