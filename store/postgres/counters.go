package postgres

import (
	"context"
	"errors"
	"sort"

	"github.com/jackc/pgx/v5"
)

// deltas collects counter changes to apply once, at the end of a
// transaction.
type deltas map[string]int64

func (d deltas) add(name string, n int64) { d[name] += n }

// apply writes the changes in name order, so that two transactions lock
// counter rows in the same order.
func (d deltas) apply(ctx context.Context, tx pgx.Tx) error {
	names := make([]string, 0, len(d))
	for k, n := range d {
		if n != 0 {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	for _, k := range names {
		if _, err := tx.Exec(ctx, `INSERT INTO counters (name, n) VALUES ($1, $2)
			ON CONFLICT (name) DO UPDATE SET n = counters.n + excluded.n`, k, d[k]); err != nil {
			return err
		}
	}
	return nil
}

// readCounter reads one counter (0 when it never moved).
func readCounter(ctx context.Context, q pgx.Tx, name string) (int, error) {
	var n int64
	err := q.QueryRow(ctx, "SELECT n FROM counters WHERE name = $1", name).Scan(&n)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	return int(n), err
}
