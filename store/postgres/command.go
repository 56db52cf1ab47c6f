package postgres

import (
	"context"
	"crypto/tls"
	"net"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// A command's transaction, in two round trips:
//
//  1. BEGIN, then every load of the command (the locks first, in the
//     order agent, discussion, tasks, so that two commands never wait on
//     each other in opposite orders), as one pipelined batch;
//  2. the decision's writes, then COMMIT, as another.
//
// Between them the decision runs in this process, on what the loads
// returned: the store holds no rule of its own. A refusal, or a decision
// with nothing to write, ends the transaction with a ROLLBACK instead of
// the second batch: two round trips too. A statement pgx has not yet
// prepared on the connection costs one more round trip the first time
// the connection sends it.

// writes queues statements into a command's last batch. Exec answers at
// once, with an empty tag; a statement's error comes back when the batch
// is sent, and aborts the transaction.
type writes struct{ b *pgx.Batch }

// Exec implements execer by queuing.
func (w writes) Exec(_ context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	w.b.Queue(sql, args...)
	return pgconn.CommandTag{}, nil
}

// The commands, as RoundTrips names them.
const (
	CmdAsk           = "ask"
	CmdReply         = "reply"
	CmdCancel        = "cancel"
	CmdAck           = "ack"
	CmdPutConfig     = "push-config-put"
	CmdDeleteConfig  = "push-config-delete"
	CmdCreateSession = "session-create"
	CmdEndSession    = "session-end"
	CmdCreateAgent   = "agent-create"
	CmdRotateAgent   = "agent-rotate"
	CmdRevokeAgent   = "agent-revoke"
	// CmdLinkAgent and CmdProvisionAgent link an agent to an OAuth
	// identity, and create the agent of a new identity.
	CmdLinkAgent      = "agent-link"
	CmdProvisionAgent = "agent-provision"
	CmdAccept         = "accept"
	CmdFlag           = "flag"
	CmdModerate       = "moderate"

	// TripsRead and TripsWrite count the transactions that are not
	// commands: reads (one snapshot each), and the writes not yet made
	// commands (records, the outbox, signing keys).
	TripsRead  = "read"
	TripsWrite = "write"
	// TripsNotify counts the NOTIFYs that wake the other processes'
	// followers after commits (coalesced: at most one at a time).
	TripsNotify = "notify"
)

// RoundTrips is what the commands of one kind cost the database: how many
// ran (attempts rerun after a deadlock count again), the round trips
// they took in all, and the most one took. Round trips are counted on
// the connection itself (each flush of requests that waits for an
// answer), so they include pgx's statement preparation.
type RoundTrips struct {
	Commands uint64
	Trips    uint64
	Max      uint64
}

// PerCommand is Trips / Commands (0 before the first).
func (r RoundTrips) PerCommand() float64 {
	if r.Commands == 0 {
		return 0
	}
	return float64(r.Trips) / float64(r.Commands)
}

// tripStats counts one command kind's round trips.
type tripStats struct {
	commands, trips, max atomic.Uint64
}

func (t *tripStats) record(n uint64) {
	t.commands.Add(1)
	t.trips.Add(n)
	for m := t.max.Load(); n > m && !t.max.CompareAndSwap(m, n); m = t.max.Load() {
	}
}

// tripsOf returns the stats of command kind name, made on first use.
func (s *DB) tripsOf(name string) *tripStats {
	if v, ok := s.trips.Load(name); ok {
		return v.(*tripStats)
	}
	v, _ := s.trips.LoadOrStore(name, &tripStats{})
	return v.(*tripStats)
}

// RoundTrips returns what the commands of kind name (CmdAsk, ...) have
// cost since Open.
func (s *DB) RoundTrips(name string) RoundTrips {
	t := s.tripsOf(name)
	return RoundTrips{Commands: t.commands.Load(), Trips: t.trips.Load(), Max: t.max.Load()}
}

// tripConn counts the writes of one connection to the server. pgconn
// writes each group of messages it then waits on with one Write, so a
// Write is a round trip.
type tripConn struct {
	net.Conn
	writes atomic.Uint64
}

func (c *tripConn) Write(b []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(b)
}

// countTrips makes every connection of the pool count its round trips.
func countTrips(cfg *pgxpool.Config) {
	dial := cfg.ConnConfig.DialFunc
	cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &tripConn{Conn: c}, nil
	}
}

// connTrips is the round trips conn has made so far (0 when it does not
// count them).
func connTrips(conn *pgxpool.Conn) uint64 {
	nc := conn.Conn().PgConn().Conn()
	if t, ok := nc.(*tls.Conn); ok {
		nc = t.NetConn()
	}
	if c, ok := nc.(*tripConn); ok {
		return c.writes.Load()
	}
	return 0
}

// command runs one command named name: load queues the statements that
// load its state into the first batch, after BEGIN, each with a callback
// that keeps what it read (and resets what they fill, since a command
// that lost a deadlock runs again);
// decide runs on what they read and returns the writes to make, nil for
// none, or a refusal. It commits, and wakes the log's followers, only
// when there were writes.
func (s *DB) command(ctx context.Context, name string, load func(b *pgx.Batch), decide func() (write func(w execer) error, err error)) error {
	for attempt := 1; ; attempt++ {
		wrote, err := s.commandOnce(ctx, name, load, decide)
		if err == nil {
			if wrote {
				s.committed()
			}
			return nil
		}
		if _, refused := err.(refusal); refused {
			return err.(refusal).err
		}
		if attempt == maxAttempts || !retryable(err) {
			return unavailable(err)
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(attempt) * time.Millisecond):
		}
	}
}

// refusal carries a decision's error through commandOnce, so that it is
// never taken for a database error to retry.
type refusal struct{ err error }

func (r refusal) Error() string { return r.err.Error() }

// commandOnce is one attempt of command.
func (s *DB) commandOnce(ctx context.Context, name string, load func(b *pgx.Batch), decide func() (func(execer) error, error)) (wrote bool, err error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return false, err
	}
	// A connection left inside a transaction (a failure on the way) is
	// closed by the pool when released, which rolls it back.
	defer conn.Release()
	start := connTrips(conn)
	defer func() { s.tripsOf(name).record(connTrips(conn) - start) }()

	b := &pgx.Batch{}
	b.Queue("BEGIN")
	load(b)
	if err := conn.SendBatch(ctx, b).Close(); err != nil {
		rollback(ctx, conn)
		return false, err
	}
	write, err := decide()
	if err != nil || write == nil {
		rollback(ctx, conn)
		if err != nil {
			return false, refusal{err}
		}
		return false, nil
	}
	w := writes{b: &pgx.Batch{}}
	if err := write(w); err != nil {
		rollback(ctx, conn)
		return false, err
	}
	w.b.Queue("COMMIT")
	if err := conn.SendBatch(ctx, w.b).Close(); err != nil {
		rollback(ctx, conn)
		return false, err
	}
	return true, nil
}

// rollbackTimeout bounds the ROLLBACK of a command that ends without
// committing.
const rollbackTimeout = 5 * time.Second

// rollback ends conn's transaction. If it cannot, the pool closes the
// connection when it is released (it is not idle), which ends the
// transaction on the server as well.
func rollback(ctx context.Context, conn *pgxpool.Conn) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
	defer cancel()
	_, _ = conn.Exec(ctx, "ROLLBACK")
}
