package postgres

import (
	"context"
	"fmt"

	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/knowledge"
)

// The records' change feed is the change log's record events, read
// through the partial index change_log_records: a page costs the same
// whatever else the log holds, and no row is locked by record writes.

// feedBounds is the query of the records feed's bounds (Feed).
var feedBounds = boundsOf("SELECT tx, seq FROM change_log WHERE "+recordKinds+" ORDER BY tx, seq LIMIT 1",
	"SELECT tx, seq FROM change_log WHERE "+recordKinds+" AND "+readable+" ORDER BY tx DESC, seq DESC LIMIT 1",
	"SELECT records_tx, records_seq FROM log_trim")

// feedChanges is Changes' one statement: the feed's bounds (feedBounds),
// then, on the same row and on one row each after it, the record events
// after ($1, $2), at most $3, each with its record as it is now. The
// events come in their order: a join ON true is a nested loop, whose one
// outer row is followed by the inner rows as their ORDER BY gives them.
var feedChanges = `SELECT b.*, c.tx, c.seq, c.kind, c.subject, c.at_ms, c.doc FROM (` + feedBounds + `) b
	LEFT JOIN LATERAL (SELECT c.tx, c.seq, c.kind, c.subject, c.at_ms, r.doc
		FROM change_log c LEFT JOIN records r ON c.kind = 'record.upserted' AND r.id = c.subject
		WHERE c.` + recordKinds + ` AND (c.tx, c.seq) > ($1, $2)
		  AND (c.tx, c.seq) < (pg_snapshot_xmin(pg_current_snapshot())::text::bigint, 0)
		ORDER BY c.tx, c.seq LIMIT $3) c ON true`

// Changes implements knowledge.Store in one statement (feedChanges).
func (s *DB) Changes(ctx context.Context, after changelog.Position, limit int) (knowledge.FeedState, []knowledge.Change, error) {
	var (
		st  knowledge.FeedState
		b   bounds
		out []knowledge.Change
	)
	err := s.readStatement(ctx, func(q rowQuerier) error {
		out = nil
		rows, err := q.Query(ctx, feedChanges, int64(after.Tx), int64(after.Seq), limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				tx, seq, at *int64
				kind, id    *string
				doc         []byte
			)
			if err := rows.Scan(append(b.dest(), &tx, &seq, &kind, &id, &at, &doc)...); err != nil {
				return err
			}
			if tx == nil {
				break // no event: the bounds alone
			}
			ch := knowledge.Change{Pos: changelog.Position{Tx: uint64(*tx), Seq: uint64(*seq)}, ID: *id,
				Op: knowledge.ChangeOp(changelog.Kind(*kind)), At: fromMS(*at)}
			if ch.Op.Carries() {
				if doc != nil {
					r, err := decodeRecord(doc)
					if err != nil {
						return err
					}
					ch.Record = &r
				}
			}
			out = append(out, ch)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		return b.read(&st.Epoch, &st.First, &st.Last, &st.Trimmed)
	})
	if err != nil {
		return knowledge.FeedState{}, nil, fmt.Errorf("postgres: read the records' changes: %w", err)
	}
	return st, out, nil
}

// Feed implements knowledge.Store in one statement (feedBounds).
func (s *DB) Feed(ctx context.Context) (knowledge.FeedState, error) {
	var (
		st knowledge.FeedState
		b  bounds
	)
	if err := s.readRow(ctx, feedBounds, nil, b.dest()...); err != nil {
		return knowledge.FeedState{}, fmt.Errorf("postgres: read the records feed's state: %w", err)
	}
	err := b.read(&st.Epoch, &st.First, &st.Last, &st.Trimmed)
	return st, err
}

// GetRecords implements knowledge.Store in one statement.
func (s *DB) GetRecords(ctx context.Context, ids []string) ([]*knowledge.Record, error) {
	found := make(map[string]*knowledge.Record, len(ids))
	err := s.readStatement(ctx, func(q rowQuerier) error {
		rows, err := q.Query(ctx, "SELECT id, doc FROM records WHERE id = ANY($1)", ids)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				id  string
				doc []byte
			)
			if err := rows.Scan(&id, &doc); err != nil {
				return err
			}
			r, err := decodeRecord(doc)
			if err != nil {
				return err
			}
			found[id] = &r
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: read records: %w", err)
	}
	out := make([]*knowledge.Record, len(ids))
	for i, id := range ids {
		out[i] = found[id]
	}
	return out, nil
}
