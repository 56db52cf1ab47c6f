package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/changelog"
)

// Stats are the database's counts, counted on demand in one snapshot
// (the operator's totals have no counter rows: see totals.go).
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
	// SizeBytes is the database's size on disk (pg_database_size), every
	// table and index of it, kfa's or not.
	SizeBytes int64
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
		// The operator's totals are counted on demand (totals.go): no row
		// holds them. The records counter is the records' own.
		for _, c := range []struct {
			query string
			dst   *int
		}{
			{"SELECT count(*) FROM tasks", &st.Tasks},
			{"SELECT count(*) FROM discussions", &st.Discussions},
			{"SELECT count(*) FROM discussions WHERE status = 'open'", &st.Open},
			{"SELECT count(*) FROM discussions WHERE status = 'answered'", &st.Answered},
			{"SELECT count(*) FROM agents", &st.Agents},
		} {
			if err := tx.QueryRow(ctx, c.query).Scan(c.dst); err != nil {
				return err
			}
		}
		var err error
		if st.Records, err = readCounter(ctx, tx, counterRecords); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, "SELECT state, count(*) FROM tasks GROUP BY state")
		if err != nil {
			return err
		}
		for rows.Next() {
			var (
				state string
				n     int
			)
			if err := rows.Scan(&state, &n); err != nil {
				rows.Close()
				return err
			}
			st.TasksByState[a2a.TaskState(state)] = n
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, "SELECT pg_database_size(current_database())").Scan(&st.SizeBytes); err != nil {
			return err
		}
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
