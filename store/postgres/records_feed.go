package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/knowledge"
)

// The records' change feed is the change log's record events, read
// through the partial index change_log_records: a page costs the same
// whatever else the log holds, and no row is locked by record writes.

// Changes implements knowledge.Store: each upsert with its record as it
// is now, read in the same statement.
func (s *DB) Changes(ctx context.Context, after changelog.Position, limit int) ([]knowledge.Change, error) {
	rows, err := s.pool.Query(ctx, `SELECT c.tx, c.seq, c.kind, c.subject, c.at_ms, r.doc
		FROM change_log c LEFT JOIN records r ON c.kind = 'record.upserted' AND r.id = c.subject
		WHERE c.`+recordKinds+` AND (c.tx, c.seq) > ($1, $2)
		  AND (c.tx, c.seq) < (pg_snapshot_xmin(pg_current_snapshot())::text::bigint, 0)
		ORDER BY c.tx, c.seq LIMIT $3`, int64(after.Tx), int64(after.Seq), limit)
	if err != nil {
		return nil, unavailable(fmt.Errorf("postgres: read the records' changes: %w", err))
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (knowledge.Change, error) {
		var (
			tx, seq, at int64
			kind, id    string
			doc         []byte
		)
		if err := row.Scan(&tx, &seq, &kind, &id, &at, &doc); err != nil {
			return knowledge.Change{}, err
		}
		ch := knowledge.Change{Pos: changelog.Position{Tx: uint64(tx), Seq: uint64(seq)}, ID: id, Op: knowledge.OpDelete, At: fromMS(at)}
		if changelog.Kind(kind) == changelog.RecordUpserted {
			ch.Op = knowledge.OpUpsert
			if doc != nil {
				r, err := decodeRecord(doc)
				if err != nil {
					return ch, err
				}
				ch.Record = &r
			}
		}
		return ch, nil
	})
	if err != nil {
		return nil, unavailable(fmt.Errorf("postgres: read the records' changes: %w", err))
	}
	return out, nil
}

// Feed implements knowledge.Store.
func (s *DB) Feed(ctx context.Context) (knowledge.FeedState, error) {
	var st knowledge.FeedState
	err := s.read(ctx, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, "SELECT value FROM kfa_meta WHERE key = 'feed_epoch'").Scan(&st.Epoch); err != nil {
			return err
		}
		var err error
		if st.First, err = logPosition(ctx, tx, "SELECT tx, seq FROM change_log WHERE "+recordKinds+" ORDER BY tx, seq LIMIT 1"); err != nil {
			return err
		}
		if st.Last, err = logPosition(ctx, tx, "SELECT tx, seq FROM change_log WHERE "+recordKinds+" AND "+readable+
			" ORDER BY tx DESC, seq DESC LIMIT 1"); err != nil {
			return err
		}
		st.Trimmed, err = logPosition(ctx, tx, "SELECT records_tx, records_seq FROM log_trim")
		return err
	})
	if err != nil {
		return knowledge.FeedState{}, fmt.Errorf("postgres: read the records feed's state: %w", err)
	}
	return st, nil
}

// GetRecords implements knowledge.Store in one statement.
func (s *DB) GetRecords(ctx context.Context, ids []string) ([]*knowledge.Record, error) {
	rows, err := s.pool.Query(ctx, "SELECT id, doc FROM records WHERE id = ANY($1)", ids)
	if err != nil {
		return nil, unavailable(fmt.Errorf("postgres: read records: %w", err))
	}
	found := make(map[string]*knowledge.Record, len(ids))
	for rows.Next() {
		var (
			id  string
			doc []byte
		)
		if err := rows.Scan(&id, &doc); err != nil {
			rows.Close()
			return nil, unavailable(fmt.Errorf("postgres: read records: %w", err))
		}
		r, err := decodeRecord(doc)
		if err != nil {
			rows.Close()
			return nil, err
		}
		found[id] = &r
	}
	if err := rows.Err(); err != nil {
		return nil, unavailable(fmt.Errorf("postgres: read records: %w", err))
	}
	out := make([]*knowledge.Record, len(ids))
	for i, id := range ids {
		out[i] = found[id]
	}
	return out, nil
}
