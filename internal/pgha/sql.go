package pgha

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Exec runs one statement on n's postgres database, as postgres.
func (n *Node) Exec(ctx context.Context, sql string, args ...any) error {
	conn, err := pgx.Connect(ctx, n.URL("postgres"))
	if err != nil {
		return fmt.Errorf("pgha: connect to %s: %w", n.Name, err)
	}
	defer func() { _ = conn.Close(context.Background()) }()
	if _, err := conn.Exec(ctx, sql, args...); err != nil {
		return fmt.Errorf("pgha: %s on %s: %w", sql, n.Name, err)
	}
	return nil
}

// QueryRow runs one query on n's database db and scans its one row.
func (n *Node) QueryRow(ctx context.Context, db, sql string, args []any, dest ...any) error {
	conn, err := pgx.Connect(ctx, n.URL(db))
	if err != nil {
		return fmt.Errorf("pgha: connect to %s: %w", n.Name, err)
	}
	defer func() { _ = conn.Close(context.Background()) }()
	return conn.QueryRow(ctx, sql, args...).Scan(dest...)
}

// set changes a setting of n (ALTER SYSTEM) and reloads its configuration.
func (n *Node) set(ctx context.Context, name, value string) error {
	stmt := "ALTER SYSTEM RESET " + name
	if value != "" {
		stmt = fmt.Sprintf("ALTER SYSTEM SET %s = '%s'", name, value)
	}
	if err := n.Exec(ctx, stmt); err != nil {
		return err
	}
	return n.Exec(ctx, "SELECT pg_reload_conf()")
}

// SetSync makes the primary n's standbys synchronous (synchronous_standby_names
// '*': a commit waits until a standby has flushed it), or asynchronous
// again. On, it waits until a standby is synchronous.
func (n *Node) SetSync(ctx context.Context, on bool) error {
	v := ""
	if on {
		v = "*"
	}
	if err := n.set(ctx, "synchronous_standby_names", v); err != nil {
		return err
	}
	if !on {
		return nil
	}
	return n.wait(ctx, "a synchronous standby", func(ctx context.Context) (bool, error) {
		var k int
		err := n.QueryRow(ctx, "postgres", "SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync'", nil, &k)
		return k > 0, err
	})
}

// WaitStandby waits until the primary n sees the standby name streaming
// (and, with sync, as its synchronous standby).
func (n *Node) WaitStandby(ctx context.Context, name string, sync bool) error {
	return n.wait(ctx, "standby "+name+" streaming", func(ctx context.Context) (bool, error) {
		var state, syncState string
		err := n.QueryRow(ctx, "postgres", "SELECT state, sync_state FROM pg_stat_replication WHERE application_name = $1",
			[]any{name}, &state, &syncState)
		if errors.Is(err, pgx.ErrNoRows) {
			return false, nil
		}
		return state == "streaming" && (!sync || syncState == "sync"), err
	})
}

// WaitReplayed waits until the standby name has replayed everything the
// primary n has written so far.
func (n *Node) WaitReplayed(ctx context.Context, name string) error {
	var lsn string
	if err := n.QueryRow(ctx, "postgres", "SELECT pg_current_wal_lsn()::text", nil, &lsn); err != nil {
		return err
	}
	return n.wait(ctx, "standby "+name+" to replay "+lsn, func(ctx context.Context) (bool, error) {
		var done bool
		var at *string
		err := n.QueryRow(ctx, "postgres",
			"SELECT coalesce(replay_lsn >= $2::pg_lsn, false), replay_lsn::text FROM pg_stat_replication WHERE application_name = $1",
			[]any{name, lsn}, &done, &at)
		if errors.Is(err, pgx.ErrNoRows) {
			return false, errors.New("not streaming")
		}
		if err == nil && !done {
			err = fmt.Errorf("replayed up to %s", deref(at))
		}
		return done, err
	})
}

// Detach stops the standby n from receiving WAL (its primary_conninfo
// emptied): it stays in recovery, and what its primary commits from now
// on reaches it no more. A promotion then loses it: what an asynchronous
// standby that fell behind loses.
func (n *Node) Detach(ctx context.Context) error {
	if err := n.set(ctx, "primary_conninfo", ""); err != nil {
		return err
	}
	return n.wait(ctx, n.Name+"'s walreceiver to stop", func(ctx context.Context) (bool, error) {
		var k int
		err := n.QueryRow(ctx, "postgres", "SELECT count(*) FROM pg_stat_wal_receiver", nil, &k)
		return k == 0, err
	})
}

// wait polls cond every 20 ms until it holds, failing after a minute or
// when ctx ends. A failed query counts as not yet (the server may be
// starting).
func (n *Node) wait(ctx context.Context, what string, cond func(ctx context.Context) (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var last error
	for {
		ok, err := cond(ctx)
		if ok {
			return nil
		}
		if err != nil {
			last = err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("pgha: waiting for %s on %s: %w (last error: %v)", what, n.Name, ctx.Err(), last)
		case <-time.After(20 * time.Millisecond): // polling another process
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return "nothing"
	}
	return *s
}
