package postgres

import (
	"context"
	"errors"
	"hash/fnv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/push"
)

// destLockClass is the first key of every destination lock (the
// two-int4 form of the advisory lock functions, which never meets the
// one-bigint keys of the migration and signing locks); the second is a
// hash of the destination. Two destinations that hash alike share a lock:
// they are then sent to one at a time, which is safe.
const destLockClass int32 = 0x6b667064 // "kfpd"

// destLockPing is how often a session holding locks is checked, so that a
// broken session (whose locks the database released) is noticed, and
// Held turns false, within about this long.
const destLockPing = time.Second

// DestinationLocks implements push.DestinationLocker: session advisory
// locks on a connection of their own, outside the pool. A lock needs no
// open transaction (which would hold back every reader of the change
// log), is never written to disk, and ends with its session: the locks of
// a killed process are free at once, not after a lease.
func (s *DB) DestinationLocks(ctx context.Context) (push.DestinationLocks, error) {
	l := &destLocks{cfg: s.pool.Config().ConnConfig, held: map[string]uint64{}, stop: make(chan struct{}), done: make(chan struct{})}
	l.mu.Lock()
	err := l.connect(ctx)
	l.mu.Unlock()
	if err != nil {
		return nil, unavailable(err)
	}
	go l.pinger()
	return l, nil
}

var _ push.DestinationLocker = (*DB)(nil)

type destLocks struct {
	cfg *pgx.ConnConfig

	mu   sync.Mutex // serializes the use of conn
	conn *pgx.Conn  // nil after it broke, until the next TryLock
	gen  uint64     // the session's number: each connect starts the next

	hmu  sync.Mutex
	held map[string]uint64 // destination -> the session that took its lock

	stop, done chan struct{}
	once       sync.Once
}

// connect opens the session; l.mu is held.
func (l *destLocks) connect(ctx context.Context) error {
	conn, err := pgx.ConnectConfig(ctx, l.cfg)
	if err != nil {
		return err
	}
	l.conn = conn
	l.hmu.Lock()
	l.gen++
	l.hmu.Unlock()
	return nil
}

// broke drops a session an error left in doubt: the database releases
// its locks when it ends, so none of them is held any more. l.mu is held.
func (l *destLocks) broke() {
	if l.conn != nil {
		_ = l.conn.Close(context.Background())
		l.conn = nil
	}
	l.hmu.Lock()
	clear(l.held)
	l.hmu.Unlock()
}

func destLockKey(dest string) int32 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(dest))
	return int32(h.Sum32())
}

// TryLock implements push.DestinationLocks.
func (l *destLocks) TryLock(ctx context.Context, dest string) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn == nil {
		if err := l.connect(ctx); err != nil {
			return false, unavailable(err)
		}
	}
	var ok bool
	if err := l.conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1, $2)", destLockClass, destLockKey(dest)).Scan(&ok); err != nil {
		l.broke()
		return false, unavailable(err)
	}
	if ok {
		l.hmu.Lock()
		l.held[dest] = l.gen
		l.hmu.Unlock()
	}
	return ok, nil
}

// Held implements push.DestinationLocks.
func (l *destLocks) Held(dest string) bool {
	l.hmu.Lock()
	defer l.hmu.Unlock()
	g, ok := l.held[dest]
	return ok && g == l.gen
}

// Unlock implements push.DestinationLocks. A lock of a session that
// broke is gone already.
func (l *destLocks) Unlock(ctx context.Context, dest string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.hmu.Lock()
	g, ok := l.held[dest]
	delete(l.held, dest)
	live := ok && g == l.gen && l.conn != nil
	l.hmu.Unlock()
	if !live {
		return nil
	}
	if _, err := l.conn.Exec(ctx, "SELECT pg_advisory_unlock($1, $2)", destLockClass, destLockKey(dest)); err != nil {
		l.broke()
		return unavailable(err)
	}
	return nil
}

// pinger checks the session while it holds locks.
func (l *destLocks) pinger() {
	defer close(l.done)
	t := time.NewTicker(destLockPing)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		l.hmu.Lock()
		holding := len(l.held) > 0
		l.hmu.Unlock()
		if !holding {
			continue
		}
		l.mu.Lock()
		if l.conn != nil {
			ctx, cancel := context.WithTimeout(context.Background(), destLockPing)
			if err := l.conn.Ping(ctx); err != nil {
				l.broke()
			}
			cancel()
		}
		l.mu.Unlock()
	}
}

// Close implements push.DestinationLocks.
func (l *destLocks) Close() error {
	var err error
	l.once.Do(func() {
		close(l.stop)
		<-l.done
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.conn != nil {
			// Unlock before closing: a closed connection's backend ends
			// (and frees its locks) a moment after the close returns.
			ctx, cancel := context.WithTimeout(context.Background(), destLockPing)
			_, _ = l.conn.Exec(ctx, "SELECT pg_advisory_unlock_all()")
			cancel()
			err = l.conn.Close(context.Background())
			l.conn = nil
		}
		l.hmu.Lock()
		clear(l.held)
		l.hmu.Unlock()
	})
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
