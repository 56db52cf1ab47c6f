package postgres

import (
	"context"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/changelog"
)

// Stats are the database's counts, read in one snapshot (see totals.go
// for which are counted on demand).
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

// statsRead is Stats' one statement. The task and agent totals are
// counted (the operator's: no row holds them); the discussion totals
// are discussion_totals' (the discussions readers see, as on bbolt);
// the records total is the records' counter.
const statsRead = `SELECT (SELECT coalesce(max(version), 0) FROM kfa_schema_migrations),
	(SELECT count(*) FROM tasks),
	(SELECT json_object_agg(state, n) FROM (SELECT state, count(*) AS n FROM tasks GROUP BY state) s),
	(SELECT COALESCE(sum(n), 0)::bigint FROM discussion_totals),
	(SELECT COALESCE(sum(n), 0)::bigint FROM discussion_totals WHERE status = 'open'),
	(SELECT COALESCE(sum(n), 0)::bigint FROM discussion_totals WHERE status = 'answered'),
	(SELECT count(*) FROM agents),
	COALESCE((SELECT n FROM counters WHERE name = $1), 0),
	pg_database_size(current_database()),
	l.tx, l.seq, w.id, w.owner_id, w.status_ms
	FROM (SELECT) one
	LEFT JOIN LATERAL (SELECT tx, seq FROM change_log WHERE ` + readable + ` ORDER BY tx DESC, seq DESC LIMIT 1) l ON true
	LEFT JOIN LATERAL (SELECT id, owner_id, status_ms FROM tasks WHERE state = $2 ORDER BY status_ms, id LIMIT 1) w ON true`

// Stats reads the counts, in one statement (one snapshot).
func (s *DB) Stats(ctx context.Context) (Stats, error) {
	var (
		st                                       Stats
		byState                                  map[string]int
		tasks, disc, open, answered, agents, rec int64
		logTx, logSeq, since                     *int64
		waitID, waitOwner                        *string
	)
	err := s.readRow(ctx, statsRead, []any{counterRecords, string(a2a.TaskStateWorking)}, &st.SchemaVersion, &tasks, &byState,
		&disc, &open, &answered, &agents, &rec, &st.SizeBytes, &logTx, &logSeq, &waitID, &waitOwner, &since)
	if err != nil {
		return Stats{}, err
	}
	st.Tasks, st.Discussions, st.Open, st.Answered, st.Agents, st.Records = int(tasks), int(disc), int(open), int(answered), int(agents), int(rec)
	st.TasksByState = make(map[a2a.TaskState]int, len(byState))
	for k, n := range byState {
		st.TasksByState[a2a.TaskState(k)] = n
	}
	if logTx != nil {
		st.LogPosition = changelog.Position{Tx: uint64(*logTx), Seq: uint64(*logSeq)}
	}
	if waitID != nil {
		st.OldestWaiting = &WaitingTask{ID: *waitID, OwnerID: *waitOwner, Since: *since}
	}
	return st, nil
}
