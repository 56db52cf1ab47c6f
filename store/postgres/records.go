package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/knowledge"
)

const counterRecords = "records"

var _ knowledge.Store = (*DB)(nil)

func decodeRecord(v []byte) (knowledge.Record, error) {
	var r knowledge.Record
	if err := json.Unmarshal(v, &r); err != nil {
		return r, fmt.Errorf("postgres: decode record: %w", err)
	}
	return r, nil
}

// getRecord reads a record under a row lock; nil when there is none.
func getRecord(ctx context.Context, tx pgx.Tx, id string) (*knowledge.Record, error) {
	var v []byte
	err := tx.QueryRow(ctx, "SELECT doc FROM records WHERE id = $1 FOR UPDATE", id).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	r, err := decodeRecord(v)
	return &r, err
}

// appendChange appends one feed entry with the next sequence number.
func appendChange(ctx context.Context, tx pgx.Tx, id string, op knowledge.Op, at, now time.Time) error {
	var seq int64
	if err := tx.QueryRow(ctx, "UPDATE feed_state SET last = last + 1 RETURNING last").Scan(&seq); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, "INSERT INTO feed (seq, id, op, at_ms, written_ms) VALUES ($1, $2, $3, $4, $5)",
		seq, id, string(op), at.UnixMilli(), now.UnixMilli())
	return err
}

// UpsertRecords implements knowledge.Store.
func (s *DB) UpsertRecords(ctx context.Context, recs []knowledge.Record, now time.Time) ([]knowledge.Outcome, error) {
	out := make([]knowledge.Outcome, len(recs))
	err := s.write(ctx, func(tx pgx.Tx) error {
		acc := deltas{}
		var evs []changelog.Event
		for i, in := range recs {
			old, err := getRecord(ctx, tx, in.ID)
			if err != nil {
				return err
			}
			rec, o := knowledge.Merge(old, in, now)
			out[i] = o
			if o == knowledge.Unchanged {
				continue
			}
			v, err := json.Marshal(rec)
			if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO records (id, doc) VALUES ($1, $2)
				ON CONFLICT (id) DO UPDATE SET doc = excluded.doc`, rec.ID, v); err != nil {
				return err
			}
			if o == knowledge.Added {
				acc.add(counterRecords, 1)
			}
			if err := appendChange(ctx, tx, rec.ID, knowledge.OpUpsert, rec.UpdatedAt, now); err != nil {
				return err
			}
			evs = append(evs, changelog.Event{Kind: changelog.RecordUpserted, ID: rec.ID, At: rec.UpdatedAt})
		}
		if err := appendEvents(ctx, tx, evs, now); err != nil {
			return err
		}
		return acc.apply(ctx, tx)
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: upsert records: %w", err)
	}
	return out, nil
}

// DeleteRecord implements knowledge.Store.
func (s *DB) DeleteRecord(ctx context.Context, id string, at time.Time) error {
	return s.write(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, "DELETE FROM records WHERE id = $1", id)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return knowledge.ErrNotFound
		}
		if err := appendChange(ctx, tx, id, knowledge.OpDelete, at, at); err != nil {
			return err
		}
		if err := appendEvents(ctx, tx, []changelog.Event{{Kind: changelog.RecordDeleted, ID: id, At: at}}, at); err != nil {
			return err
		}
		return deltas{counterRecords: -1}.apply(ctx, tx)
	})
}

// DeleteRecords implements knowledge.Store.
func (s *DB) DeleteRecords(ctx context.Context, ids []string, at time.Time) (deleted, missing []string, err error) {
	err = s.write(ctx, func(tx pgx.Tx) error {
		deleted, missing = deleted[:0], missing[:0]
		for _, id := range ids {
			tag, err := tx.Exec(ctx, "DELETE FROM records WHERE id = $1", id)
			if err != nil {
				return err
			}
			if tag.RowsAffected() == 0 {
				missing = append(missing, id)
				continue
			}
			if err := appendChange(ctx, tx, id, knowledge.OpDelete, at, at); err != nil {
				return err
			}
			deleted = append(deleted, id)
		}
		evs := make([]changelog.Event, len(deleted))
		for i, id := range deleted {
			evs[i] = changelog.Event{Kind: changelog.RecordDeleted, ID: id, At: at}
		}
		if err := appendEvents(ctx, tx, evs, at); err != nil {
			return err
		}
		return deltas{counterRecords: -int64(len(deleted))}.apply(ctx, tx)
	})
	if err != nil {
		return nil, nil, fmt.Errorf("postgres: delete records: %w", err)
	}
	return deleted, missing, nil
}

// GetRecord implements knowledge.Store.
func (s *DB) GetRecord(ctx context.Context, id string) (knowledge.Record, error) {
	var v []byte
	err := s.pool.QueryRow(ctx, "SELECT doc FROM records WHERE id = $1", id).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return knowledge.Record{}, knowledge.ErrNotFound
	}
	if err != nil {
		return knowledge.Record{}, unavailable(err)
	}
	return decodeRecord(v)
}

// ListRecords implements knowledge.Store: id order.
func (s *DB) ListRecords(ctx context.Context, after string, limit int) (knowledge.RecordPage, error) {
	page := knowledge.RecordPage{Records: make([]knowledge.Record, 0, min(limit, 256))}
	err := s.read(ctx, func(tx pgx.Tx) error {
		var err error
		if page.Total, err = readCounter(ctx, tx, counterRecords); err != nil {
			return err
		}
		page.Records, page.Next, err = pageDocs(ctx, tx, limit, decodeRecord, func(r knowledge.Record) string { return r.ID },
			page.Records[:0], "SELECT doc FROM records WHERE id > $1 ORDER BY id LIMIT $2", after, limit+1)
		return err
	})
	return page, err
}

// Changes implements knowledge.Store: each upsert entry with its record as
// it is now, read in the same snapshot.
func (s *DB) Changes(ctx context.Context, after uint64, limit int) ([]knowledge.Change, error) {
	return s.ChangesWithin(ctx, after, limit, 0)
}

// ChangesWithin is Changes bounded by bytes too, as the search index reads
// the feed: it stops before the entry whose record would take the
// records' Size past maxBytes, but returns at least one entry; maxBytes 0
// means no bound.
func (s *DB) ChangesWithin(ctx context.Context, after uint64, limit, maxBytes int) ([]knowledge.Change, error) {
	var out []knowledge.Change
	err := s.read(ctx, func(tx pgx.Tx) error {
		out = out[:0]
		rows, err := tx.Query(ctx, `SELECT f.seq, f.id, f.op, f.at_ms, r.doc FROM feed f
			LEFT JOIN records r ON f.op = 'upsert' AND r.id = f.id
			WHERE f.seq > $1 ORDER BY f.seq LIMIT $2`, int64(after), limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		size := 0
		for rows.Next() {
			var (
				seq, at int64
				id, op  string
				doc     []byte
			)
			if err := rows.Scan(&seq, &id, &op, &at, &doc); err != nil {
				return err
			}
			ch := knowledge.Change{Seq: uint64(seq), ID: id, Op: knowledge.Op(op), At: fromMS(at)}
			if doc != nil {
				r, err := decodeRecord(doc)
				if err != nil {
					return err
				}
				if size += r.Size(); maxBytes > 0 && size > maxBytes && len(out) > 0 {
					return nil
				}
				ch.Record = &r
			}
			out = append(out, ch)
		}
		return rows.Err()
	})
	return out, err
}

// Feed implements knowledge.Store.
func (s *DB) Feed(ctx context.Context) (knowledge.FeedState, error) {
	var (
		st            knowledge.FeedState
		first         *int64
		last, trimmed int64
	)
	err := s.read(ctx, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, "SELECT value FROM kfa_meta WHERE key = 'feed_epoch'").Scan(&st.Epoch); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, "SELECT last, trimmed FROM feed_state").Scan(&last, &trimmed); err != nil {
			return err
		}
		return tx.QueryRow(ctx, "SELECT min(seq) FROM feed").Scan(&first)
	})
	if err != nil {
		return st, err
	}
	st.Last, st.Trimmed = uint64(last), uint64(trimmed)
	if first != nil {
		st.First = uint64(*first)
	}
	return st, nil
}

// TrimFeed implements knowledge.Store in one statement: the entries
// written before before that have a later entry for the same record, or
// are deletes, except the newest entry of the feed.
func (s *DB) TrimFeed(ctx context.Context, before time.Time) (int, error) {
	n := 0
	err := s.write(ctx, func(tx pgx.Tx) error {
		var top *int64
		err := tx.QueryRow(ctx, `WITH gone AS (
				DELETE FROM feed f WHERE f.written_ms < $1
				  AND f.seq < (SELECT max(seq) FROM feed)
				  AND (f.op = 'delete' OR EXISTS (SELECT 1 FROM feed g WHERE g.id = f.id AND g.seq > f.seq))
				RETURNING f.seq)
			SELECT count(*), max(seq) FROM gone`, before.UnixMilli()).Scan(&n, &top)
		if err != nil || top == nil {
			return err
		}
		_, err = tx.Exec(ctx, "UPDATE feed_state SET trimmed = greatest(trimmed, $1)", *top)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("postgres: trim feed: %w", err)
	}
	return n, nil
}
