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
	err := s.readRow(ctx, "SELECT doc FROM records WHERE id = $1", []any{id}, &v)
	if errors.Is(err, pgx.ErrNoRows) {
		return knowledge.Record{}, knowledge.ErrNotFound
	}
	if err != nil {
		return knowledge.Record{}, err
	}
	return decodeRecord(v)
}

// ListRecords implements knowledge.Store: id order, the page and its
// total (the records' counter) in one statement.
func (s *DB) ListRecords(ctx context.Context, after string, limit int) (knowledge.RecordPage, error) {
	page := knowledge.RecordPage{Records: make([]knowledge.Record, 0, min(limit, 256))}
	var err error
	page.Records, page.Next, page.Total, err = totalPage(ctx, s, limit, decodeRecord, func(r knowledge.Record) string { return r.ID },
		page.Records, "SELECT COALESCE((SELECT n FROM counters WHERE name = $3), 0)",
		"SELECT doc FROM records WHERE id > $1 ORDER BY id LIMIT $2", after, limit+1, counterRecords)
	return page, err
}
