package postgres

import (
	"encoding/hex"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/storage"
)

// genericKind keeps a kind this store has no table for, through the
// kind's codec, in kind_records and kind_index (migrations/0012_kinds.sql).
type genericKind struct{ t storage.Type }

func (k *genericKind) check() error {
	if !k.t.Generic() {
		return fmt.Errorf("postgres: kind %s has neither a codec nor a table in this store", k.t.Name())
	}
	return nil
}

// scanRecord reads a (key, doc) row into a record.
func (k *genericKind) scanRecord(row pgx.Row) (any, error) {
	var ek, v []byte
	if err := row.Scan(&ek, &v); err != nil {
		return nil, err
	}
	key, ok := storage.DecodeKey(ek)
	if !ok {
		return nil, fmt.Errorf("postgres: %s: malformed key %x", k.t.Name(), ek)
	}
	return k.t.Decode(key, v)
}

// scanKey reads an encoded key (an index entry's, or a record's).
func scanKey(row pgx.Row) (any, error) {
	var ek []byte
	if err := row.Scan(&ek); err != nil {
		return nil, err
	}
	key, ok := storage.DecodeKey(ek)
	if !ok {
		return nil, fmt.Errorf("postgres: malformed key %x", ek)
	}
	return key, nil
}

func (k *genericKind) get(g *storage.Get) (*sel, error) {
	if err := k.check(); err != nil {
		return nil, err
	}
	s := &sel{
		cols: "t.key, t.doc", from: "kind_records t", lock: lockClause(g.Mode, "", "t"),
		keyBytes: "t.key",
		conds: []func(*sqlb) string{
			func(b *sqlb) string { return "t.kind = " + b.arg(k.t.Name()) },
			func(b *sqlb) string { return "t.key = " + b.arg(g.Key.Encode()) },
		},
	}
	s.scan = k.scanRecord
	if g.Owner != "" {
		owner := g.Owner
		s.scan = func(row pgx.Row) (any, error) {
			rec, err := k.scanRecord(row)
			if err != nil {
				return nil, err
			}
			if o, ok := k.t.OwnerOf(rec); ok && o != owner {
				return nil, pgx.ErrNoRows // another owner's is no record
			}
			return rec, nil
		}
	}
	return s, nil
}

func (k *genericKind) getAll(g *storage.GetAll) (*sel, error) {
	if err := k.check(); err != nil {
		return nil, err
	}
	keys := make([][]byte, len(g.Keys))
	for i, key := range g.Keys {
		keys[i] = key.Encode()
	}
	return &sel{
		cols: "t.key, t.doc", from: "kind_records t", lock: lockClause(g.Mode, "", "t"), order: "t.key",
		keyBytes: "t.key", scan: k.scanRecord,
		conds: []func(*sqlb) string{
			func(b *sqlb) string { return "t.kind = " + b.arg(k.t.Name()) },
			func(b *sqlb) string { return "t.key = ANY(" + b.arg(keys) + "::bytea[])" },
		},
	}, nil
}

// succ is the SQL of storage.PrefixEnd of the bytea expression e.
func succ(e string) string {
	return "(substring(" + e + " from 1 for length(" + e + ") - 1) || '\\x02'::bytea)"
}

func (k *genericKind) scan(q *storage.Range, prefix storage.Key, parent *sel) (*sel, error) {
	if err := k.check(); err != nil {
		return nil, err
	}
	s := &sel{from: "kind_records t", lock: lockClause(q.Mode, "", "t"), limit: q.Limit, keyBytes: "t.key", scan: k.scanRecord}
	col := "t.key"
	s.cols = "t.key, t.doc"
	s.conds = append(s.conds, func(b *sqlb) string { return "t.kind = " + b.arg(k.t.Name()) })
	if !q.Index.Primary() {
		s.from = "kind_index e JOIN kind_records t ON t.kind = e.kind AND t.key = e.key"
		col = "e.entry"
		s.conds = append(s.conds, func(b *sqlb) string { return "e.index_name = " + b.arg(q.Index.Name()) })
	}
	if q.Keys != nil {
		s.cols, s.scan = col, scanKey
	}
	s.order = col
	if q.Reverse {
		s.order = col + " DESC"
	}
	if q.To != nil {
		end := storage.PrefixEnd(q.To.Encode())
		s.conds = append(s.conds, func(b *sqlb) string { return col + " < " + b.arg(end) })
	}
	switch {
	case parent != nil && q.Parts > 0:
		return nil, fmt.Errorf("postgres: a range of %s under the first parts of another load's keys: generic keys are not cut", k.t.Name())
	case parent != nil:
		if parent.keyBytes == "" {
			return nil, fmt.Errorf("postgres: a range of %s is under a load whose keys it cannot encode", k.t.Name())
		}
		s.conds = append(s.conds, func(b *sqlb) string {
			return "EXISTS (SELECT 1 FROM (" + parent.keys(b, parent.keyBytes+" AS p") + ") pk WHERE " +
				col + " >= pk.p AND " + col + " < " + succ("pk.p") + ")"
		})
	case len(prefix) > 0:
		p := prefix.Encode()
		s.conds = append(s.conds, func(b *sqlb) string {
			return col + " >= " + b.arg(p) + " AND " + col + " < " + b.arg(storage.PrefixEnd(p))
		})
	}
	return s, nil
}

// genericCounter is the counters row of a counted index's entries under
// parts.
func genericCounter(ix string, parts storage.Key) string {
	return "i/" + ix + "/" + hex.EncodeToString(parts.Encode())
}

func (k *genericKind) counter(ix storage.Ix, prefix storage.Key) (string, error) {
	if !ix.IsCounted() {
		return "", fmt.Errorf("postgres: index %s is not counted", ix.Name())
	}
	return genericCounter(ix.Name(), prefix), nil
}

// index queues rec's index entries (n = +1) or their removal (n = -1).
func (k *genericKind) index(w *pgWrites, rec any, ek []byte, n int64) error {
	rk := k.t.KeyOf(rec)
	for _, ix := range k.t.Indexes() {
		parts, ok := ix.Entry(rec)
		if !ok {
			continue
		}
		entry := append(append(storage.Key{}, parts...), rk...).Encode()
		var err error
		if n > 0 {
			err = w.exec("INSERT INTO kind_index (index_name, entry, kind, key) VALUES ($1, $2, $3, $4)", ix.Name(), entry, k.t.Name(), ek)
		} else {
			err = w.exec("DELETE FROM kind_index WHERE index_name = $1 AND entry = $2", ix.Name(), entry)
		}
		if err != nil {
			return err
		}
		if ix.IsCounted() {
			w.acc.add(genericCounter(ix.Name(), parts), n)
		}
	}
	return nil
}

func (k *genericKind) put(w *pgWrites, old, rec any) error {
	if err := k.check(); err != nil {
		return err
	}
	ek := k.t.KeyOf(rec).Encode()
	v, err := k.t.Encode(rec)
	if err != nil {
		return err
	}
	if old == nil {
		// A new record: when another command made it first, the insert
		// fails as a unique race, and the command runs again, loading it.
		if err := w.exec("INSERT INTO kind_records (kind, key, doc) VALUES ($1, $2, $3)", k.t.Name(), ek, v); err != nil {
			return err
		}
		return k.index(w, rec, ek, +1)
	}
	if err := k.index(w, old, ek, -1); err != nil {
		return err
	}
	if err := w.exec("UPDATE kind_records SET doc = $3 WHERE kind = $1 AND key = $2", k.t.Name(), ek, v); err != nil {
		return err
	}
	return k.index(w, rec, ek, +1)
}

func (k *genericKind) del(w *pgWrites, old any) error {
	if err := k.check(); err != nil {
		return err
	}
	ek := k.t.KeyOf(old).Encode()
	if err := k.index(w, old, ek, -1); err != nil {
		return err
	}
	return w.exec("DELETE FROM kind_records WHERE kind = $1 AND key = $2", k.t.Name(), ek)
}
