package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/oklog/ulid/v2"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/store/internal/storedoc"
	"github.com/kfa-project/kfa/tasks"
)

func putPushConfig(ctx context.Context, tx pgx.Tx, c *push.Config) error {
	v, err := storedoc.EncodePushConfig(c)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `INSERT INTO push_configs (task_id, id, doc) VALUES ($1, $2, $3)
		ON CONFLICT (task_id, id) DO UPDATE SET doc = excluded.doc`, c.TaskID, c.ID, v)
	return err
}

// pushTask reads (and with lock, locks) the task a config call is about,
// if ownerID owns it (any owner when ownerID is ""): ErrTaskNotFound for
// both an unknown task and another agent's.
func pushTask(ctx context.Context, tx pgx.Tx, ownerID, taskID string, lock bool) (tasks.Task, error) {
	q := "SELECT owner_id, state FROM tasks WHERE id = $1"
	if lock {
		q += " FOR UPDATE"
	}
	var owner, state string
	err := tx.QueryRow(ctx, q, taskID).Scan(&owner, &state)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && ownerID != "" && owner != ownerID) {
		return tasks.Task{}, push.ErrTaskNotFound
	}
	if err != nil {
		return tasks.Task{}, err
	}
	return tasks.Task{ID: taskID, OwnerID: owner, State: a2a.TaskState(state)}, nil
}

// PutPushConfig implements push.ConfigStore, under the task's row lock (a
// transition of the task waits for it, and then enqueues for the config).
func (s *DB) PutPushConfig(ctx context.Context, c push.Config, max int) (push.Config, bool, error) {
	var created bool
	err := s.write(ctx, func(tx pgx.Tx) error {
		t, err := pushTask(ctx, tx, c.OwnerID, c.TaskID, true)
		if err != nil {
			return err
		}
		if t.State.Terminal() {
			return push.ErrTaskTerminal
		}
		var n int
		var exists bool
		if err := tx.QueryRow(ctx, "SELECT count(*), coalesce(bool_or(id = $2), false) FROM push_configs WHERE task_id = $1",
			c.TaskID, c.ID).Scan(&n, &exists); err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		created = !exists
		if created && max > 0 && n >= max {
			return push.ErrTooManyConfigs
		}
		return putPushConfig(ctx, tx, &c)
	})
	if err != nil {
		return push.Config{}, false, err
	}
	return c, created, nil
}

func pushConfigsOf(ctx context.Context, tx pgx.Tx, taskID string) ([]push.Config, error) {
	rows, err := tx.Query(ctx, "SELECT doc FROM push_configs WHERE task_id = $1 ORDER BY id", taskID)
	if err != nil {
		return nil, err
	}
	docs, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return nil, err
	}
	var out []push.Config
	for _, v := range docs {
		c, err := storedoc.DecodePushConfig(v)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// PushConfigs implements push.ConfigStore.
func (s *DB) PushConfigs(ctx context.Context, ownerID, taskID string) ([]push.Config, error) {
	var out []push.Config
	err := s.read(ctx, func(tx pgx.Tx) error {
		if _, err := pushTask(ctx, tx, ownerID, taskID, false); err != nil {
			return err
		}
		var err error
		out, err = pushConfigsOf(ctx, tx, taskID)
		return err
	})
	return out, err
}

// PushConfig implements push.OutboxStore.
func (s *DB) PushConfig(ctx context.Context, taskID, id string) (push.Config, error) {
	var v []byte
	err := s.pool.QueryRow(ctx, "SELECT doc FROM push_configs WHERE task_id = $1 AND id = $2", taskID, id).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return push.Config{}, push.ErrNotFound
	}
	if err != nil {
		return push.Config{}, err
	}
	return storedoc.DecodePushConfig(v)
}

// DeletePushConfig implements push.ConfigStore: the config's pending
// deliveries fail in the same transaction.
func (s *DB) DeletePushConfig(ctx context.Context, ownerID, taskID, id string, at time.Time) (bool, error) {
	var deleted bool
	err := s.write(ctx, func(tx pgx.Tx) error {
		if _, err := pushTask(ctx, tx, ownerID, taskID, true); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, "DELETE FROM push_configs WHERE task_id = $1 AND id = $2", taskID, id)
		if err != nil {
			return err
		}
		if deleted = tag.RowsAffected() > 0; !deleted {
			return nil
		}
		return failPendingOf(ctx, tx, taskID, id, at)
	})
	return deleted, err
}

// failPendingOf fails the pending deliveries of a deleted config.
func failPendingOf(ctx context.Context, tx pgx.Tx, taskID, configID string, at time.Time) error {
	ds, err := queryDeliveries(ctx, tx, "SELECT doc FROM push_deliveries WHERE task_id = $1 AND state = 'p' ORDER BY id FOR UPDATE", taskID)
	if err != nil {
		return err
	}
	acc := deltas{}
	for _, d := range ds {
		if d.ConfigID != configID {
			continue
		}
		old := d
		d.State, d.FinishedAt, d.NextAt = push.Failed, at, time.Time{}
		d.Reason = "the config was deleted before the delivery succeeded"
		if err := putDelivery(ctx, tx, &old, &d, acc); err != nil {
			return err
		}
	}
	return acc.apply(ctx, tx)
}

// deliveryID is a delivery's id, derived as the bbolt store does: from the
// task, the config and the state, so that one transition makes one
// delivery per config; it sorts by the transition's time.
func deliveryID(t *tasks.Task, configID string) string {
	sum := sha256.Sum256([]byte(t.ID + "|" + configID + "|" + string(t.State)))
	var id ulid.ULID
	_ = id.SetTime(ulid.Timestamp(t.StatusTime))
	_ = id.SetEntropy(sum[:10])
	return id.String()
}

func pushEvent(t *tasks.Task) ([]byte, error) {
	return json.Marshal(a2a.StreamResponse{StatusUpdate: &a2a.TaskStatusUpdateEvent{
		TaskID: t.ID, ContextID: t.ContextID,
		Status: a2a.TaskStatus{State: t.State, Message: t.StatusMessage, Timestamp: a2a.FormatTime(t.StatusTime)},
	}})
}

// enqueuePush writes one pending delivery of t's transition per config of
// t, in the transaction of the transition, and returns their log events
// (DeliveryDue); acc takes the counter moves.
func enqueuePush(ctx context.Context, tx pgx.Tx, t *tasks.Task, acc deltas) ([]changelog.Event, error) {
	configs, err := pushConfigsOf(ctx, tx, t.ID)
	if err != nil || len(configs) == 0 {
		return nil, err
	}
	event, err := pushEvent(t)
	if err != nil {
		return nil, err
	}
	evs := make([]changelog.Event, 0, len(configs))
	for _, c := range configs {
		d := push.Delivery{
			ID: deliveryID(t, c.ID), TaskID: t.ID, ConfigID: c.ID, OwnerID: t.OwnerID,
			Destination: push.Destination(c.URL), State: push.Pending, Event: event,
			CreatedAt: t.StatusTime, NextAt: t.StatusTime,
		}
		if err := putDelivery(ctx, tx, nil, &d, acc); err != nil {
			return nil, err
		}
		evs = append(evs, deliveryDue(&d, t.StatusTime))
	}
	return evs, nil
}

// deliveryDue is the log event of d becoming due at at.
func deliveryDue(d *push.Delivery, at time.Time) changelog.Event {
	return changelog.Event{Kind: changelog.DeliveryDue, ID: d.ID, Owner: d.OwnerID, Ref: d.Destination, At: at}
}

// taskMoved is the log event of t's transition.
func taskMoved(t *tasks.Task) changelog.Event {
	return changelog.Event{Kind: changelog.TaskMoved, ID: t.ID, Owner: t.OwnerID, Ref: string(t.State), At: t.StatusTime}
}

var _ push.ConfigStore = (*DB)(nil)
