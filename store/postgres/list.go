package postgres

import (
	"context"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/tasks"
)

// ListTasks implements tasks.Store: newest status first, ties by id
// descending, a keyset page on one of the tasks_* indexes. totalSize is
// the owner's counter; without an owner (the operator's listings) or with
// Since it is counted, on demand, from the matching index range.
func (s *DB) ListTasks(ctx context.Context, q tasks.ListQuery) (tasks.ListPage, error) {
	page := tasks.ListPage{Tasks: make([]tasks.Task, 0, min(q.PageSize, 64))}
	next, total, err := s.listTasks(ctx, q, func(r *taskRow) error {
		t, err := r.task()
		if err == nil {
			page.Tasks = append(page.Tasks, t)
		}
		return err
	})
	if err != nil {
		return tasks.ListPage{}, err
	}
	page.Next, page.Total = next, total
	return page, nil
}

// ViewSnapshots implements tasks.Store.
func (s *DB) ViewSnapshots(ctx context.Context, q tasks.ListQuery, fn func(*tasks.Snapshot) error) (*tasks.Cursor, int, error) {
	return s.listTasks(ctx, q, func(r *taskRow) error {
		snap := r.snapshot()
		return fn(&snap)
	})
}

// listTasks reads one page of q (in one snapshot with its total) and
// hands each task to emit, in order.
func (s *DB) listTasks(ctx context.Context, q tasks.ListQuery, emit func(*taskRow) error) (next *tasks.Cursor, total int, err error) {
	var (
		where []string
		args  []any
	)
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if q.OwnerID != "" {
		where = append(where, "owner_id = "+arg(q.OwnerID))
	}
	if q.State != "" {
		where = append(where, "state = "+arg(string(q.State)))
	}
	if q.ContextID != "" {
		where = append(where, "context_id = "+arg(q.ContextID))
	}
	since := q.SinceMillis()
	if since > 0 {
		where = append(where, "status_ms >= "+arg(since))
	}
	filter := ""
	if len(where) > 0 {
		filter = " WHERE " + strings.Join(where, " AND ")
	}
	countArgs := len(args)
	// An owner's totals are its counters; totals across owners (the
	// operator's listings) and those with Since are counted.
	useCounter := since == 0 && q.OwnerID != ""

	pageWhere := where
	if q.After != nil {
		pageWhere = append(pageWhere, "(status_ms, id) < ("+arg(q.After.StatusTime.UnixMilli())+", "+arg(q.After.ID)+")")
	}
	pageFilter := ""
	if len(pageWhere) > 0 {
		pageFilter = " WHERE " + strings.Join(pageWhere, " AND ")
	}
	limit := arg(q.PageSize + 1)

	err = s.read(ctx, func(tx pgx.Tx) error {
		if useCounter {
			var err error
			if total, err = readCounter(ctx, tx, listCounter(q)); err != nil {
				return err
			}
		} else if err := tx.QueryRow(ctx, "SELECT count(*) FROM tasks"+filter, args[:countArgs]...).Scan(&total); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, "SELECT "+taskColumns+" FROM tasks"+pageFilter+
			" ORDER BY status_ms DESC, id DESC LIMIT "+limit, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		n := 0
		var last tasks.Task
		for rows.Next() {
			r, err := scanTask(rows)
			if err != nil {
				return err
			}
			if n == q.PageSize {
				next = &tasks.Cursor{StatusTime: last.StatusTime, ID: last.ID}
				break
			}
			if err := emit(&r); err != nil {
				return err
			}
			last = r.t
			n++
		}
		rows.Close()
		return rows.Err()
	})
	if err != nil {
		return nil, 0, err
	}
	return next, total, nil
}

// listCounter names the owner's counter that holds the total of q
// (without Since).
func listCounter(q tasks.ListQuery) string {
	s, prefix := string(q.State), "t|o|"+q.OwnerID
	switch {
	case q.ContextID != "" && q.State != "":
		return prefix + "|s|" + s + "|c|" + q.ContextID
	case q.ContextID != "":
		return prefix + "|c|" + q.ContextID
	case q.State != "":
		return prefix + "|s|" + s
	}
	return prefix
}
