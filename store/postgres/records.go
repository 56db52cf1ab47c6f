package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/commands"
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

// The schema's Records, in records, with their count.
func init() {
	mapped[commands.Records] = &table[knowledge.Record]{
		kind: commands.Records, name: "records", key: []column{{"t.id", convText}},
		cols: "t.doc", read: docScan(decodeRecord),
		write: func(w *pgWrites, old, rec *knowledge.Record) error {
			v, err := json.Marshal(rec)
			if err != nil {
				return err
			}
			if old == nil {
				w.acc.add(counterRecords, 1)
			}
			return w.exec(`INSERT INTO records (id, doc) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET doc = excluded.doc`, rec.ID, v)
		},
		remove: func(w *pgWrites, old *knowledge.Record) error {
			w.acc.add(counterRecords, -1)
			return w.exec("DELETE FROM records WHERE id = $1", old.ID)
		},
	}
}
