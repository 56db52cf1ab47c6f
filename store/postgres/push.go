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

var _ push.ConfigStore = (*DB)(nil)

// The schema's PushConfigs, in push_configs.
func init() {
	mapped[commands.PushConfigs] = &table[push.Config]{
		kind: commands.PushConfigs, name: "push_configs", key: []column{{"t.task_id", convText}, {"t.id", convText}},
		cols: "t.doc", read: docScan(storedoc.DecodePushConfig),
		write: func(w *pgWrites, _, c *push.Config) error { return putPushConfig(w.ctx, w.w, c) },
		remove: func(w *pgWrites, old *push.Config) error {
			return w.exec("DELETE FROM push_configs WHERE task_id = $1 AND id = $2", old.TaskID, old.ID)
		},
	}
}
