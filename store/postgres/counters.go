package postgres

import (
	"context"
	"errors"
	"sort"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/tasks"
)

// Counters. Only per-owner counters remain (the totals of an owner's task
// listings, and its open tasks): each is written by its owner's commands
// and by the replies and cancels that move its tasks, never by every
// write. Totals across owners are counted on demand (totals.go). The
// records and pending-delivery counters are the records' and the
// outbox's.

// deltas collects counter changes to apply once, at the end of a
// transaction.
type deltas map[string]int64

func (d deltas) add(name string, n int64) { d[name] += n }

// apply writes the changes in one statement, in name order, so that two
// transactions lock counter rows in the same order.
func (d deltas) apply(ctx context.Context, w execer) error {
	names := make([]string, 0, len(d))
	for k, n := range d {
		if n != 0 {
			names = append(names, k)
		}
	}
	if len(names) == 0 {
		return nil
	}
	sort.Strings(names)
	ns := make([]int64, len(names))
	for i, k := range names {
		ns[i] = d[k]
	}
	_, err := w.Exec(ctx, `INSERT INTO counters (name, n)
		SELECT name, n FROM unnest($1::text[], $2::bigint[]) WITH ORDINALITY AS c(name, n, i) ORDER BY i
		ON CONFLICT (name) DO UPDATE SET n = counters.n + excluded.n`, names, ns)
	return err
}

// scanCounter is the callback of a batched counter read into dst.
func scanCounter(dst *int) func(pgx.Row) error {
	return func(row pgx.Row) error {
		var n int64
		err := row.Scan(&n)
		if errors.Is(err, pgx.ErrNoRows) {
			*dst = 0
			return nil
		}
		*dst = int(n)
		return err
	}
}

// ownerCounters are the counters of owner's tasks in state and context
// ctxID, one per listing shape: the variable part (a context id) is
// always last, so no two names collide.
func ownerCounters(owner, ctxID string, state a2a.TaskState) []string {
	s := string(state)
	return []string{
		"t|o|" + owner, "t|o|" + owner + "|s|" + s, "t|o|" + owner + "|c|" + ctxID,
		"t|o|" + owner + "|s|" + s + "|c|" + ctxID,
	}
}

// openCounter counts owner's WORKING tasks: the open-task bound.
func openCounter(owner string) string { return ownerCounters(owner, "", a2a.TaskStateWorking)[1] }

// countTask adds t's counters, n times.
func countTask(acc deltas, t *tasks.Task, n int64) {
	for _, k := range ownerCounters(t.OwnerID, t.ContextID, t.State) {
		acc.add(k, n)
	}
}
