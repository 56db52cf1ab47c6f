package postgres

import (
	"context"
	"time"

	"github.com/kfa-project/kfa/tasks"
)

// windowTime is a kept time as rate_windows holds it (Unix nanoseconds;
// nil when the agent has none).
func windowTime(ns *int64) time.Time {
	if ns == nil {
		return time.Time{}
	}
	return time.Unix(0, *ns).UTC()
}

// readWindow is agent's kept time of a limit of kind, zero when it has
// none, in one statement.
func (s *DB) readWindow(ctx context.Context, kind, agent string) (time.Time, error) {
	var ns *int64
	err := s.readRow(ctx, "SELECT (SELECT tat_ns FROM rate_windows WHERE kind = $1 AND agent_id = $2)", []any{kind, agent}, &ns)
	return windowTime(ns), err
}

// AskUsage implements tasks.Store: the ask window and the open-task
// counter that an ask's transaction checks, read in one statement (one
// snapshot).
func (s *DB) AskUsage(ctx context.Context, ownerID string) (tasks.AskUsage, error) {
	var (
		ns   *int64
		open int64
	)
	err := s.readRow(ctx, `SELECT (SELECT tat_ns FROM rate_windows WHERE kind = $1 AND agent_id = $2),
		COALESCE((SELECT n FROM counters WHERE name = $3), 0)`, []any{windowAsk, ownerID, openCounter(ownerID)}, &ns, &open)
	if err != nil {
		return tasks.AskUsage{}, err
	}
	return tasks.AskUsage{Window: windowTime(ns), Open: int(open)}, nil
}

// ReplyWindow implements discussions.Store in one statement.
func (s *DB) ReplyWindow(ctx context.Context, agentID string) (time.Time, error) {
	return s.readWindow(ctx, windowReply, agentID)
}
