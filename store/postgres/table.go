package postgres

import (
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/storage"
)

// The kinds this store kept in tables before the seam, mapped once each
// (kind_*.go): the table, the columns of the key and of each index the
// plans walk, how a row reads into a record, and the statements of a put
// and a delete. Which records an index holds is the schema's (commands:
// each index's entry function); an index that leaves records out says so
// here only as the condition its table already had.

// column is one key part's column, and how the part converts to its
// value and back.
type column struct {
	name string // qualified: t.id
	conv conv
}

// conv converts a key part to a column's value and back.
type conv uint8

const (
	convText   conv = iota // a text column
	convMillis             // a bigint of Unix ms; the part is storage.Millis
	convBytes              // a bytea column; the part is its bytes
)

func (c conv) arg(part string) any {
	switch c {
	case convMillis:
		return int64(storage.ParseUint(part))
	case convBytes:
		return []byte(part)
	}
	return part
}

// dest is where a column is scanned to, and part reads it back.
func (c conv) dest() any {
	switch c {
	case convMillis:
		return new(int64)
	case convBytes:
		return new([]byte)
	}
	return new(string)
}

func (c conv) part(d any) string {
	switch c {
	case convMillis:
		return storage.Uint(uint64(*d.(*int64)))
	case convBytes:
		return string(*d.(*[]byte))
	}
	return *d.(*string)
}

// tindex is a secondary index of a table, as the plans walk it.
type tindex struct {
	// from replaces the table in FROM ("" : the table, aliased t), for an
	// index whose entries live in another table joined to it.
	from string
	// cols are the leading parts' columns.
	cols []column
	// where is the condition of the records the index holds ("": all).
	where string
}

// table maps one kind to its table.
type table[T any] struct {
	kind *storage.Kind[T]
	name string
	key  []column
	// cols is what a read of a record selects; brief, when set, what a
	// brief read selects (scan is told which).
	cols, brief string
	read        func(row pgx.Row, brief bool) (T, error)
	// lock is what storage.Lock takes ("": FOR UPDATE).
	lock string
	// owner is the owner's column, for a Get of an owner's record.
	owner   string
	indexes map[storage.Ix]tindex
	// write and remove queue the writes of a put and a delete.
	write  func(w *pgWrites, old, rec *T) error
	remove func(w *pgWrites, old *T) error
	// counted names the counters row of a counted index's prefix.
	counted func(ix storage.Ix, prefix storage.Key) (string, bool)
}

func names(cs []column) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.name
	}
	return out
}

// eq is the condition that cs's first len(k) columns hold k.
func eq(cs []column, k storage.Key) func(*sqlb) string {
	return func(b *sqlb) string {
		parts := make([]string, len(k))
		for i, p := range k {
			parts[i] = cs[i].name + " = " + b.arg(cs[i].conv.arg(p))
		}
		return strings.Join(parts, " AND ")
	}
}

// upTo is the condition that cs's first len(k) columns sort at or before
// k.
func upTo(cs []column, k storage.Key) func(*sqlb) string {
	return func(b *sqlb) string {
		args := make([]string, len(k))
		for i, p := range k {
			args[i] = b.arg(cs[i].conv.arg(p))
		}
		return "(" + strings.Join(names(cs[:len(k)]), ", ") + ") <= (" + strings.Join(args, ", ") + ")"
	}
}

// keyBytesSQL is the bytea of the key columns as storage.Key.Encode
// makes it, for a generic range under this table's records (text keys
// hold no zero byte, so no part needs escaping).
func keyBytesSQL(cs []column) string {
	for _, c := range cs {
		if c.conv != convText {
			return ""
		}
	}
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = "convert_to(" + c.name + ", 'UTF8') || '\\x0001'::bytea"
	}
	return "(" + strings.Join(parts, " || ") + ")"
}

func (t *table[T]) record(brief bool) func(pgx.Row) (any, error) {
	return func(row pgx.Row) (any, error) {
		r, err := t.read(row, brief)
		if err != nil {
			return nil, err
		}
		return &r, nil
	}
}

func (t *table[T]) selectList(brief bool) string {
	if brief && t.brief != "" {
		return t.brief
	}
	return t.cols
}

func (t *table[T]) get(g *storage.Get) (*sel, error) {
	if len(g.Key) != len(t.key) {
		return nil, fmt.Errorf("postgres: a %s key has %d parts, not %d", t.kind.Name(), len(t.key), len(g.Key))
	}
	s := &sel{cols: t.selectList(g.Brief), from: t.name + " t", lock: lockClause(g.Mode, t.lock, "t"),
		keyCols: names(t.key), keyBytes: keyBytesSQL(t.key), scan: t.record(g.Brief)}
	s.conds = append(s.conds, eq(t.key, g.Key))
	if g.Owner != "" {
		if t.owner == "" {
			return nil, fmt.Errorf("postgres: %s has no owner", t.kind.Name())
		}
		owner := g.Owner
		s.conds = append(s.conds, func(b *sqlb) string { return t.owner + " = " + b.arg(owner) })
	}
	return s, nil
}

// arrayType is the SQL array type of a column's values.
func (c conv) arrayType() string {
	switch c {
	case convMillis:
		return "bigint[]"
	case convBytes:
		return "bytea[]"
	}
	return "text[]"
}

func (t *table[T]) getAll(g *storage.GetAll) (*sel, error) {
	cols := make([]any, len(t.key))
	for i, c := range t.key {
		switch c.conv {
		case convMillis:
			cols[i] = make([]int64, 0, len(g.Keys))
		case convBytes:
			cols[i] = make([][]byte, 0, len(g.Keys))
		default:
			cols[i] = make([]string, 0, len(g.Keys))
		}
	}
	for _, k := range g.Keys {
		if len(k) != len(t.key) {
			return nil, fmt.Errorf("postgres: a %s key has %d parts, not %d", t.kind.Name(), len(t.key), len(k))
		}
		for i, c := range t.key {
			switch v := c.conv.arg(k[i]).(type) {
			case int64:
				cols[i] = append(cols[i].([]int64), v)
			case []byte:
				cols[i] = append(cols[i].([][]byte), v)
			case string:
				cols[i] = append(cols[i].([]string), v)
			}
		}
	}
	return &sel{cols: t.cols, from: t.name + " t", lock: lockClause(g.Mode, t.lock, "t"),
		order: strings.Join(names(t.key), ", "), keyCols: names(t.key), keyBytes: keyBytesSQL(t.key), scan: t.record(false),
		conds: []func(*sqlb) string{func(b *sqlb) string {
			args := make([]string, len(cols))
			for i, c := range t.key {
				args[i] = b.arg(cols[i]) + "::" + c.conv.arrayType()
			}
			return "(" + strings.Join(names(t.key), ", ") + ") IN (SELECT * FROM unnest(" + strings.Join(args, ", ") + "))"
		}},
	}, nil
}

func (t *table[T]) scan(q *storage.Range, prefix storage.Key, parent *sel) (*sel, error) {
	from, lead := t.name+" t", []column(nil)
	if !q.Index.Primary() {
		ix, ok := t.indexes[q.Index]
		if !ok {
			return nil, fmt.Errorf("postgres: %s has no walk of index %s", t.kind.Name(), q.Index.Name())
		}
		if ix.from != "" {
			from = ix.from
		}
		lead = ix.cols
	}
	cols := append(append([]column{}, lead...), t.key...)
	order := names(cols)
	if q.Reverse {
		for i := range order {
			order[i] += " DESC"
		}
	}
	s := &sel{cols: t.selectList(q.Brief), from: from, lock: lockClause(q.Mode, t.lock, "t"), limit: q.Limit,
		order: strings.Join(order, ", "), keyCols: names(t.key), keyBytes: keyBytesSQL(t.key), scan: t.record(q.Brief)}
	if q.Keys != nil {
		s.cols = strings.Join(names(cols), ", ")
		s.scan = func(row pgx.Row) (any, error) {
			ds := make([]any, len(cols))
			for i, c := range cols {
				ds[i] = c.conv.dest()
			}
			if err := row.Scan(ds...); err != nil {
				return nil, err
			}
			k := make(storage.Key, len(cols))
			for i, c := range cols {
				k[i] = c.conv.part(ds[i])
			}
			return k, nil
		}
	}
	if !q.Index.Primary() {
		if w := t.indexes[q.Index].where; w != "" {
			s.conds = append(s.conds, func(*sqlb) string { return w })
		}
	}
	switch {
	case parent != nil:
		s.conds = append(s.conds, under(names(cols), parent, q.Parts))
	case len(prefix) > len(cols):
		return nil, fmt.Errorf("postgres: a prefix of %d parts on %s, whose entries have %d", len(prefix), q.Index.Name(), len(cols))
	case len(prefix) > 0:
		s.conds = append(s.conds, eq(cols, prefix))
	}
	if q.To != nil {
		s.conds = append(s.conds, upTo(cols, q.To))
	}
	return s, nil
}

func (t *table[T]) put(w *pgWrites, old, rec any) error {
	if t.write == nil {
		return fmt.Errorf("postgres: %s is not written through the seam", t.kind.Name())
	}
	var o *T
	if old != nil {
		o = old.(*T)
	}
	return t.write(w, o, rec.(*T))
}

func (t *table[T]) del(w *pgWrites, old any) error {
	if t.remove == nil {
		return fmt.Errorf("postgres: %s is not deleted through the seam", t.kind.Name())
	}
	return t.remove(w, old.(*T))
}

func (t *table[T]) counter(ix storage.Ix, prefix storage.Key) (string, error) {
	if t.counted != nil {
		if name, ok := t.counted(ix, prefix); ok {
			return name, nil
		}
	}
	return "", fmt.Errorf("postgres: %s has no count of index %s", t.kind.Name(), ix.Name())
}

// docScan reads a table's one doc column into a record.
func docScan[T any](decode func([]byte) (T, error)) func(pgx.Row, bool) (T, error) {
	return func(row pgx.Row, _ bool) (T, error) {
		var v []byte
		if err := row.Scan(&v); err != nil {
			var zero T
			return zero, err
		}
		return decode(v)
	}
}
