package postgres

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/kfa-project/kfa/commands"
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

// The commands, as RoundTrips names them (package commands names them).
const (
	CmdAsk           = commands.CmdAsk
	CmdReply         = commands.CmdReply
	CmdCancel        = commands.CmdCancel
	CmdAck           = commands.CmdAck
	CmdPutConfig     = commands.CmdPutConfig
	CmdDeleteConfig  = commands.CmdDeleteConfig
	CmdCreateSession = commands.CmdCreateSession
	CmdEndSession    = commands.CmdEndSession
	CmdCreateAgent   = commands.CmdCreateAgent
	CmdRotateAgent   = commands.CmdRotateAgent
	CmdRevokeAgent   = commands.CmdRevokeAgent
	// CmdLinkAgent and CmdProvisionAgent link an agent to an OAuth
	// identity, and create the agent of a new identity.
	CmdLinkAgent      = commands.CmdLinkAgent
	CmdProvisionAgent = commands.CmdProvisionAgent
	CmdAccept         = commands.CmdAccept
	CmdFlag           = commands.CmdFlag
	CmdModerate       = commands.CmdModerate

	// TripsRead counts the reads (one round trip each); TripsWrite the
	// writes that are not commands, of which none is left: every write
	// runs as a command (Engine.Run), counted under its name.
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

// pending is the batch of a command's loads being queued. flush sends
// it (one round trip) and starts the next; the command flushes once its
// loads are queued, and a load plan that needs what a load read before it
// can queue the next (record.Loader.Flush) flushes earlier.
type pending struct {
	ctx  context.Context
	conn *pgxpool.Conn
	b    *pgx.Batch
	sent bool // a batch went (the transaction began)
}

// flush sends the queued statements, if any, and waits for their answers.
func (p *pending) flush() error {
	if p.b.Len() == 0 {
		return nil
	}
	err := p.conn.SendBatch(p.ctx, p.b).Close()
	p.b, p.sent = &pgx.Batch{}, true
	return err
}

// commandFlush is command with a load that may flush.
func (s *DB) commandFlush(ctx context.Context, name string, load func(p *pending) error, decide func() (func(execer) error, error)) error {
	for attempt := 1; ; attempt++ {
		wrote, err := s.commandOnce(ctx, name, load, decide)
		if err == nil {
			if wrote {
				s.committed()
			}
			return nil
		}
		var r refusal
		if errors.As(err, &r) {
			return r.err
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
func (s *DB) commandOnce(ctx context.Context, name string, load func(p *pending) error, decide func() (func(execer) error, error)) (wrote bool, err error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return false, err
	}
	// A connection left inside a transaction (a failure on the way) is
	// closed by the pool when released, which rolls it back.
	defer conn.Release()
	start := connTrips(conn)
	defer func() { s.tripsOf(name).record(connTrips(conn) - start) }()

	p := &pending{ctx: ctx, conn: conn, b: &pgx.Batch{}}
	p.b.Queue("BEGIN")
	if err := load(p); err != nil {
		if p.sent {
			rollback(ctx, conn)
		}
		return false, err
	}
	if err := p.flush(); err != nil {
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
