package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/commands"
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
		var owner string
		err := tx.QueryRow(ctx, "SELECT owner_id FROM tasks WHERE id = $1", taskID).Scan(&owner)
		if errors.Is(err, pgx.ErrNoRows) || (err == nil && ownerID != "" && owner != ownerID) {
			return push.ErrTaskNotFound
		}
		if err != nil {
			return err
		}
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

var _ push.ConfigStore = (*DB)(nil)

// The schema's PushConfigs, in push_configs.
func init() {
	mapped[commands.PushConfigs] = &table[push.Config]{
		kind: commands.PushConfigs, name: "push_configs", key: []column{{"t.task_id", text}, {"t.id", text}},
		cols: "t.doc", read: docScan(storedoc.DecodePushConfig),
		write: func(w *pgWrites, _, c *push.Config) error { return putPushConfig(w.ctx, w.w, c) },
		remove: func(w *pgWrites, old *push.Config) error {
			return w.exec("DELETE FROM push_configs WHERE task_id = $1 AND id = $2", old.TaskID, old.ID)
		},
	}
}
