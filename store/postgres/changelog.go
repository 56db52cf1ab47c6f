package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/changelog"
)

// The change log (changelog.Log) in the change_log table; see
// migrations/0004_change_log.sql for why positions are (transaction id,
// sequence) and why a reader never misses an event that commits late.
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
	ats := make([]int64, len(evs))
	for i, e := range evs {
		kinds[i], subjects[i], owners[i], refs[i], ats[i] = string(e.Kind), e.ID, e.Owner, e.Ref, e.At.UnixMilli()
	}
	_, err := tx.Exec(ctx, `INSERT INTO change_log (kind, subject, owner, ref, at_ms, written_ms)
		SELECT k, s, o, r, a, $6
		FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[]) WITH ORDINALITY AS e(k, s, o, r, a, n)
		ORDER BY n`, kinds, subjects, owners, refs, ats, now.UnixMilli())
	return err
}

// readableLogHorizon is the condition on tx that makes an event final:
// its transaction is older than every transaction still running.
const readableLogHorizon = "tx < pg_snapshot_xmin(pg_current_snapshot())::text::bigint"

// ReadLog implements changelog.Log.
func (s *DB) ReadLog(ctx context.Context, after changelog.Position, limit int) ([]changelog.Event, error) {
	rows, err := s.pool.Query(ctx, `SELECT tx, seq, kind, subject, owner, ref, at_ms FROM change_log
		WHERE (tx, seq) > ($1, $2) AND `+readableLogHorizon+`
		ORDER BY tx, seq LIMIT $3`, int64(after.Tx), int64(after.Seq), limit)
	if err != nil {
		return nil, unavailable(fmt.Errorf("postgres: read the change log: %w", err))
	}
	evs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (changelog.Event, error) {
		var (
			e       changelog.Event
			tx, seq int64
			kind    string
			at      int64
		)
		err := row.Scan(&tx, &seq, &kind, &e.ID, &e.Owner, &e.Ref, &at)
		e.Pos, e.Kind, e.At = changelog.Position{Tx: uint64(tx), Seq: uint64(seq)}, changelog.Kind(kind), fromMS(at)
		return e, err
	})
	if err != nil {
		return nil, unavailable(fmt.Errorf("postgres: read the change log: %w", err))
	}
	return evs, nil
}

// LogState implements changelog.Log.
func (s *DB) LogState(ctx context.Context) (changelog.State, error) {
	var st changelog.State
	err := s.read(ctx, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, "SELECT value FROM kfa_meta WHERE key = 'feed_epoch'").Scan(&st.Epoch); err != nil {
			return err
		}
		var err error
		if st.First, err = logPosition(ctx, tx, "SELECT tx, seq FROM change_log ORDER BY tx, seq LIMIT 1"); err != nil {
			return err
		}
		if st.Last, err = logPosition(ctx, tx, "SELECT tx, seq FROM change_log WHERE "+readableLogHorizon+
			" ORDER BY tx DESC, seq DESC LIMIT 1"); err != nil {
			return err
		}
		var trimmed string
		err = tx.QueryRow(ctx, "SELECT value FROM kfa_meta WHERE key = 'log_trimmed'").Scan(&trimmed)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return nil
		case err != nil:
			return err
		}
		st.Trimmed, err = changelog.ParsePosition(trimmed)
		return err
	})
	if err != nil {
		return changelog.State{}, fmt.Errorf("postgres: read the change log's state: %w", err)
	}
	return st, nil
}

// logPosition reads the (tx, seq) of one log row; zero when there is
// none.
func logPosition(ctx context.Context, tx pgx.Tx, q string) (changelog.Position, error) {
	var t, seq int64
	err := tx.QueryRow(ctx, q).Scan(&t, &seq)
	if errors.Is(err, pgx.ErrNoRows) {
		return changelog.Position{}, nil
	}
	return changelog.Position{Tx: uint64(t), Seq: uint64(seq)}, err
}

// WakeLog implements changelog.Log: woken after this process's writes
// commit and when another process's NOTIFY arrives.
func (s *DB) WakeLog() (<-chan struct{}, func()) { return s.logWake.Subscribe() }

var _ changelog.Log = (*DB)(nil)

// committed runs after every write transaction that committed: it wakes
// this process's followers and asks the notifier to tell the others.
func (s *DB) committed() {
	s.logWake.Notify()
	select {
	case s.poke <- struct{}{}:
	default:
	}
}

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
		if _, err := s.pool.Exec(ctx, "SELECT pg_notify($1, '')", logChannel); err != nil && ctx.Err() == nil {
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
func (s *DB) logListenLoop(ctx context.Context, url string, ready chan<- struct{}, done chan<- struct{}) {
	defer close(done)
	backoff := listenRetryMin
	once := false
	for ctx.Err() == nil {
		func() {
			conn, err := pgx.Connect(ctx, url)
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
				if _, err := conn.WaitForNotification(ctx); err != nil {
					return
				}
				s.logWake.Notify()
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
