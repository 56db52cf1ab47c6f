package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/ratelimit"
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

func (r *taskRow) snapshot() tasks.Snapshot {
	return tasks.Snapshot{ID: []byte(r.t.ID), OwnerID: []byte(r.t.OwnerID), State: r.t.State, StatusTime: r.t.StatusTime, Wire: r.wire}
}

// getTask reads one task row; lock adds FOR UPDATE. ErrNotFound when
// there is none.
func getTask(ctx context.Context, tx pgx.Tx, id string, lock bool) (taskRow, error) {
	q := "SELECT " + taskColumns + " FROM tasks WHERE id = $1"
	if lock {
		q += " FOR UPDATE"
	}
	r, err := scanTask(tx.QueryRow(ctx, q, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return r, tasks.ErrNotFound
	}
	return r, err
}

func insertTask(ctx context.Context, tx pgx.Tx, t *tasks.Task) error {
	w, err := tasks.EncodeWire(t)
	if err != nil {
		return fmt.Errorf("postgres: encode task %s: %w", t.ID, err)
	}
	_, err = tx.Exec(ctx, "INSERT INTO tasks ("+taskColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
		t.ID, t.ContextID, t.OwnerID, t.DiscussionID, t.MessageID, string(t.State), t.StatusTime.UnixMilli(), t.CreatedAt.UnixMilli(),
		nz(w.Head), nz(w.Status), nz(w.Artifacts), nz(w.Metadata), nz(w.History), w.NHistory)
	return err
}

// updateTask writes the transition of old to t, and its counter moves.
func updateTask(ctx context.Context, tx pgx.Tx, old, t *tasks.Task, acc deltas) error {
	w, err := tasks.EncodeWire(t)
	if err != nil {
		return fmt.Errorf("postgres: encode task %s: %w", t.ID, err)
	}
	_, err = tx.Exec(ctx, `UPDATE tasks SET state = $2, status_ms = $3, w_head = $4, w_status = $5, w_artifacts = $6,
		w_metadata = $7, w_history = $8, w_nhistory = $9 WHERE id = $1`,
		t.ID, string(t.State), t.StatusTime.UnixMilli(), nz(w.Head), nz(w.Status), nz(w.Artifacts), nz(w.Metadata), nz(w.History), w.NHistory)
	if err != nil {
		return err
	}
	if old.State != t.State {
		countTask(acc, old, -1)
		countTask(acc, t, +1)
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

// Task counters, one per list shape: the variable part (a context id) is
// always last, so no two names collide.
func taskCounters(owner, ctxID string, state a2a.TaskState) []string {
	s := string(state)
	return []string{
		"t", "t|s|" + s, "t|c|" + ctxID,
		"t|o|" + owner, "t|o|" + owner + "|s|" + s, "t|o|" + owner + "|c|" + ctxID,
		"t|o|" + owner + "|s|" + s + "|c|" + ctxID,
	}
}

func countTask(acc deltas, t *tasks.Task, n int64) {
	for _, k := range taskCounters(t.OwnerID, t.ContextID, t.State) {
		acc.add(k, n)
	}
}

// Rate windows: the time of a ratelimit.Rate, kept per agent and kind,
// moved on by the write it allowed.
const (
	windowAsk   = "a"
	windowReply = "r"
)

// takeWindow applies rate to agent's window of kind at now, under a row
// lock, and stores the moved window; refused, it returns
// *ratelimit.Exceeded and the caller's transaction rolls back.
func takeWindow(ctx context.Context, tx pgx.Tx, kind, agent string, rate ratelimit.Rate, now time.Time) error {
	if !rate.Enabled() {
		return nil
	}
	var tat time.Time
	var ns int64
	err := tx.QueryRow(ctx, "SELECT tat_ns FROM rate_windows WHERE kind = $1 AND agent_id = $2 FOR UPDATE", kind, agent).Scan(&ns)
	switch {
	case err == nil:
		tat = time.Unix(0, ns).UTC()
	case !errors.Is(err, pgx.ErrNoRows):
		return err
	}
	next, wait, ok := rate.Take(tat, now)
	if !ok {
		return &ratelimit.Exceeded{RetryAfter: wait}
	}
	// A first window inserted by two transactions at once: the loser
	// fails on the key and runs again, then finds the winner's row.
	_, err = tx.Exec(ctx, `INSERT INTO rate_windows (kind, agent_id, tat_ns) VALUES ($1, $2, $3)
		ON CONFLICT (kind, agent_id) DO UPDATE SET tat_ns = excluded.tat_ns`, kind, agent, next.UnixNano())
	return err
}

// CreateAsk implements tasks.Store. The owner's agent row is locked first:
// the message id, the ask window and the open-task bound are the owner's,
// so two asks of one owner are decided one after the other.
func (s *DB) CreateAsk(ctx context.Context, c tasks.CreateAsk) (tasks.Task, bool, error) {
	var (
		out     tasks.Task
		created bool
	)
	err := s.write(ctx, func(tx pgx.Tx) error {
		created = false
		if _, err := tx.Exec(ctx, "SELECT 1 FROM agents WHERE id = $1 FOR UPDATE", c.Task.OwnerID); err != nil {
			return err
		}
		r, err := scanTask(tx.QueryRow(ctx, "SELECT "+taskColumns+" FROM tasks WHERE owner_id = $1 AND message_id = $2",
			c.Task.OwnerID, c.Task.MessageID))
		if err == nil {
			out, err = r.task() // an idempotent retry: the first task, unchanged
			return err
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if err := takeWindow(ctx, tx, windowAsk, c.Task.OwnerID, c.AskRate, c.Task.CreatedAt); err != nil {
			return err
		}
		acc := deltas{}
		if c.JoinDiscussionID != "" {
			var status string
			err := tx.QueryRow(ctx, "SELECT status FROM discussions WHERE id = $1 FOR SHARE", c.JoinDiscussionID).Scan(&status)
			if errors.Is(err, pgx.ErrNoRows) {
				return discussions.ErrNotFound
			}
			if err != nil {
				return err
			}
			if discussions.Status(status) != discussions.StatusOpen {
				return discussions.ErrAnswered
			}
		}
		if c.MaxOpen > 0 {
			open, err := readCounter(ctx, tx, taskCounters(c.Task.OwnerID, "", a2a.TaskStateWorking)[4])
			if err != nil {
				return err
			}
			if open >= c.MaxOpen {
				return tasks.ErrTooManyOpen
			}
		}
		if c.JoinDiscussionID == "" {
			if err := putDiscussion(ctx, tx, &c.Discussion, "", acc); err != nil {
				return err
			}
		}
		t := c.Task
		if err := insertTask(ctx, tx, &t); err != nil {
			return err
		}
		countTask(acc, &t, +1)
		if c.Push != nil {
			if err := putPushConfig(ctx, tx, c.Push); err != nil {
				return err
			}
		}
		evs := []changelog.Event{{Kind: changelog.TaskCreated, ID: t.ID, Owner: t.OwnerID, Ref: t.DiscussionID, At: t.CreatedAt}}
		if c.JoinDiscussionID == "" {
			evs = append(evs, changelog.Event{Kind: changelog.DiscussionOpened, ID: c.Discussion.ID, Owner: c.Discussion.AuthorID,
				At: c.Discussion.CreatedAt})
		}
		if err := appendEvents(ctx, tx, evs, t.CreatedAt); err != nil {
			return err
		}
		out, created = t, true
		return acc.apply(ctx, tx)
	})
	if err != nil {
		return tasks.Task{}, false, err
	}
	return out, created, nil
}

// GetTask implements tasks.Store.
func (s *DB) GetTask(ctx context.Context, id string) (tasks.Task, error) {
	var t tasks.Task
	err := s.read(ctx, func(tx pgx.Tx) error {
		r, err := getTask(ctx, tx, id, false)
		if err != nil {
			return err
		}
		t, err = r.task()
		return err
	})
	return t, err
}

// ViewSnapshot implements tasks.Store.
func (s *DB) ViewSnapshot(ctx context.Context, id string, fn func(*tasks.Snapshot) error) error {
	var r taskRow
	err := s.read(ctx, func(tx pgx.Tx) error {
		var err error
		r, err = getTask(ctx, tx, id, false)
		return err
	})
	if err != nil {
		return err
	}
	snap := r.snapshot()
	return fn(&snap)
}

// TaskByMessageID implements tasks.Store.
func (s *DB) TaskByMessageID(ctx context.Context, ownerID, messageID string) (tasks.Task, error) {
	var t tasks.Task
	err := s.read(ctx, func(tx pgx.Tx) error {
		r, err := scanTask(tx.QueryRow(ctx, "SELECT "+taskColumns+" FROM tasks WHERE owner_id = $1 AND message_id = $2",
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

// CancelTask implements tasks.Store, under the task's row lock: a reply
// completing the task at the same time waits for it, or it for the reply,
// and the second one sees the first one's state.
func (s *DB) CancelTask(ctx context.Context, ownerID, id string, at time.Time) (tasks.Task, bool, error) {
	var (
		out     tasks.Task
		changed bool
	)
	err := s.write(ctx, func(tx pgx.Tx) error {
		r, err := getTask(ctx, tx, id, true)
		if err != nil {
			return err
		}
		if ownerID != "" && r.t.OwnerID != ownerID {
			return tasks.ErrNotFound
		}
		t, err := r.task()
		if err != nil {
			return err
		}
		old := t
		if changed, err = t.Cancel(at); err != nil {
			return err
		}
		out = t
		if !changed {
			return nil
		}
		acc := deltas{}
		if err := updateTask(ctx, tx, &old, &t, acc); err != nil {
			return err
		}
		due, err := enqueuePush(ctx, tx, &t, acc)
		if err != nil {
			return err
		}
		if err := appendEvents(ctx, tx, append([]changelog.Event{taskMoved(&t)}, due...), at); err != nil {
			return err
		}
		return acc.apply(ctx, tx)
	})
	if err != nil {
		return tasks.Task{}, false, err
	}
	return out, changed, nil
}
