package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/tasks"
)

// Task transitions reach every process: the transaction that makes one
// sends NOTIFY on channel taskChannel (delivered when it commits, dropped
// when it rolls back) with "<process id>:<task id>", and every process
// LISTENs and hands the tasks other processes moved to its OnTaskChange
// (its own it hands over itself, after commit).
const taskChannel = "kfa_task_changes"

// Reconnect backoff of the listener.
const (
	listenRetryMin = 100 * time.Millisecond
	listenRetryMax = 5 * time.Second
)

// catchUpSlack widens the window of transitions re-read after a
// reconnect, for clocks of processes that differ a little.
const catchUpSlack = 5 * time.Second

// listener is the LISTEN loop of one process.
type listener struct {
	db     *DB
	url    string
	cancel context.CancelFunc
	done   chan struct{}
	// ready is closed once the first LISTEN is in place.
	ready     chan struct{}
	readyOnce sync.Once
}

func newProcessID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// notifyTasks sends the NOTIFY of each moved task in tx.
func (s *DB) notifyTasks(ctx context.Context, tx execer, ts []tasks.Task) error {
	for _, t := range ts {
		if _, err := tx.Exec(ctx, "SELECT pg_notify($1, $2)", taskChannel, s.procID+":"+t.ID); err != nil {
			return err
		}
	}
	return nil
}

// startListener starts the LISTEN loop and waits until it listens (or
// ctx ends), so that no transition committed after Open is missed.
func (s *DB) startListener(ctx context.Context, url string) error {
	lctx, cancel := context.WithCancel(context.Background())
	l := &listener{db: s, url: url, cancel: cancel, done: make(chan struct{}), ready: make(chan struct{})}
	s.listen = l
	go l.run(lctx)
	select {
	case <-l.ready:
		return nil
	case <-ctx.Done():
		l.stop()
		return ctx.Err()
	}
}

func (l *listener) stop() {
	l.cancel()
	<-l.done
}

func (l *listener) run(ctx context.Context) {
	defer close(l.done)
	backoff := listenRetryMin
	var lost time.Time // when the last listening connection was lost; zero before
	for ctx.Err() == nil {
		listened, _ := l.session(ctx, lost)
		if ctx.Err() != nil {
			return
		}
		if listened {
			// Lost now: the next session catches up from here, however
			// many tries it takes to connect again.
			lost, backoff = time.Now(), listenRetryMin
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, listenRetryMax)
	}
}

// session is one connection: LISTEN, catch up with what happened since
// the last connection was lost (lost; zero for the first), then hand on
// notifications until the connection fails or ctx ends. listened says
// whether it got as far as listening.
func (l *listener) session(ctx context.Context, lost time.Time) (listened bool, err error) {
	conn, err := pgx.Connect(ctx, l.url)
	if err != nil {
		return false, err
	}
	defer func() { _ = conn.Close(context.Background()) }()
	if _, err := conn.Exec(ctx, "LISTEN "+taskChannel); err != nil {
		return false, err
	}
	l.readyOnce.Do(func() { close(l.ready) })
	if !lost.IsZero() {
		if err := l.catchUp(ctx, lost.Add(-catchUpSlack)); err != nil {
			return true, err
		}
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return true, err
		}
		proc, id, ok := strings.Cut(n.Payload, ":")
		if !ok || proc == l.db.procID {
			continue
		}
		t, err := l.db.GetTask(ctx, "", id)
		if errors.Is(err, tasks.ErrNotFound) {
			continue
		}
		if err != nil {
			return true, err
		}
		l.db.notify([]tasks.Task{t})
	}
}

// catchUp hands on every task that left WORKING since from: the
// notifications sent while the listener was not connected are lost.
func (l *listener) catchUp(ctx context.Context, from time.Time) error {
	rows, err := l.db.pool.Query(ctx, "SELECT id FROM tasks WHERE status_ms >= $1 AND state <> 'TASK_STATE_WORKING' ORDER BY status_ms, id",
		from.UnixMilli())
	if err != nil {
		return err
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	for _, id := range ids {
		t, err := l.db.GetTask(ctx, "", id)
		if err != nil {
			return err
		}
		l.db.notify([]tasks.Task{t})
	}
	return nil
}
