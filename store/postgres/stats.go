package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/discussions"
)

// Stats are the database's counts, read from the counters in one
// snapshot.
type Stats struct {
	SchemaVersion int
	Tasks         int
	TasksByState  map[a2a.TaskState]int
	Discussions   int
	Open          int
	Answered      int
	Agents        int
	Records       int
	LogPosition   changelog.Position // the change log's newest (zero: none yet)
	// OldestWaiting is the longest waiting WORKING task; nil when none
	// waits.
	OldestWaiting *WaitingTask
}

// WaitingTask is a WORKING task and how long it has waited.
type WaitingTask struct {
	ID, OwnerID string
	Since       int64 // Unix ms of its status timestamp
}

// Stats reads the counts.
func (s *DB) Stats(ctx context.Context) (Stats, error) {
	st := Stats{TasksByState: map[a2a.TaskState]int{}}
	err := s.read(ctx, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM kfa_schema_migrations").Scan(&st.SchemaVersion); err != nil {
			return err
		}
		for _, c := range []struct {
			name string
			dst  *int
		}{
			{"t", &st.Tasks}, {counterDiscussions, &st.Discussions}, {discCounter(discussions.StatusOpen), &st.Open},
			{discCounter(discussions.StatusAnswered), &st.Answered}, {counterAgents, &st.Agents}, {counterRecords, &st.Records},
		} {
			n, err := readCounter(ctx, tx, c.name)
			if err != nil {
				return err
			}
			*c.dst = n
		}
		for _, state := range []a2a.TaskState{a2a.TaskStateWorking, a2a.TaskStateCompleted, a2a.TaskStateCanceled} {
			n, err := readCounter(ctx, tx, "t|s|"+string(state))
			if err != nil {
				return err
			}
			st.TasksByState[state] = n
		}
		var err error
		if st.LogPosition, err = logPosition(ctx, tx, "SELECT tx, seq FROM change_log WHERE "+readable+
			" ORDER BY tx DESC, seq DESC LIMIT 1"); err != nil {
			return err
		}
		var w WaitingTask
		err = tx.QueryRow(ctx, `SELECT id, owner_id, status_ms FROM tasks WHERE state = $1
			ORDER BY status_ms, id LIMIT 1`, string(a2a.TaskStateWorking)).Scan(&w.ID, &w.OwnerID, &w.Since)
		if err == nil {
			st.OldestWaiting = &w
		} else if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		return nil
	})
	return st, err
}
