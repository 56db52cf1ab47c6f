package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/kfa-project/kfa/changelog"
)

// The change log (changelog.Log) in the change_log table; see
// migrations/0004_change_log.sql for why positions are (transaction id,
// sequence) and why a reader never misses an event that commits late.
// The records' change feed is its record events, through the partial
// indexes of migrations/0006_feed_in_log.sql.
//
// A write that appended events wakes this process's followers once it
// has committed, and pokes the notifier, which sends NOTIFY on
// logChannel (coalesced, outside the writing transaction: a NOTIFY in a
// transaction takes a database-wide lock at its commit) so that every
// other process's followers wake too. A wake-up is only a hint; each
// follower also reads on a timer of its own.
const logChannel = "kfa_log"

// appendEvents appends evs to the log in tx, written at now: one
// statement, whatever the number of events.
func appendEvents(ctx context.Context, tx execer, evs []changelog.Event, now time.Time) error {
	if len(evs) == 0 {
		return nil
	}
	kinds := make([]string, len(evs))
	subjects := make([]string, len(evs))
	owners := make([]string, len(evs))
	refs := make([]string, len(evs))
	notes := make([]string, len(evs))
	ats := make([]int64, len(evs))
	for i, e := range evs {
		kinds[i], subjects[i], owners[i], refs[i], notes[i], ats[i] = string(e.Kind), e.ID, e.Owner, e.Ref, e.Note, e.At.UnixMilli()
	}
	_, err := tx.Exec(ctx, `INSERT INTO change_log (kind, subject, owner, ref, note, at_ms, written_ms)
		SELECT k, s, o, r, n, a, $7
		FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[]) WITH ORDINALITY AS e(k, s, o, r, n, a, i)
		ORDER BY i`, kinds, subjects, owners, refs, notes, ats, now.UnixMilli())
	return err
}

// readable is the condition on (tx, seq) that makes an event final: its
// transaction is older than every transaction still running. Written as
// a row comparison, so that it bounds the primary key's range scan.
const readable = "(tx, seq) < (pg_snapshot_xmin(pg_current_snapshot())::text::bigint, 0)"

// recordKinds is the predicate of the record events' partial indexes
// (migrations/0006_feed_in_log.sql); a query must spell it the same way
// for the planner to use them.
const recordKinds = "kind IN ('record.upserted', 'record.deleted')"

// ReadLog implements changelog.Log.
func (s *DB) ReadLog(ctx context.Context, after changelog.Position, limit int) ([]changelog.Event, error) {
	t, err := s.ReadTail(ctx, after, limit)
	return t.Events, err
}

// ReadTail implements changelog.Log in one statement (so one snapshot):
// the readable events after after; the written time of the oldest event
// that committed but is not readable yet (an older transaction still
// runs), which is when the read stops being complete; the trimmed point;
// and the event at after (one probe of the primary key), by which a
// follower notices that a failover lost events it had read.
func (s *DB) ReadTail(ctx context.Context, after changelog.Position, limit int) (changelog.Tail, error) {
	rows, err := s.pool.Query(ctx, `WITH h AS MATERIALIZED (SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS x),
		ev AS (SELECT c.tx, c.seq, c.kind, c.subject, c.owner, c.ref, c.note, c.at_ms FROM change_log c, h
			WHERE (c.tx, c.seq) > ($1, $2) AND (c.tx, c.seq) < (h.x, 0) ORDER BY c.tx, c.seq LIMIT $3),
		held AS (SELECT c.written_ms FROM change_log c, h WHERE (c.tx, c.seq) >= (h.x, 0) ORDER BY c.tx, c.seq LIMIT 1)
		SELECT 0 AS part, tx, seq, kind, subject, owner, ref, note, at_ms FROM ev
		UNION ALL SELECT 1, 0, 0, '', '', '', '', '', written_ms FROM held
		UNION ALL SELECT 2, trimmed_tx, trimmed_seq, '', '', '', '', '', 0 FROM log_trim
		UNION ALL SELECT 3, tx, seq, kind, subject, owner, ref, note, at_ms FROM change_log WHERE tx = $1 AND seq = $2
		ORDER BY 1, 2, 3`, int64(after.Tx), int64(after.Seq), limit)
	if err != nil {
		return changelog.Tail{}, unavailable(fmt.Errorf("postgres: read the change log: %w", err))
	}
	defer rows.Close()
	var t changelog.Tail
	for rows.Next() {
		var (
			part        int
			tx, seq, at int64
			kind        string
			e           changelog.Event
		)
		if err := rows.Scan(&part, &tx, &seq, &kind, &e.ID, &e.Owner, &e.Ref, &e.Note, &at); err != nil {
			return changelog.Tail{}, unavailable(fmt.Errorf("postgres: read the change log: %w", err))
		}
		switch part {
		case 0, 3:
			e.Pos, e.Kind, e.At = changelog.Position{Tx: uint64(tx), Seq: uint64(seq)}, changelog.Kind(kind), fromMS(at)
			if part == 3 {
				t.At = e
				continue
			}
			t.Events = append(t.Events, e)
		case 1:
			t.Held = fromMS(at)
		case 2:
			t.Trimmed = changelog.Position{Tx: uint64(tx), Seq: uint64(seq)}
		}
	}
	if err := rows.Err(); err != nil {
		return changelog.Tail{}, unavailable(fmt.Errorf("postgres: read the change log: %w", err))
	}
	return t, nil
}

// LogState implements changelog.Log in one statement (logBounds).
func (s *DB) LogState(ctx context.Context) (changelog.State, error) {
	var (
		st changelog.State
		b  bounds
	)
	if err := s.readRow(ctx, logBounds, nil, b.dest()...); err != nil {
		return changelog.State{}, fmt.Errorf("postgres: read the change log's state: %w", err)
	}
	err := b.read(&st.Epoch, &st.First, &st.Last, &st.Trimmed)
	return st, err
}

// boundsOf is the query of a log's bounds: the epoch and three positions,
// each the (tx, seq) of the one row a query of its selects (null when it
// selects none): one row, whatever the log holds.
func boundsOf(first, last, trimmed string) string {
	q := "SELECT (SELECT value FROM kfa_meta WHERE key = 'feed_epoch') AS epoch," +
		" b0.tx AS first_tx, b0.seq AS first_seq, b1.tx AS last_tx, b1.seq AS last_seq, b2.tx AS trimmed_tx, b2.seq AS trimmed_seq" +
		" FROM (SELECT) one"
	for i, b := range []string{first, last, trimmed} {
		q += fmt.Sprintf(" LEFT JOIN LATERAL (%s) b%d(tx, seq) ON true", b, i)
	}
	return q
}

// logBounds is the query of the change log's bounds (LogState).
var logBounds = boundsOf("SELECT tx, seq FROM change_log ORDER BY tx, seq LIMIT 1",
	"SELECT tx, seq FROM change_log WHERE "+readable+" ORDER BY tx DESC, seq DESC LIMIT 1",
	"SELECT trimmed_tx, trimmed_seq FROM log_trim")

// bounds is a row of boundsOf, as scanned.
type bounds struct {
	epoch *string
	pos   [6]*int64
}

// dest is where a row of boundsOf scans into.
func (b *bounds) dest() []any {
	return []any{&b.epoch, &b.pos[0], &b.pos[1], &b.pos[2], &b.pos[3], &b.pos[4], &b.pos[5]}
}

// read hands out what b holds (zero positions for none).
func (b *bounds) read(epoch *string, first, last, trimmed *changelog.Position) error {
	if b.epoch == nil {
		return errors.New("postgres: the database has no feed epoch")
	}
	*epoch = *b.epoch
	for i, p := range []*changelog.Position{first, last, trimmed} {
		*p = changelog.Position{}
		if b.pos[2*i] != nil {
			*p = changelog.Position{Tx: uint64(*b.pos[2*i]), Seq: uint64(*b.pos[2*i+1])}
		}
	}
	return nil
}

// WakeLog implements changelog.Log: woken after this process's writes
// commit and when another process's NOTIFY arrives.
func (s *DB) WakeLog() (<-chan struct{}, func()) { return s.logWake.Subscribe() }

var (
	_ changelog.Log       = (*DB)(nil)
	_ changelog.Cursors   = (*DB)(nil)
	_ changelog.Trimmable = (*DB)(nil)
)

// SaveCursor implements changelog.Cursors in one statement, outside the
// write path: saving a cursor is not a change the followers hear of.
func (s *DB) SaveCursor(ctx context.Context, name string, pos changelog.Position, at time.Time) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO log_cursors (name, tx, seq, updated_ms) VALUES ($1, $2, $3, $4)
		ON CONFLICT (name) DO UPDATE SET tx = excluded.tx, seq = excluded.seq, updated_ms = excluded.updated_ms`,
		name, int64(pos.Tx), int64(pos.Seq), at.UnixMilli())
	if err != nil {
		return unavailable(fmt.Errorf("postgres: save the cursor %s: %w", name, err))
	}
	return nil
}

// ListCursors implements changelog.Cursors.
func (s *DB) ListCursors(ctx context.Context) ([]changelog.Cursor, error) {
	rows, err := s.pool.Query(ctx, "SELECT name, tx, seq, updated_ms FROM log_cursors ORDER BY name")
	if err != nil {
		return nil, unavailable(fmt.Errorf("postgres: list the cursors: %w", err))
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (changelog.Cursor, error) {
		var (
			c           changelog.Cursor
			tx, seq, at int64
		)
		err := row.Scan(&c.Name, &tx, &seq, &at)
		c.Pos, c.Updated = changelog.Position{Tx: uint64(tx), Seq: uint64(seq)}, fromMS(at)
		return c, err
	})
	if err != nil {
		return nil, unavailable(fmt.Errorf("postgres: list the cursors: %w", err))
	}
	return out, nil
}

// committed runs after every write transaction that committed: it wakes
// this process's followers and asks the notifier to tell the others.
func (s *DB) committed() {
	s.logWake.Notify()
	select {
	case s.poke <- struct{}{}:
	default:
	}
}

// Reconnect backoff of the log's listener. After a failover the
// listener finds the new primary within listenRetryMax of its promotion.
const (
	listenRetryMin = 100 * time.Millisecond
	listenRetryMax = 2 * time.Second
)

// listenIdle is how long the listener waits for a notification before it
// checks its connection with a ping: a server that vanished without
// closing it (a machine down, a network cut) is noticed within about
// this long, not when the operating system gives up on the connection.
const listenIdle = 5 * time.Second

// notifyMinGap bounds how often one process sends NOTIFY: commits that
// come closer together share one.
const notifyMinGap = 5 * time.Millisecond

// notifyLoop sends one NOTIFY on logChannel per burst of commits until
// ctx ends.
func (s *DB) notifyLoop(ctx context.Context, done chan<- struct{}) {
	defer close(done)
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.poke:
		}
		err := s.counted(ctx, TripsNotify, func(conn *pgxpool.Conn) error {
			_, err := conn.Exec(ctx, "SELECT pg_notify($1, '')", logChannel)
			return err
		})
		if err != nil && ctx.Err() == nil {
			// The other processes' followers still read on their timers.
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(notifyMinGap):
		}
	}
}

// logListenLoop LISTENs on logChannel and wakes this process's followers
// at each notification, and after every (re)connection, since
// notifications sent while it was not connected are lost.
func (s *DB) logListenLoop(ctx context.Context, ready chan<- struct{}, done chan<- struct{}) {
	defer close(done)
	backoff := listenRetryMin
	once := false
	for ctx.Err() == nil {
		func() {
			conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig)
			if err != nil {
				return
			}
			defer func() { _ = conn.Close(context.Background()) }()
			if _, err := conn.Exec(ctx, "LISTEN "+logChannel); err != nil {
				return
			}
			if !once {
				once = true
				close(ready)
			}
			backoff = listenRetryMin
			s.logWake.Notify()
			for {
				wctx, cancel := context.WithTimeout(ctx, listenIdle)
				_, err := conn.WaitForNotification(wctx)
				cancel()
				switch {
				case err == nil:
					s.logWake.Notify()
				case ctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded):
					return
				default: // idle: is the server still there?
					pctx, cancel := context.WithTimeout(ctx, pingTimeout)
					err := conn.Ping(pctx)
					cancel()
					if err != nil {
						return
					}
				}
			}
		}()
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, listenRetryMax)
	}
}
