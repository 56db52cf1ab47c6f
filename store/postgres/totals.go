package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/discussions"
)

// Totals across owners. No row holds them: a row every write updated
// would make every write of every process wait on it. An owner's task
// totals are its counters (counters.go); the others are counted when asked:
//
//   - the public discussions total (ListDiscussions' totalSize) counts
//     exactly up to ExactCountLimit, and above that answers PostgreSQL's
//     estimate (the planner's row count, as fresh as the last ANALYZE),
//     so that a page costs at most ExactCountLimit index entries however
//     large the database grows;
//   - the operator's totals (the agent list, the task list across
//     owners, kfa stats) are counted exactly, on demand.

// ExactCountLimit is the largest public total counted exactly.
const ExactCountLimit = 10_000

// countDiscussions is the total of discussions with status ("": any).
func countDiscussions(ctx context.Context, tx pgx.Tx, status discussions.Status) (int, error) {
	where, args := " WHERE NOT hidden", []any{ExactCountLimit + 1}
	switch status {
	case "":
	case discussions.StatusOpen, discussions.StatusAnswered:
		where, args = " WHERE status = $2 AND NOT hidden", append(args, string(status))
	default:
		return 0, fmt.Errorf("postgres: no discussion status %q", status)
	}
	var n int
	if err := tx.QueryRow(ctx, "SELECT count(*) FROM (SELECT 1 FROM discussions"+where+" LIMIT $1) x", args...).Scan(&n); err != nil {
		return 0, err
	}
	if n <= ExactCountLimit {
		return n, nil
	}
	// The status is one of two constants, so it can be a literal: EXPLAIN
	// takes no parameters.
	literal := " WHERE NOT hidden"
	if status != "" {
		literal = " WHERE status = '" + string(status) + "' AND NOT hidden"
	}
	est, err := estimateRows(ctx, tx, "SELECT 1 FROM discussions"+literal)
	if err != nil {
		return 0, err
	}
	return max(est, n), nil
}

// estimateRows is the planner's estimate of the rows query returns.
func estimateRows(ctx context.Context, tx pgx.Tx, query string) (int, error) {
	var plan []byte
	if err := tx.QueryRow(ctx, "EXPLAIN (FORMAT JSON) "+query).Scan(&plan); err != nil {
		return 0, err
	}
	var p []struct {
		Plan struct {
			Rows float64 `json:"Plan Rows"`
		} `json:"Plan"`
	}
	if err := json.Unmarshal(plan, &p); err != nil || len(p) == 0 {
		return 0, fmt.Errorf("postgres: read the plan of %q: %v", query, err)
	}
	return int(p[0].Plan.Rows), nil
}

// countRows counts the rows of query (a SELECT) exactly: the operator's
// totals.
func countRows(ctx context.Context, tx pgx.Tx, query string, args ...any) (int, error) {
	var n int
	err := tx.QueryRow(ctx, "SELECT count(*) FROM ("+query+") x", args...).Scan(&n)
	return n, err
}
