package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/asknet"
	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/tasks"
)

// taskColumns are what a task row is read as (scanTask).
const taskColumns = `id, context_id, owner_id, discussion_id, message_id, state, status_ms, created_ms,
	w_head, w_status, w_artifacts, w_metadata, w_history, w_nhistory`

// taskRow is a task as stored: its header and its wire JSON.
type taskRow struct {
	t    tasks.Task // the header only
	wire tasks.WireJSON
}

func scanTask(row pgx.Row) (taskRow, error) {
	var (
		r               taskRow
		state           string
		status, created int64
	)
	err := row.Scan(&r.t.ID, &r.t.ContextID, &r.t.OwnerID, &r.t.DiscussionID, &r.t.MessageID, &state, &status, &created,
		&r.wire.Head, &r.wire.Status, &r.wire.Artifacts, &r.wire.Metadata, &r.wire.History, &r.wire.NHistory)
	if err != nil {
		return r, err
	}
	r.t.State, r.t.StatusTime, r.t.CreatedAt = a2a.TaskState(state), fromMS(status), fromMS(created)
	return r, nil
}

// task decodes the whole task.
func (r *taskRow) task() (tasks.Task, error) {
	t := r.t
	if err := r.wire.Decode(&t); err != nil {
		return tasks.Task{}, fmt.Errorf("postgres: decode task %s: %w", t.ID, err)
	}
	return t, nil
}

// getTask reads one task row; ErrNotFound when there is none.
func getTask(ctx context.Context, tx rowQuerier, id string) (taskRow, error) {
	r, err := scanTask(tx.QueryRow(ctx, "SELECT "+taskColumns+" FROM tasks WHERE id = $1", id))
	if errors.Is(err, pgx.ErrNoRows) {
		return r, tasks.ErrNotFound
	}
	return r, err
}

// headerColumns are what a task's header is read as (scanHeader): a
// decision needs no more, and a transition rewrites no more.
const headerColumns = `id, context_id, owner_id, discussion_id, message_id, state, status_ms, created_ms`

func scanHeader(row pgx.Row) (tasks.Task, error) {
	var (
		t               tasks.Task
		state           string
		status, created int64
	)
	err := row.Scan(&t.ID, &t.ContextID, &t.OwnerID, &t.DiscussionID, &t.MessageID, &state, &status, &created)
	t.State, t.StatusTime, t.CreatedAt = a2a.TaskState(state), fromMS(status), fromMS(created)
	return t, err
}

func insertTask(ctx context.Context, w execer, t *tasks.Task) error {
	wire, err := tasks.EncodeWire(t)
	if err != nil {
		return fmt.Errorf("postgres: encode task %s: %w", t.ID, err)
	}
	_, err = w.Exec(ctx, "INSERT INTO tasks ("+taskColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
		t.ID, t.ContextID, t.OwnerID, t.DiscussionID, t.MessageID, string(t.State), t.StatusTime.UnixMilli(), t.CreatedAt.UnixMilli(),
		nz(wire.Head), nz(wire.Status), nz(wire.Artifacts), nz(wire.Metadata), nz(wire.History), wire.NHistory)
	return err
}

// moveTask writes the transition of old to moved (decision headers):
// the state, the status timestamp, and the two parts of the wire JSON a
// transition changes (the history is left as it is). artifacts, when not
// nil, carries the artifacts' JSON from one task to the next of one reply,
// which gives them all the same artifacts. acc takes the counter moves.
func moveTask(ctx context.Context, w execer, old, moved *tasks.Task, acc deltas, artifacts *[]byte) error {
	status, err := tasks.EncodeStatus(moved)
	if err != nil {
		return fmt.Errorf("postgres: encode task %s: %w", moved.ID, err)
	}
	var arts []byte
	switch {
	case len(moved.Artifacts) == 0:
	case artifacts != nil && *artifacts != nil:
		arts = *artifacts
	default:
		if arts, err = tasks.EncodeArtifacts(moved); err != nil {
			return fmt.Errorf("postgres: encode task %s: %w", moved.ID, err)
		}
		if artifacts != nil {
			*artifacts = arts
		}
	}
	if _, err := w.Exec(ctx, `UPDATE tasks SET state = $2, status_ms = $3, w_status = $4, w_artifacts = $5 WHERE id = $1`,
		moved.ID, string(moved.State), moved.StatusTime.UnixMilli(), status, nz(arts)); err != nil {
		return err
	}
	if old.State != moved.State {
		countTask(acc, old, -1)
		countTask(acc, moved, +1)
	}
	return nil
}

// nz makes a nil slice empty: the wire columns are NOT NULL.
func nz(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// Rate windows: the time of a ratelimit.Rate, kept per agent and kind,
// read for the decision under the agent's lock and moved on by the write
// it allowed.
const (
	windowAsk   = "a"
	windowReply = "r"
)

// loadWindow queues the read of agent's rate window of kind into dst
// (zero when the agent has none).
func loadWindow(b *pgx.Batch, kind, agent string, dst *time.Time) {
	b.Queue("SELECT tat_ns FROM rate_windows WHERE kind = $1 AND agent_id = $2", kind, agent).QueryRow(func(row pgx.Row) error {
		var ns int64
		err := row.Scan(&ns)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			*dst = time.Time{}
			return nil
		case err != nil:
			return err
		}
		*dst = time.Unix(0, ns).UTC()
		return nil
	})
}

// putWindow keeps next as agent's window of kind.
func putWindow(ctx context.Context, w execer, kind, agent string, next time.Time) error {
	_, err := w.Exec(ctx, `INSERT INTO rate_windows (kind, agent_id, tat_ns) VALUES ($1, $2, $3)
		ON CONFLICT (kind, agent_id) DO UPDATE SET tat_ns = excluded.tat_ns`, kind, agent, next.UnixNano())
	return err
}

// lockAgent queues the lock of agent id's row: taken first by every
// command that decides a per-agent limit (the ask rate, the open tasks,
// the reply rate), so that one agent's commands are decided one after
// the other, on every process.
func lockAgent(b *pgx.Batch, id string) {
	b.Queue("SELECT 1 FROM agents WHERE id = $1 FOR NO KEY UPDATE", id)
}

// CreateAsk implements tasks.Store, in two round trips: BEGIN and the
// loads under the owner's lock (its task of the message id, its ask
// window and open tasks, the joined discussion under a share lock), then
// asknet.DecideAsk, then the writes and COMMIT.
func (s *DB) CreateAsk(ctx context.Context, c tasks.CreateAsk) (tasks.AskResult, error) {
	var (
		st  asknet.AskState
		out asknet.AskOutcome
	)
	err := s.command(ctx, CmdAsk, func(b *pgx.Batch) {
		st = asknet.AskState{}
		owner := c.Task.OwnerID
		lockAgent(b, owner)
		b.Queue("SELECT "+taskColumns+" FROM tasks WHERE owner_id = $1 AND message_id = $2", owner, c.Task.MessageID).
			QueryRow(func(row pgx.Row) error {
				r, err := scanTask(row)
				if errors.Is(err, pgx.ErrNoRows) {
					return nil
				}
				if err != nil {
					return err
				}
				t, err := r.task()
				st.Retry = &t
				return err
			})
		loadWindow(b, windowAsk, owner, &st.Window)
		b.Queue("SELECT n FROM counters WHERE name = $1", openCounter(owner)).QueryRow(scanCounter(&st.Open))
		if c.JoinDiscussionID != "" {
			b.Queue("SELECT doc FROM discussions WHERE id = $1 FOR SHARE", c.JoinDiscussionID).QueryRow(scanDiscussion(&st.Join))
		}
	}, func() (func(execer) error, error) {
		var err error
		if out, err = asknet.DecideAsk(st, c, c.Task.CreatedAt); err != nil || out.Retry {
			return nil, err
		}
		return func(w execer) error { return persistAsk(ctx, w, &out) }, nil
	})
	if err != nil {
		return tasks.AskResult{}, err
	}
	res := tasks.AskResult{Task: out.Task, Created: !out.Retry, Window: st.Window}
	if out.Window != nil {
		res.Window = *out.Window
	}
	return res, nil
}

// persistAsk queues what DecideAsk decided.
func persistAsk(ctx context.Context, w execer, o *asknet.AskOutcome) error {
	t := &o.Task
	if o.Discussion != nil {
		if err := putDiscussion(ctx, w, o.Discussion, ""); err != nil {
			return err
		}
	}
	if err := insertTask(ctx, w, t); err != nil {
		return err
	}
	if o.Window != nil {
		if err := putWindow(ctx, w, windowAsk, t.OwnerID, *o.Window); err != nil {
			return err
		}
	}
	if o.Push != nil {
		if err := putPushConfig(ctx, w, o.Push); err != nil {
			return err
		}
	}
	acc := deltas{}
	countTask(acc, t, +1)
	if err := acc.apply(ctx, w); err != nil {
		return err
	}
	return appendEvents(ctx, w, o.Events, t.CreatedAt)
}

// GetTask implements tasks.Store: the owner is part of the query, so
// another owner's task is neither read nor decoded.
func (s *DB) GetTask(ctx context.Context, ownerID, id string) (tasks.Task, error) {
	var t tasks.Task
	err := s.readStatement(ctx, func(q rowQuerier) error {
		r, err := getOwnedTask(ctx, q, ownerID, id)
		if err != nil {
			return err
		}
		t, err = r.task()
		return err
	})
	return t, err
}

// getOwnedTask reads one task row if ownerID owns it (any owner when
// ownerID is ""); ErrNotFound otherwise, the same for another owner's
// task as for a missing one.
func getOwnedTask(ctx context.Context, tx rowQuerier, ownerID, id string) (taskRow, error) {
	if ownerID == "" {
		return getTask(ctx, tx, id)
	}
	r, err := scanTask(tx.QueryRow(ctx, "SELECT "+taskColumns+" FROM tasks WHERE id = $1 AND owner_id = $2", id, ownerID))
	if errors.Is(err, pgx.ErrNoRows) {
		return r, tasks.ErrNotFound
	}
	return r, err
}

// viewTask reads a snapshot of task $1 if $2 owns it (any owner when $2
// is empty).
var viewTask = "SELECT " + snapshotColumns(nil) + " FROM tasks WHERE id = $1 AND ($2 = '' OR owner_id = $2)"

// ViewSnapshot implements tasks.Store in one statement; fn sees the
// row as it came (scanSnapshot), while the read holds its connection.
// Another owner's task is read as an unknown one is: not at all.
func (s *DB) ViewSnapshot(ctx context.Context, ownerID, id string, fn func(*tasks.Snapshot) error) error {
	return s.readStatement(ctx, func(q rowQuerier) error {
		rows, err := q.Query(ctx, viewTask, id, ownerID)
		if err != nil {
			return err
		}
		defer rows.Close()
		if !rows.Next() {
			if err := rows.Err(); err != nil {
				return err
			}
			return tasks.ErrNotFound
		}
		snap, err := scanSnapshot(rows, 0)
		if err != nil {
			return err
		}
		if err := fn(&snap); err != nil {
			return err
		}
		rows.Close()
		return rows.Err()
	})
}

// TaskByMessageID implements tasks.Store.
func (s *DB) TaskByMessageID(ctx context.Context, ownerID, messageID string) (tasks.Task, error) {
	var t tasks.Task
	err := s.readStatement(ctx, func(q rowQuerier) error {
		r, err := scanTask(q.QueryRow(ctx, "SELECT "+taskColumns+" FROM tasks WHERE owner_id = $1 AND message_id = $2",
			ownerID, messageID))
		if errors.Is(err, pgx.ErrNoRows) {
			return tasks.ErrNotFound
		}
		if err != nil {
			return err
		}
		t, err = r.task()
		return err
	})
	return t, err
}

// CancelTask implements tasks.Store, in two round trips: BEGIN and the
// task under its row lock (a reply completing it at the same time waits
// for it, or it for the reply, and the second sees the first one's
// state) with its push configs, then tasks.DecideCancel, then the writes
// and COMMIT. The decision sees the header; the messages are decoded only
// for the answer, after it.
func (s *DB) CancelTask(ctx context.Context, ownerID, id string, at time.Time) (tasks.Task, bool, error) {
	var (
		row     *taskRow
		configs []push.Config
		out     tasks.CancelOutcome
		full    tasks.Task
	)
	err := s.command(ctx, CmdCancel, func(b *pgx.Batch) {
		row, configs = nil, nil
		// Another owner's task is loaded as an unknown one is (not at all,
		// and not locked), so that the answer's time does not tell whether
		// it exists; the decision still checks the owner.
		b.Queue("SELECT "+taskColumns+" FROM tasks WHERE id = $1 AND ($2 = '' OR owner_id = $2) FOR UPDATE",
			id, ownerID).QueryRow(func(r pgx.Row) error {
			tr, err := scanTask(r)
			if errors.Is(err, pgx.ErrNoRows) {
				return nil
			}
			row = &tr
			return err
		})
		b.Queue(`SELECT c.doc FROM push_configs c JOIN tasks t ON t.id = c.task_id
			WHERE c.task_id = $1 AND ($2 = '' OR t.owner_id = $2) ORDER BY c.id`, id, ownerID).Query(scanConfigs(&configs))
	}, func() (func(execer) error, error) {
		st := tasks.CancelState{Configs: configs}
		if row != nil {
			st.Task = &row.t
		}
		var err error
		if out, err = tasks.DecideCancel(st, ownerID, at); err != nil {
			return nil, err
		}
		if full, err = row.task(); err != nil {
			return nil, err
		}
		full = tasks.WithStatus(full, out.Task)
		if !out.Changed {
			return nil, nil
		}
		return func(w execer) error {
			acc := deltas{}
			if err := moveTask(ctx, w, &row.t, &out.Task, acc, nil); err != nil {
				return err
			}
			for i := range out.Deliveries {
				if err := putDelivery(ctx, w, nil, &out.Deliveries[i], acc); err != nil {
					return err
				}
			}
			if err := acc.apply(ctx, w); err != nil {
				return err
			}
			return appendEvents(ctx, w, out.Events, at)
		}, nil
	})
	if err != nil {
		return tasks.Task{}, false, err
	}
	return full, out.Changed, nil
}
