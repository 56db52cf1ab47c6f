package postgres

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/tasks"
)

// ListTasks implements tasks.Store: newest status first, ties by id
// descending, a keyset page on one of the tasks_* indexes. totalSize is
// the owner's counter; without an owner (the operator's listings) or with
// Since it is counted, on demand, from the matching index range.
func (s *DB) ListTasks(ctx context.Context, q tasks.ListQuery) (tasks.ListPage, error) {
	page := tasks.ListPage{Tasks: make([]tasks.Task, 0, min(q.PageSize, 64))}
	var n int64
	next, total, err := s.listTasks(ctx, q, taskColumns, func(rows pgx.Rows) ([]byte, time.Time, error) {
		r, err := scanTask(totalRow{Rows: rows, total: &n})
		if err != nil {
			return nil, time.Time{}, err
		}
		t, err := r.task()
		if err != nil {
			return nil, time.Time{}, err
		}
		page.Tasks = append(page.Tasks, t)
		return []byte(t.ID), t.StatusTime, nil
	})
	if err != nil {
		return tasks.ListPage{}, err
	}
	page.Next, page.Total = next, total
	return page, nil
}

// ViewSnapshots implements tasks.Store: ListTasks' page, each task read
// as a snapshot of the columns q.Show shows (scanSnapshot).
func (s *DB) ViewSnapshots(ctx context.Context, q tasks.ListQuery, fn func(*tasks.Snapshot) error) (*tasks.Cursor, int, error) {
	return s.listTasks(ctx, q, snapshotColumns(q.Show), func(rows pgx.Rows) ([]byte, time.Time, error) {
		snap, err := scanSnapshot(rows, 1)
		if err != nil {
			return nil, time.Time{}, err
		}
		return snap.ID, snap.StatusTime, fn(&snap)
	})
}

// listTasks reads one page of q with its total, in one statement: cols
// are the task columns to read, and emit reads each row of the page, in
// order (its first column is the total), and returns its id and status
// time, the cursor after it.
func (s *DB) listTasks(ctx context.Context, q tasks.ListQuery, cols string,
	emit func(rows pgx.Rows) ([]byte, time.Time, error)) (next *tasks.Cursor, total int, err error) {
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
	// round trip, even when the page is empty (a page after a cursor
	// whose tasks have moved): the total is the left side of a join that
	// keeps it without any task. A transaction around two statements
	// (BEGIN, the count, the page, COMMIT) cost four. The page comes out
	// in its own order: a join ON true can only be a nested loop, whose
	// one outer row (the total) is followed by the page's rows as its
	// ORDER BY and LIMIT give them (an ORDER BY around the join would
	// sort them again, a third of the statement's time).
	totalExpr := "SELECT count(*) FROM tasks" + filter
	if useCounter {
		totalExpr = "SELECT COALESCE((SELECT n FROM counters WHERE name = " + arg(listCounter(q)) + "), 0)"
	}
	sql := "SELECT t.n, p.* FROM (" + totalExpr + ") t(n) LEFT JOIN LATERAL (SELECT " + cols +
		" FROM tasks" + pageFilter + " ORDER BY status_ms DESC, id DESC LIMIT " + limit + ") p ON true"
	err = s.readStatement(ctx, func(c rowQuerier) error {
		rows, err := c.Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		var (
			lastID []byte // a copy: a row's bytes are its own until the next
			lastAt time.Time
		)
		for rowsSeen := 0; rows.Next(); {
			raw := rows.RawValues()
			n, err := rawInt(rows.FieldDescriptions()[0], raw[0])
			if err != nil {
				return err
			}
			total = int(n)
			if raw[1] == nil {
				break // no task: the total alone
			}
			if rowsSeen++; rowsSeen > q.PageSize {
				next = &tasks.Cursor{StatusTime: lastAt, ID: string(lastID)}
				break
			}
			id, at, err := emit(rows)
			if err != nil {
				return err
			}
			lastID, lastAt = append(lastID[:0], id...), at
		}
		rows.Close()
		return rows.Err()
	})
	if err != nil {
		return nil, 0, err
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
