package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/changelog"
)

// trimBatch is how many log rows one trimming transaction reads or
// removes: a trim is many short transactions, never one long one (a
// long writing transaction would hold every log reader back, see
// readable).
const trimBatch = 5000

// TrimLog implements changelog.Trimmable, as the bbolt store does:
//
//   - a walk of the log from where the last one stopped (log_trim's
//     floor), a batch of rows at a time, removing the rows that are not
//     a record's, written before the horizon and behind every live
//     cursor, and stopping at the first row too new or not yet passed;
//   - then the record events up to that floor that a reader of the feed
//     starting over does not need (a record's entry with a later one, a
//     deletion), never the newest record event.
//
// The newest event of the log always stays. Cursors not updated since
// before are deleted.
func (s *DB) TrimLog(ctx context.Context, before time.Time) (int, error) {
	horizon := before.UnixMilli()
	bound, err := s.trimBound(ctx, horizon)
	if err != nil {
		return 0, fmt.Errorf("postgres: trim the log: %w", err)
	}
	removed := 0
	for {
		n, more, err := s.trimEvents(ctx, bound, horizon)
		removed += n
		if err != nil {
			return removed, fmt.Errorf("postgres: trim the log: %w", err)
		}
		if !more {
			break
		}
	}
	for {
		n, err := s.trimRecordEvents(ctx, horizon)
		removed += n
		if err != nil {
			return removed, fmt.Errorf("postgres: trim the records feed: %w", err)
		}
		if n < trimBatch {
			return removed, nil
		}
	}
}

// trimBound deletes the cursors not updated since horizon and returns
// the newest position trimming may remove: before every other cursor,
// and before the log's newest readable event.
func (s *DB) trimBound(ctx context.Context, horizon int64) (changelog.Position, error) {
	if _, err := s.pool.Exec(ctx, "DELETE FROM log_cursors WHERE updated_ms < $1", horizon); err != nil {
		return changelog.Position{}, unavailable(err)
	}
	var (
		tx, seq int64
		found   bool
	)
	err := s.pool.QueryRow(ctx, `WITH last AS (SELECT tx, seq FROM change_log WHERE `+readable+` ORDER BY tx DESC, seq DESC LIMIT 1),
		marks AS (SELECT tx, seq - 1 AS seq FROM last UNION ALL SELECT tx, seq FROM log_cursors)
		SELECT tx, seq FROM marks ORDER BY tx, seq LIMIT 1`).Scan(&tx, &seq)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return changelog.Position{}, unavailable(err)
	default:
		found = true
	}
	if !found || seq < 0 {
		return changelog.Position{}, nil
	}
	return changelog.Position{Tx: uint64(tx), Seq: uint64(seq)}, nil
}

// trimEvents walks one batch of the log from the floor, removes its
// rows that are not a record's, and moves the floor to where the walk
// stopped. more reports a walk that stopped at the batch's end.
func (s *DB) trimEvents(ctx context.Context, bound changelog.Position, horizon int64) (removed int, more bool, err error) {
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var ftx, fseq int64
		if err := tx.QueryRow(ctx, "SELECT floor_tx, floor_seq FROM log_trim FOR UPDATE").Scan(&ftx, &fseq); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT tx, seq, kind, written_ms FROM change_log
			WHERE (tx, seq) > ($1, $2) AND (tx, seq) <= ($3, $4) ORDER BY tx, seq LIMIT $5`,
			ftx, fseq, int64(bound.Tx), int64(bound.Seq), trimBatch)
		if err != nil {
			return err
		}
		var dropTx, dropSeq []int64
		walkedTx, walkedSeq, n, early := ftx, fseq, 0, false
		for rows.Next() {
			var (
				t, q, written int64
				kind          string
			)
			if err := rows.Scan(&t, &q, &kind, &written); err != nil {
				rows.Close()
				return err
			}
			n++
			if written >= horizon {
				early = true
				break
			}
			walkedTx, walkedSeq = t, q
			if !changelog.Kind(kind).IsRecord() {
				dropTx, dropSeq = append(dropTx, t), append(dropSeq, q)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if walkedTx == ftx && walkedSeq == fseq {
			return nil
		}
		more = n == trimBatch && !early
		if len(dropTx) > 0 {
			if _, err := tx.Exec(ctx, `DELETE FROM change_log WHERE (tx, seq) IN (SELECT * FROM unnest($1::bigint[], $2::bigint[]))`,
				dropTx, dropSeq); err != nil {
				return err
			}
			lt, ls := dropTx[len(dropTx)-1], dropSeq[len(dropSeq)-1]
			if _, err := tx.Exec(ctx, `UPDATE log_trim SET trimmed_tx = $1, trimmed_seq = $2
				WHERE (trimmed_tx, trimmed_seq) < ($1, $2)`, lt, ls); err != nil {
				return err
			}
		}
		removed = len(dropTx)
		_, err = tx.Exec(ctx, "UPDATE log_trim SET floor_tx = $1, floor_seq = $2", walkedTx, walkedSeq)
		return err
	})
	if err != nil {
		return 0, false, unavailable(err)
	}
	return removed, more, nil
}

// trimRecordEvents removes one batch of the record events up to the
// floor that a reader starting over does not need, and returns how many
// it removed.
func (s *DB) trimRecordEvents(ctx context.Context, horizon int64) (int, error) {
	n := 0
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var top struct{ tx, seq *int64 }
		err := tx.QueryRow(ctx, `WITH f AS (SELECT floor_tx AS tx, floor_seq AS seq FROM log_trim),
			newest AS (SELECT tx, seq FROM change_log WHERE `+recordKinds+` ORDER BY tx DESC, seq DESC LIMIT 1),
			gone AS (DELETE FROM change_log WHERE (tx, seq) IN (
				SELECT c.tx, c.seq FROM change_log c, f, newest
				WHERE c.`+recordKinds+` AND (c.tx, c.seq) <= (f.tx, f.seq) AND (c.tx, c.seq) < (newest.tx, newest.seq)
				  AND c.written_ms < $1
				  AND (c.kind = 'record.deleted' OR EXISTS (SELECT 1 FROM change_log g
				       WHERE g.`+recordKinds+` AND g.subject = c.subject AND (g.tx, g.seq) > (c.tx, c.seq)))
				ORDER BY c.tx, c.seq LIMIT $2)
			RETURNING tx, seq),
			last AS (SELECT tx, seq FROM gone ORDER BY tx DESC, seq DESC LIMIT 1)
			SELECT (SELECT count(*) FROM gone), last.tx, last.seq FROM (SELECT 1) one LEFT JOIN last ON true`,
			horizon, trimBatch).Scan(&n, &top.tx, &top.seq)
		if err != nil || top.tx == nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE log_trim SET
			trimmed_tx = CASE WHEN (trimmed_tx, trimmed_seq) < ($1, $2) THEN $1 ELSE trimmed_tx END,
			trimmed_seq = CASE WHEN (trimmed_tx, trimmed_seq) < ($1, $2) THEN $2 ELSE trimmed_seq END,
			records_tx = CASE WHEN (records_tx, records_seq) < ($1, $2) THEN $1 ELSE records_tx END,
			records_seq = CASE WHEN (records_tx, records_seq) < ($1, $2) THEN $2 ELSE records_seq END`, *top.tx, *top.seq)
		return err
	})
	if err != nil {
		return 0, unavailable(err)
	}
	return n, nil
}
