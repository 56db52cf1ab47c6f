package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/kfa-project/kfa/storage"
)

// The seam (package storage): this store runs every command's load plan
// as the batch that begins its transaction (one round trip, the locks in
// the order the plan queues them), and its write plan as the batch that
// commits it (another); a read's load plan is one round trip too.

// pgKind is how this store keeps one kind of record: mapped (the kinds
// that had tables before the seam, each mapped once by a table in
// kind_*.go) or generic (genericKind: two tables for every such kind).
type pgKind interface {
	// get is the query of g's record.
	get(g *storage.Get) (*sel, error)
	// getAll is the query of g's records.
	getAll(g *storage.GetAll) (*sel, error)
	// scan is the query of q's entries under prefix (nil: under each key
	// of parent instead).
	scan(q *storage.Range, prefix storage.Key, parent *sel) (*sel, error)
	// put queues rec's write, which was old (nil: new), with its index
	// entries.
	put(w *pgWrites, old, rec any) error
	// del queues old's delete with its index entries.
	del(w *pgWrites, old any) error
	// counter is the counters row of the count of ix's entries under
	// prefix.
	counter(ix storage.Ix, prefix storage.Key) (string, error)
}

// mapped are the kinds this store maps, by kind (kind_*.go).
var mapped = map[storage.Type]pgKind{}

// generics caches the generic kinds met so far.
var generics sync.Map // storage.Type -> *genericKind

// kindOf is how this store keeps t.
func kindOf(t storage.Type) pgKind {
	if k, ok := mapped[t]; ok {
		return k
	}
	if k, ok := generics.Load(t); ok {
		return k.(*genericKind)
	}
	k, _ := generics.LoadOrStore(t, &genericKind{t: t})
	return k.(*genericKind)
}

// sqlb collects a statement's arguments, numbering their placeholders.
type sqlb struct{ args []any }

// arg is the placeholder of v.
func (b *sqlb) arg(v any) string {
	b.args = append(b.args, v)
	return "$" + strconv.Itoa(len(b.args))
}

// sel is one load as SQL: the rows of from (the kind's table is aliased
// t) under conds, in order, at most limit. Its records' keys are keyCols
// (keyBytes, as one storage.Key.Encode, for a later generic range under
// them); scan reads one row into a record (a *T), or into a key.
type sel struct {
	cols     string
	from     string
	conds    []func(*sqlb) string
	order    string
	limit    int
	lock     string
	keyCols  []string
	keyBytes string
	scan     func(row pgx.Row) (any, error)
}

// where renders the conditions.
func (s *sel) where(b *sqlb) string {
	if len(s.conds) == 0 {
		return "true"
	}
	parts := make([]string, len(s.conds))
	for i, c := range s.conds {
		parts[i] = c(b)
	}
	return strings.Join(parts, " AND ")
}

// tail renders ORDER BY and LIMIT.
func (s *sel) tail(b *sqlb) string {
	out := ""
	if s.order != "" {
		out += " ORDER BY " + s.order
	}
	if s.limit > 0 {
		out += " LIMIT " + b.arg(s.limit)
	}
	return out
}

// sql renders the whole statement.
func (s *sel) sql(b *sqlb) string {
	q := "SELECT " + s.cols + " FROM " + s.from + " WHERE " + s.where(b) + s.tail(b)
	if s.lock != "" {
		q += " " + s.lock
	}
	return q
}

// keys renders the subquery of the keys of s's records, as cols.
func (s *sel) keys(b *sqlb, cols string) string {
	return "SELECT " + cols + " FROM " + s.from + " WHERE " + s.where(b) + s.tail(b)
}

// under is the condition that cols (the leading parts of a range's
// entries) are the key of one of parent's records, or its first parts
// (0: all).
func under(cols []string, parent *sel, parts int) func(*sqlb) string {
	keys := parent.keyCols
	if parts > 0 {
		keys = keys[:min(parts, len(keys))]
	}
	return func(b *sqlb) string {
		return "(" + strings.Join(cols[:len(keys)], ", ") + ") IN (" + parent.keys(b, strings.Join(keys, ", ")) + ")"
	}
}

// lockClause is what mode takes of the rows of alias.
func lockClause(mode storage.Mode, lock, alias string) string {
	switch mode {
	case storage.Share:
		return "FOR SHARE OF " + alias
	case storage.Lock:
		if lock == "" {
			lock = "FOR UPDATE"
		}
		return lock + " OF " + alias
	}
	return ""
}

// loader is the storage.Loader of one command or read: it queues each
// load into the pending batch.
type loader struct {
	p    *pending
	sels []*sel // by Ref
	err  error
}

func (l *loader) fail(err error) storage.Ref {
	if l.err == nil {
		l.err = err
	}
	l.sels = append(l.sels, nil)
	return storage.Ref(len(l.sels) - 1)
}

func (l *loader) add(s *sel) storage.Ref {
	l.sels = append(l.sels, s)
	return storage.Ref(len(l.sels) - 1)
}

// Get implements storage.Loader.
func (l *loader) Get(g storage.Get) storage.Ref {
	if g.Dst != nil {
		g.Type.Reset(g.Dst)
	}
	s, err := kindOf(g.Type).get(&g)
	if err != nil {
		return l.fail(err)
	}
	if g.Dst == nil { // a lock: nothing is read, and nothing ranges under it
		s.cols = "1"
		b := &sqlb{}
		l.p.b.Queue(s.sql(b), b.args...)
		return l.add(nil)
	}
	b := &sqlb{}
	q := s.sql(b)
	dst, t := g.Dst, g.Type
	l.p.b.Queue(q, b.args...).QueryRow(func(row pgx.Row) error {
		rec, err := s.scan(row)
		if errors.Is(err, pgx.ErrNoRows) {
			t.Set(dst, nil)
			return nil
		}
		if err != nil {
			return err
		}
		t.Set(dst, rec)
		return nil
	})
	return l.add(s)
}

// GetAll implements storage.Loader.
func (l *loader) GetAll(g storage.GetAll) storage.Ref {
	g.Type.Reset(g.Dst)
	s, err := kindOf(g.Type).getAll(&g)
	if err != nil {
		return l.fail(err)
	}
	b := &sqlb{}
	sql := s.sql(b)
	dst, t := g.Dst, g.Type
	l.p.b.Queue(sql, b.args...).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			v, err := s.scan(rows)
			if err != nil {
				return err
			}
			t.Append(dst, v)
		}
		return rows.Err()
	})
	return l.add(s)
}

// Range implements storage.Loader.
func (l *loader) Range(q storage.Range) storage.Ref {
	t := q.Index.Type()
	if q.Dst != nil {
		t.Reset(q.Dst)
	}
	if q.Keys != nil {
		*q.Keys = (*q.Keys)[:0]
	}
	var parent *sel
	if q.Of != storage.NoRef {
		if int(q.Of) < 0 || int(q.Of) >= len(l.sels) || l.sels[q.Of] == nil {
			return l.fail(fmt.Errorf("postgres: a range of %s is under load %d, which is not queued", t.Name(), q.Of))
		}
		parent = l.sels[q.Of]
	}
	prefix := q.Prefix
	if parent != nil {
		prefix = nil
	}
	s, err := kindOf(t).scan(&q, prefix, parent)
	if err != nil {
		return l.fail(err)
	}
	b := &sqlb{}
	sql := s.sql(b)
	dst, keys := q.Dst, q.Keys
	l.p.b.Queue(sql, b.args...).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			v, err := s.scan(rows)
			if err != nil {
				return err
			}
			if keys != nil {
				*keys = append(*keys, v.(storage.Key))
				continue
			}
			t.Append(dst, v)
		}
		return rows.Err()
	})
	return l.add(s)
}

// Count implements storage.Loader.
func (l *loader) Count(ix storage.Ix, prefix storage.Key, dst *int) {
	name, err := kindOf(ix.Type()).counter(ix, prefix)
	if err != nil {
		l.fail(err)
		return
	}
	l.p.b.Queue("SELECT n FROM counters WHERE name = $1", name).QueryRow(scanCounter(dst))
}

// planCounter is the counters row of a write plan's counter: "c/" and
// its name, apart from the counters the store keeps itself.
func planCounter(name string) string { return "c/" + name }

// Counter implements storage.Loader.
func (l *loader) Counter(name string, dst *int64) {
	l.p.b.Queue("SELECT n FROM counters WHERE name = $1", planCounter(name)).QueryRow(func(row pgx.Row) error {
		err := row.Scan(dst)
		if errors.Is(err, pgx.ErrNoRows) {
			*dst = 0
			return nil
		}
		return err
	})
}

// Lock implements storage.Loader: an advisory lock on name's hash, held
// until the transaction ends.
func (l *loader) Lock(name string) {
	l.p.b.Queue("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", "kfa lock|"+name)
}

// Flush implements storage.Loader.
func (l *loader) Flush() error {
	if l.err != nil {
		return l.err
	}
	return l.p.flush()
}

// pgWrites queues a write plan's statements into the batch that commits,
// collecting its counter moves to apply once.
type pgWrites struct {
	ctx context.Context
	w   execer
	acc deltas
}

// exec queues one statement.
func (w *pgWrites) exec(sql string, args ...any) error {
	_, err := w.w.Exec(w.ctx, sql, args...)
	return err
}

// Run implements storage.Engine, in two round trips.
func (s *DB) Run(ctx context.Context, c storage.Command) error {
	return s.commandFlush(ctx, c.Name, c.Bookkeeping, func(p *pending) error {
		l := &loader{p: p}
		if err := c.Load(l); err != nil {
			return err
		}
		return l.err
	}, func() (func(execer) error, error) {
		w, err := c.Decide()
		if err != nil || w.Empty() {
			return nil, err
		}
		return func(e execer) error { return writePlan(ctx, e, w) }, nil
	})
}

// writePlan queues w: each record with its index entries, the counters,
// then the events.
func writePlan(ctx context.Context, e execer, w *storage.Writes) error {
	pw := &pgWrites{ctx: ctx, w: e, acc: deltas{}}
	for i := 0; i < len(w.Ops); i++ {
		op := w.Ops[i]
		if n := newRun(w.Ops[i:]); n > 1 {
			if m, ok := kindOf(op.Type).(manyPutter); ok {
				recs := make([]any, n)
				for j := range recs {
					recs[j] = w.Ops[i+j].New
				}
				if err := m.putNew(pw, recs); err != nil {
					return err
				}
				i += n - 1
				continue
			}
		}
		var err error
		switch {
		case op.Counter != "":
			pw.acc.add(planCounter(op.Counter), op.N)
		case op.New != nil:
			err = kindOf(op.Type).put(pw, op.Old, op.New)
		case op.Old != nil:
			err = kindOf(op.Type).del(pw, op.Old)
		default:
			err = errors.New("postgres: a write plan's op writes nothing")
		}
		if err != nil {
			return err
		}
	}
	if err := pw.acc.apply(ctx, e); err != nil {
		return err
	}
	return appendEvents(ctx, e, w.Events, w.At)
}

// manyPutter is a kind that writes many new records in one statement (a
// reply's inbox entries, one per member).
type manyPutter interface {
	putNew(w *pgWrites, recs []any) error
}

// newRun is how many ops from the first are puts of new records of its
// kind.
func newRun(ops []storage.Op) int {
	n := 0
	for _, op := range ops {
		if op.Type != ops[0].Type || op.New == nil || op.Old != nil || op.Counter != "" {
			break
		}
		n++
	}
	return n
}

// View implements storage.Engine in one round trip: one statement alone,
// more in one batch between BEGIN (one snapshot) and COMMIT. A plan that
// flushes early runs in a read-only transaction begun by its first batch.
func (s *DB) View(ctx context.Context, name string, load func(storage.Loader) error) error {
	return unavailable(s.counted(ctx, TripsRead, func(conn *pgxpool.Conn) error {
		p := &pending{ctx: ctx, conn: conn, b: &pgx.Batch{}}
		l := &viewLoader{loader: loader{p: p}}
		if err := load(l); err != nil {
			if l.begun {
				rollback(ctx, conn)
			}
			return err
		}
		if l.err != nil {
			return l.err
		}
		return l.finish()
	}))
}

// viewLoader is a read's loader: it begins a transaction only when the
// read takes more than one statement.
type viewLoader struct {
	loader
	begun bool
}

// Flush implements storage.Loader: the batch so far goes in a read-only
// transaction the read keeps until it finishes.
func (l *viewLoader) Flush() error {
	if l.err != nil {
		return l.err
	}
	if !l.begun && l.p.b.Len() > 0 {
		l.begin()
	}
	return l.p.flush()
}

// begin puts BEGIN before what is queued.
func (l *viewLoader) begin() {
	b := &pgx.Batch{}
	b.Queue("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
	b.QueuedQueries = append(b.QueuedQueries, l.p.b.QueuedQueries...)
	l.p.b, l.begun = b, true
}

// finish sends the rest of the read, with COMMIT when it began.
func (l *viewLoader) finish() error {
	if !l.begun && l.p.b.Len() > 1 {
		l.begin()
	}
	if l.begun {
		l.p.b.Queue("COMMIT")
	}
	err := l.p.flush()
	if err != nil && l.begun {
		rollback(l.p.ctx, l.p.conn)
	}
	return err
}

var _ storage.Engine = (*DB)(nil)
