package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/a2a"
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

// putWindow keeps next as agent's window of kind.
func putWindow(ctx context.Context, w execer, kind, agent string, next time.Time) error {
	_, err := w.Exec(ctx, `INSERT INTO rate_windows (kind, agent_id, tat_ns) VALUES ($1, $2, $3)
		ON CONFLICT (kind, agent_id) DO UPDATE SET tat_ns = excluded.tat_ns`, kind, agent, next.UnixNano())
	return err
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
