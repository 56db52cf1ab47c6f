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

	// One statement reads the page and its total in one snapshot, in one
	// round trip: the total rides on every row. A transaction around two
	// statements (BEGIN, the count, the page, COMMIT) cost four.
	totalExpr := "(SELECT count(*) FROM tasks" + filter + ")"
	if useCounter {
		totalExpr = "COALESCE((SELECT n FROM counters WHERE name = " + arg(listCounter(q)) + "), 0)"
	}
	sql := "SELECT " + totalExpr + ", " + taskColumns + " FROM tasks" + pageFilter +
		" ORDER BY status_ms DESC, id DESC LIMIT " + limit
	rowsSeen := 0
	err = s.readStatement(ctx, func(c rowQuerier) error {
		rows, err := c.Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		var (
			last tasks.Task
			n64  int64
		)
		withTotal := totalRow{Rows: rows, total: &n64}
		for rows.Next() {
			rowsSeen++
			r, err := scanTask(withTotal)
			if err != nil {
				return err
			}
			total = int(n64)
			if rowsSeen > q.PageSize {
				next = &tasks.Cursor{StatusTime: last.StatusTime, ID: last.ID}
				break
			}
			if err := emit(&r); err != nil {
				return err
			}
			last = r.t
		}
		rows.Close()
		return rows.Err()
	})
	if err != nil {
		return nil, 0, err
	}
	if rowsSeen == 0 && q.After != nil {
		// An empty page after a cursor carries no total: count it (the
		// first page's emptiness means a total of 0).
		count, countArgs := "SELECT count(*) FROM tasks"+filter, args[:countArgs:countArgs]
		if useCounter {
			count, countArgs = "SELECT COALESCE((SELECT n FROM counters WHERE name = $1), 0)", []any{listCounter(q)}
		}
		err = s.readStatement(ctx, func(c rowQuerier) error {
			var n int64
			err := c.QueryRow(ctx, count, countArgs...).Scan(&n)
			total = int(n)
			return err
		})
		if err != nil {
			return nil, 0, err
		}
	}
	return next, total, nil
}

// totalRow scans a row whose first column is the listing's total into
// total, and the rest as a task row.
type totalRow struct {
	pgx.Rows
	total *int64
}

func (r totalRow) Scan(dest ...any) error { return r.Rows.Scan(append([]any{r.total}, dest...)...) }

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
