package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/store/internal/storedoc"
)

func putPushConfig(ctx context.Context, tx execer, c *push.Config) error {
	v, err := storedoc.EncodePushConfig(c)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `INSERT INTO push_configs (task_id, id, doc) VALUES ($1, $2, $3)
		ON CONFLICT (task_id, id) DO UPDATE SET doc = excluded.doc`, c.TaskID, c.ID, v)
	return err
}

// loadPushTask queues the load of the task a config command is about,
// under its row lock (a transition of the task waits for the command, and
// then enqueues for the config), into dst (nil when there is none).
func loadPushTask(b *pgx.Batch, taskID string, dst **push.TaskRef) {
	*dst = nil
	b.Queue("SELECT owner_id, state FROM tasks WHERE id = $1 FOR UPDATE", taskID).QueryRow(func(row pgx.Row) error {
		var owner, state string
		err := row.Scan(&owner, &state)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err == nil {
			*dst = &push.TaskRef{ID: taskID, OwnerID: owner, State: a2a.TaskState(state)}
		}
		return err
	})
}

// scanConfigs is the callback of a batched read of config documents.
func scanConfigs(dst *[]push.Config) func(pgx.Rows) error {
	return func(rows pgx.Rows) error {
		*dst = nil
		for rows.Next() {
			var v []byte
			if err := rows.Scan(&v); err != nil {
				return err
			}
			c, err := storedoc.DecodePushConfig(v)
			if err != nil {
				return err
			}
			*dst = append(*dst, c)
		}
		return rows.Err()
	}
}

// PutPushConfig implements push.ConfigStore, in two round trips: BEGIN,
// the task under its row lock and its config ids, then push.DecidePut,
// then the write and COMMIT.
func (s *DB) PutPushConfig(ctx context.Context, c push.Config, max int) (push.Config, bool, error) {
	var (
		st      push.PutState
		created bool
	)
	err := s.command(ctx, CmdPutConfig, func(b *pgx.Batch) {
		st = push.PutState{}
		loadPushTask(b, c.TaskID, &st.Task)
		b.Queue("SELECT id FROM push_configs WHERE task_id = $1 ORDER BY id", c.TaskID).Query(func(rows pgx.Rows) error {
			var err error
			st.ConfigIDs, err = pgx.CollectRows(rows, pgx.RowTo[string])
			return err
		})
	}, func() (func(execer) error, error) {
		var err error
		if created, err = push.DecidePut(st, c, max); err != nil {
			return nil, err
		}
		return func(w execer) error { return putPushConfig(ctx, w, &c) }, nil
	})
	if err != nil {
		return push.Config{}, false, err
	}
	return c, created, nil
}

// PushConfigs implements push.ConfigStore in one statement: the task's
// configs are read only when the task is ownerID's, so another owner's
// task costs what an unknown one does.
func (s *DB) PushConfigs(ctx context.Context, ownerID, taskID string) ([]push.Config, error) {
	var docs [][]byte
	err := s.readRow(ctx, `SELECT ARRAY(SELECT c.doc FROM push_configs c WHERE c.task_id = t.id ORDER BY c.id)
		FROM tasks t WHERE t.id = $1 AND ($2 = '' OR t.owner_id = $2)`, []any{taskID, ownerID}, &docs)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, push.ErrTaskNotFound
	}
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

// PushConfig implements push.OutboxStore.
func (s *DB) PushConfig(ctx context.Context, taskID, id string) (push.Config, error) {
	var v []byte
	err := s.readRow(ctx, "SELECT doc FROM push_configs WHERE task_id = $1 AND id = $2", []any{taskID, id}, &v)
	if errors.Is(err, pgx.ErrNoRows) {
		return push.Config{}, push.ErrNotFound
	}
	if err != nil {
		return push.Config{}, err
	}
	return storedoc.DecodePushConfig(v)
}

// DeletePushConfig implements push.ConfigStore, in two round trips:
// BEGIN, the task under its row lock, whether it holds the config and its
// pending deliveries (locked), then push.DecideDelete, then the writes and
// COMMIT.
func (s *DB) DeletePushConfig(ctx context.Context, ownerID, taskID, id string, at time.Time) (bool, error) {
	var (
		st  push.DeleteState
		out push.DeleteOutcome
	)
	err := s.command(ctx, CmdDeleteConfig, func(b *pgx.Batch) {
		st = push.DeleteState{}
		loadPushTask(b, taskID, &st.Task)
		b.Queue("SELECT EXISTS (SELECT 1 FROM push_configs WHERE task_id = $1 AND id = $2)", taskID, id).
			QueryRow(func(row pgx.Row) error { return row.Scan(&st.Exists) })
		b.Queue("SELECT doc FROM push_deliveries WHERE task_id = $1 AND state = 'p' ORDER BY id FOR UPDATE", taskID).
			Query(func(rows pgx.Rows) error {
				for rows.Next() {
					var v []byte
					if err := rows.Scan(&v); err != nil {
						return err
					}
					d, err := storedoc.DecodeDelivery(v)
					if err != nil {
						return err
					}
					st.Pending = append(st.Pending, d)
				}
				return rows.Err()
			})
	}, func() (func(execer) error, error) {
		var err error
		if out, err = push.DecideDelete(st, ownerID, id, at); err != nil || !out.Deleted {
			return nil, err
		}
		before := make(map[string]push.Delivery, len(st.Pending))
		for _, d := range st.Pending {
			before[d.ID] = d
		}
		return func(w execer) error {
			if _, err := w.Exec(ctx, "DELETE FROM push_configs WHERE task_id = $1 AND id = $2", taskID, id); err != nil {
				return err
			}
			acc := deltas{}
			for i := range out.Failed {
				old := before[out.Failed[i].ID]
				if err := putDelivery(ctx, w, &old, &out.Failed[i], acc); err != nil {
					return err
				}
			}
			return acc.apply(ctx, w)
		}, nil
	})
	return out.Deleted, err
}

// deliveryDue is the log event of d becoming due at at (the operator's
// retry appends it).
func deliveryDue(d *push.Delivery, at time.Time) changelog.Event { return push.DueEvent(d, at) }

var _ push.ConfigStore = (*DB)(nil)
