package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ReplicationCheck is how often the store reads the primary's standbys
// (pg_stat_replication) in the background: one statement a second on one
// pooled connection, whatever the load, so that no request pays a round
// trip for it. With Options.RequireSyncReplica, writes are refused within
// about this long after the last synchronous standby went away.
const ReplicationCheck = time.Second

// Replication is what the primary says of its standbys.
type Replication struct {
	// Checked is when the primary answered this; zero before the first
	// check.
	Checked time.Time
	// Err is the last check's failure (the database did not answer);
	// the fields below are then those of the last check that worked.
	Err error
	// Standbys streaming WAL from the primary, and how many of them are
	// synchronous (sync or quorum).
	Standbys, Sync int
	// Hidden is how many standbys the database role may not see the
	// state of (pg_stat_replication shows their details to superusers
	// and members of pg_read_all_stats, which pg_monitor includes).
	Hidden int
	// SyncNames is synchronous_standby_names; SyncCommit is
	// synchronous_commit as kfa's sessions have it.
	SyncNames, SyncCommit string
}

// waitsForStandby tells whether synchronous_commit makes a commit wait for
// a synchronous standby: on, remote_write and remote_apply do; local and
// off do not.
func (r Replication) waitsForStandby() bool {
	switch r.SyncCommit {
	case "on", "remote_write", "remote_apply":
		return true
	}
	return false
}

// Safe tells whether a commit acknowledged now survives the loss of the
// primary: a synchronous standby streams, and kfa's commits wait for it.
func (r Replication) Safe() bool {
	return r.Err == nil && !r.Checked.IsZero() && r.Sync > 0 && r.waitsForStandby()
}

// Why says, for an operator and for /readyz, why Safe is false ("" when
// it is true). It names no host, user or port.
func (r Replication) Why() string {
	switch {
	case r.Safe():
		return ""
	case r.Err != nil || r.Checked.IsZero():
		return "database unreachable"
	case r.Hidden > 0 && r.Standbys == 0:
		return fmt.Sprintf("cannot see whether the %d standbys are synchronous (grant pg_monitor to kfa's database role)", r.Hidden)
	case r.Standbys == 0:
		return "no standby is streaming from the primary"
	case r.Sync == 0:
		return fmt.Sprintf("no synchronous standby: %d asynchronous (synchronous_standby_names is %q)", r.Standbys, r.SyncNames)
	default:
		return fmt.Sprintf("synchronous_commit is %s: commits do not wait for the synchronous standby", r.SyncCommit)
	}
}

// replicationQuery reads the primary's standbys in one statement.
const replicationQuery = `SELECT current_setting('synchronous_commit'), current_setting('synchronous_standby_names'),
	count(*) FILTER (WHERE state = 'streaming'),
	count(*) FILTER (WHERE state = 'streaming' AND sync_state IN ('sync', 'quorum')),
	count(*) FILTER (WHERE state IS NULL)
	FROM pg_stat_replication`

// replication watches the primary's standbys (see ReplicationCheck).
type replication struct {
	mu      sync.Mutex
	last    Replication
	changed func(old, now Replication) // called outside mu, from the watcher
	require bool                       // refuse writes while !last.Safe()
}

// checkReplication reads the primary's standbys now.
func (s *DB) checkReplication(ctx context.Context) Replication {
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	var r Replication
	err := s.pool.QueryRow(ctx, replicationQuery).Scan(&r.SyncCommit, &r.SyncNames, &r.Standbys, &r.Sync, &r.Hidden)
	s.repl.mu.Lock()
	defer s.repl.mu.Unlock()
	if err != nil {
		r = s.repl.last
		r.Err = unavailable(err)
	} else {
		r.Checked = time.Now()
	}
	s.repl.last = r
	return r
}

// Replication returns the last check of the primary's standbys.
func (s *DB) Replication() Replication {
	s.repl.mu.Lock()
	defer s.repl.mu.Unlock()
	return s.repl.last
}

// OnReplicationChange calls f, from the store's watcher, whenever a check
// finds the replication safe where it was not, or the other way round
// (Replication.Safe), or finds another reason why not. f must not block.
func (s *DB) OnReplicationChange(f func(old, now Replication)) {
	s.repl.mu.Lock()
	defer s.repl.mu.Unlock()
	s.repl.changed = f
}

// watchReplication checks the standbys every ReplicationCheck until ctx
// ends.
func (s *DB) watchReplication(ctx context.Context, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(ReplicationCheck)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		old := s.Replication()
		now := s.checkReplication(ctx)
		if ctx.Err() != nil {
			return
		}
		s.repl.mu.Lock()
		f := s.repl.changed
		s.repl.mu.Unlock()
		if f != nil && old.Why() != now.Why() {
			f(old, now)
		}
	}
}

// ErrNoSyncReplica refuses a write under Options.RequireSyncReplica while
// the primary has no synchronous standby; its text says why.
var ErrNoSyncReplica = errors.New("postgres: writes refused (--require-sync-replica)")

// noSyncError is ErrNoSyncReplica with the reason; it is an unavailable
// error (503: it ends when a synchronous standby is back).
type noSyncError struct{ why string }

func (e *noSyncError) Error() string     { return ErrNoSyncReplica.Error() + ": " + e.why }
func (e *noSyncError) Is(t error) bool   { return t == ErrNoSyncReplica }
func (e *noSyncError) Unavailable() bool { return true }

// WritesRefused says why writes are refused, as a client may read it: it
// names no host, user or port.
func (e *noSyncError) WritesRefused() string { return e.why }

// writable refuses a write, before it commits, when the store requires a
// synchronous standby and the last check found none. It reads memory
// only.
func (s *DB) writable() error {
	if !s.repl.require {
		return nil
	}
	r := s.Replication()
	if r.Safe() {
		return nil
	}
	return &noSyncError{why: r.Why()}
}
