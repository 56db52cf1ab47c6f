package postgres

import (
	"context"
	"strconv"

	"github.com/kfa-project/kfa/tasks"
)

// The operator's listings across owners. Until schema 10 two indexes of
// every task (tasks_all, tasks_state) served them, and every ask wrote
// both for the operator alone. A page now merges the owners' own ranges:
// for each agent, the newest of its tasks after the cursor (an index
// scan of tasks_owner, or tasks_owner_state with a state), the newest of
// all those, then those tasks' rows: a probe per agent and a sort of at
// most pageSize+1 keys per agent, whatever the number of tasks. The total
// is the sum of the owners' counters, or (with Since) counted.

// listAcrossOwners reads one page of q over every owner (q.OwnerID and
// q.ContextID empty) in one statement, with its total, and hands each
// task to emit, in order.
func (s *DB) listAcrossOwners(ctx context.Context, q tasks.ListQuery, emit func(*taskRow) error) (next *tasks.Cursor, total int, err error) {
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	since := q.SinceMillis()
	filter := taskFilter(q, since, arg)
	totalExpr := acrossOwnersTotal(q, since, arg)
	cursor := ""
	if q.After != nil {
		cursor = " AND (status_ms, id) < (" + arg(q.After.StatusTime.UnixMilli()) + ", " + arg(q.After.ID) + ")"
	}
	limit := arg(q.PageSize + 1)
	page := "SELECT p.id FROM agents a CROSS JOIN LATERAL (SELECT status_ms, id FROM tasks WHERE owner_id = a.id" + filter + cursor +
		" ORDER BY status_ms DESC, id DESC LIMIT " + limit + ") p ORDER BY p.status_ms DESC, p.id DESC LIMIT " + limit
	sql := "SELECT " + totalExpr + ", " + taskColumns + " FROM tasks WHERE id IN (" + page + ") ORDER BY status_ms DESC, id DESC"

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
		// An empty page after a cursor carries no total: count it.
		var countArgs []any
		count := "SELECT " + acrossOwnersTotal(q, since, func(v any) string {
			countArgs = append(countArgs, v)
			return "$" + strconv.Itoa(len(countArgs))
		})
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

// taskFilter is the conditions of q's state and since (Unix ms, 0 for
// none) on tasks, each after an AND, their values bound through arg.
func taskFilter(q tasks.ListQuery, since int64, arg func(any) string) string {
	filter := ""
	if q.State != "" {
		filter += " AND state = " + arg(string(q.State))
	}
	if since > 0 {
		filter += " AND status_ms >= " + arg(since)
	}
	return filter
}

// acrossOwnersTotal is the expression of q's total across owners: the
// owners' counters summed (their names are t|o|owner, and
// t|o|owner|s|state), or with since, a count.
func acrossOwnersTotal(q tasks.ListQuery, since int64, arg func(any) string) string {
	switch {
	case since > 0:
		return "(SELECT count(*) FROM tasks WHERE true" + taskFilter(q, since, arg) + ")"
	case q.State != "":
		suffix := "|s|" + string(q.State)
		return "(SELECT COALESCE(sum(n), 0) FROM counters WHERE name LIKE '" + ownerCounterPrefix + "%' AND right(name, " +
			strconv.Itoa(len(suffix)) + ") = " + arg(suffix) + ")"
	}
	return "(SELECT COALESCE(sum(n), 0) FROM counters WHERE name LIKE '" + ownerCounterPrefix + "%' AND position('|' IN substr(name, 5)) = 0)"
}
