package push

import (
	"context"
	"time"
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
type OutboxStore interface {
	// DueDeliveries returns pending deliveries due at now (NextAt <= now),
	// in due order (NextAt, then id), at most limit. want, when not nil,
	// is asked about each due delivery's Destination, in that order,
	// before the delivery is read: those it refuses are skipped (a busy
	// destination costs the walk one step, not a read).
	DueDeliveries(ctx context.Context, now time.Time, limit int, want func(destination string) bool) ([]Delivery, error)
	// NextDue is when the earliest pending delivery is due; ok is false
	// when none is pending.
	NextDue(ctx context.Context) (at time.Time, ok bool, err error)
	// PushConfig returns the config a delivery is for (any owner).
	PushConfig(ctx context.Context, taskID, id string) (Config, error)
	// RecordAttempt applies a to the pending delivery (Delivery.Apply)
	// and returns it; ErrNotPending when it is pending no more.
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

// Claimer is an outbox several processes send from. A sender claims each
// delivery before it sends it: a claim holds until until, or until the
// attempt is recorded, and another process's claim of the same delivery
// meanwhile fails, so each attempt is made by one process; a crashed
// process's claims run out and its deliveries are sent again. An outbox
// only one process sends from need not implement it.
type Claimer interface {
	// ClaimDelivery claims the pending delivery id at now until until;
	// claimed is false when it is claimed already or pending no more.
	ClaimDelivery(ctx context.Context, id string, now, until time.Time) (claimed bool, err error)
}
