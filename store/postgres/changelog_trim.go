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

// TrimLog implements changelog.Trimmable, as the change log's policy
// decides (changelog.TrimBound, TrimStep, RecordDroppable,
// KeepRecordEvent):
//
//   - a walk of the log from where the last one stopped (log_trim's
//     floor), a batch of rows at a time, removing the rows the policy
//     drops and stopping where it says;
//   - then a walk of the record events up to that floor, each with
//     whether its record has a later one, removing those the policy drops.
//
// Stale cursors are deleted.
func (s *DB) TrimLog(ctx context.Context, before time.Time) (int, error) {
	before = before.Truncate(time.Millisecond) // the log keeps milliseconds
	bound, err := s.trimBound(ctx, before)
	if err != nil {
		return 0, fmt.Errorf("postgres: trim the log: %w", err)
	}
	removed := 0
	for {
		n, more, err := s.trimEvents(ctx, bound, before)
		removed += n
		if err != nil {
			return removed, fmt.Errorf("postgres: trim the log: %w", err)
		}
		if !more {
			break
		}
	}
	var after changelog.Position
	for {
		n, next, more, err := s.trimRecordEvents(ctx, bound, before, after)
		removed += n
		if err != nil {
			return removed, fmt.Errorf("postgres: trim the records feed: %w", err)
		}
		if !more {
			return removed, nil
		}
		after = next
	}
}

// trimBound reads the cursors and the newest readable event, asks the
// policy how far the trim may reach, and deletes the stale cursors.
func (s *DB) trimBound(ctx context.Context, horizon time.Time) (changelog.Bound, error) {
	cursors, err := s.ListCursors(ctx)
	if err != nil {
		return changelog.Bound{}, err
	}
	var newest changelog.Position
	var tx, seq int64
	err = s.pool.QueryRow(ctx, `SELECT tx, seq FROM change_log WHERE `+readable+` ORDER BY tx DESC, seq DESC LIMIT 1`).Scan(&tx, &seq)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return changelog.Bound{}, unavailable(err)
	default:
		newest = changelog.Position{Tx: uint64(tx), Seq: uint64(seq)}
	}
	bound, stale := changelog.TrimBound(cursors, newest, horizon)
	if len(stale) > 0 {
		if _, err := s.pool.Exec(ctx, "DELETE FROM log_cursors WHERE name = ANY($1)", stale); err != nil {
			return changelog.Bound{}, unavailable(err)
		}
	}
	return bound, nil
}

// trimEvents walks one batch of the log from the floor, removes the rows
// the policy drops, and moves the floor to where the walk stopped. more
// reports a walk that stopped at the batch's end.
func (s *DB) trimEvents(ctx context.Context, bound changelog.Bound, horizon time.Time) (removed int, more bool, err error) {
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var ftx, fseq int64
		if err := tx.QueryRow(ctx, "SELECT floor_tx, floor_seq FROM log_trim FOR UPDATE").Scan(&ftx, &fseq); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT tx, seq, kind, written_ms FROM change_log
			WHERE (tx, seq) > ($1, $2) ORDER BY tx, seq LIMIT $3`, ftx, fseq, trimBatch)
		if err != nil {
			return err
		}
		var dropTx, dropSeq []int64
		walkedTx, walkedSeq, n, stopped := ftx, fseq, 0, false
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
			stop, drop := changelog.TrimStep(changelog.Event{Pos: changelog.Position{Tx: uint64(t), Seq: uint64(q)},
				Kind: changelog.Kind(kind)}, fromMS(written), bound, horizon)
			if stop {
				stopped = true
				break
			}
			walkedTx, walkedSeq = t, q
			if drop {
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
		more = n == trimBatch && !stopped
		if len(dropTx) > 0 {
			tag, err := tx.Exec(ctx, `DELETE FROM change_log WHERE (tx, seq) IN (SELECT * FROM unnest($1::bigint[], $2::bigint[]))`,
				dropTx, dropSeq)
			if err != nil {
				return err
			}
			removed = int(tag.RowsAffected())
			if err := raiseTrimmed(ctx, tx, "trimmed", dropTx[len(dropTx)-1], dropSeq[len(dropSeq)-1]); err != nil {
				return err
			}
		}
		_, err = tx.Exec(ctx, "UPDATE log_trim SET floor_tx = $1, floor_seq = $2", walkedTx, walkedSeq)
		return err
	})
	if err != nil {
		return 0, false, unavailable(err)
	}
	return removed, more, nil
}

// raiseTrimmed moves log_trim's point name (trimmed, records) on to
// (tx, seq) unless it is there already.
func raiseTrimmed(ctx context.Context, tx pgx.Tx, name string, t, q int64) error {
	// name is one of two fixed column prefixes, never input.
	_, err := tx.Exec(ctx, `UPDATE log_trim SET `+name+`_tx = $1, `+name+`_seq = $2
		WHERE (`+name+`_tx, `+name+`_seq) < ($1, $2)`, t, q)
	return err
}

// trimRecordEvents walks one batch of the record events up to the floor
// and after after, each with whether its record has a later event,
// removes those the policy drops, and returns where the batch ended and
// whether there is more.
func (s *DB) trimRecordEvents(ctx context.Context, bound changelog.Bound, horizon time.Time, after changelog.Position) (removed int, next changelog.Position, more bool, err error) {
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		removed, more = 0, false
		var newest changelog.Position
		var nt, ns int64
		err := tx.QueryRow(ctx, "SELECT tx, seq FROM change_log WHERE "+recordKinds+" ORDER BY tx DESC, seq DESC LIMIT 1").Scan(&nt, &ns)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return nil
		case err != nil:
			return err
		}
		newest = changelog.Position{Tx: uint64(nt), Seq: uint64(ns)}
		rows, err := tx.Query(ctx, `SELECT c.tx, c.seq, c.kind, c.written_ms,
				EXISTS (SELECT 1 FROM change_log g WHERE g.`+recordKinds+` AND g.subject = c.subject AND (g.tx, g.seq) > (c.tx, c.seq))
			FROM change_log c, log_trim f
			WHERE c.`+recordKinds+` AND (c.tx, c.seq) <= (f.floor_tx, f.floor_seq) AND (c.tx, c.seq) > ($1, $2)
			ORDER BY c.tx, c.seq LIMIT $3`, int64(after.Tx), int64(after.Seq), trimBatch)
		if err != nil {
			return err
		}
		var dropTx, dropSeq []int64
		n := 0
		for rows.Next() {
			var (
				t, q, written int64
				kind          string
				superseded    bool
			)
			if err := rows.Scan(&t, &q, &kind, &written, &superseded); err != nil {
				rows.Close()
				return err
			}
			n++
			next = changelog.Position{Tx: uint64(t), Seq: uint64(q)}
			e := changelog.Event{Pos: next, Kind: changelog.Kind(kind)}
			if changelog.RecordDroppable(e.Kind, superseded) && !changelog.KeepRecordEvent(e, fromMS(written), newest, bound, horizon) {
				dropTx, dropSeq = append(dropTx, t), append(dropSeq, q)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		more = n == trimBatch
		if len(dropTx) == 0 {
			return nil
		}
		// Another process's trim may have removed some of them first: it
		// counts those.
		tag, err := tx.Exec(ctx, `DELETE FROM change_log WHERE (tx, seq) IN (SELECT * FROM unnest($1::bigint[], $2::bigint[]))`,
			dropTx, dropSeq)
		if err != nil {
			return err
		}
		removed = int(tag.RowsAffected())
		lt, ls := dropTx[len(dropTx)-1], dropSeq[len(dropSeq)-1]
		if err := raiseTrimmed(ctx, tx, "trimmed", lt, ls); err != nil {
			return err
		}
		return raiseTrimmed(ctx, tx, "records", lt, ls)
	})
	if err != nil {
		return 0, next, false, unavailable(err)
	}
	return removed, next, more, nil
}
