package postgres

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"sync/atomic"
	"syscall"
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
	// CmdVote and CmdVerify are the trust signals.
	CmdVote   = commands.CmdVote
	CmdVerify = commands.CmdVerify

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
// Write is a round trip. It also tells lost when the server ends the
// connection under it.
type tripConn struct {
	net.Conn
	writes atomic.Uint64
	lost   func()
	total  *atomic.Uint64 // the pool's, every connection's writes
}

func (c *tripConn) Write(b []byte) (int, error) {
	c.writes.Add(1)
	c.total.Add(1)
	n, err := c.Conn.Write(b)
	if err != nil && serverGone(err) {
		c.lost()
	}
	return n, err
}

func (c *tripConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if err != nil && serverGone(err) {
		c.lost()
	}
	return n, err
}

// serverGone tells whether a connection's read or write error says that
// the server closed or reset it (it stopped, crashed, or a failover cut
// it off), as opposed to a deadline pgx set to cancel a query.
func serverGone(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// wrapConns makes every connection of the pool (and those the store opens
// with the pool's settings: the listener's, the destination locks') count
// its round trips, each on its own and all of them in total, and call
// lost when the server ends it.
func wrapConns(cfg *pgxpool.Config, lost func(), total *atomic.Uint64) {
	dial := cfg.ConnConfig.DialFunc
	cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &tripConn{Conn: c, lost: lost, total: total}, nil
	}
}

// resetGap bounds how often a lost connection resets the pool.
const resetGap = time.Second

// resetPool closes every idle connection of the pool, and those in use
// as they come back, once a connection found the server gone: when the
// primary stops or a failover moves it, every connection to it is dead,
// and each would otherwise fail one request before the pool dropped it.
// New connections go to whichever host is the primary then.
func (s *DB) resetPool() {
	now := time.Now().UnixNano()
	last := s.lastReset.Load()
	if now-last < int64(resetGap) || !s.lastReset.CompareAndSwap(last, now) || s.pool == nil {
		return
	}
	// At once, before the request that met the dead connection fails, so
	// that the next request finds no idle connection to the old server
	// (Reset only takes the pool's lock: it closes the idle connections in
	// goroutines of its own, and those in use as they come back).
	s.pool.Reset()
}

// primaryOnly makes every connection go to a primary, whatever the URL
// says of target_session_attrs: kfa writes, so a standby (read-only) is
// never one of its connections, and a multi-host URL finds the primary
// among its hosts after a failover. A URL without connect_timeout gets
// defaultConnectTimeout per host, so that a host that does not answer at
// all (a machine down) holds a connection up that long at most before the
// next host is tried.
func primaryOnly(cfg *pgx.ConnConfig) {
	if cfg.ValidateConnect == nil {
		cfg.ValidateConnect = pgconn.ValidateConnectTargetSessionAttrsReadWrite
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = defaultConnectTimeout
	}
}

// defaultConnectTimeout is a connection's bound per host when the URL
// sets no connect_timeout.
const defaultConnectTimeout = 3 * time.Second

// AllRoundTrips is the round trips every connection of the pool has made
// since Open, whatever made them: commands, reads, the log's NOTIFY and
// statement preparation. On a pool of one connection that is otherwise
// idle, its growth over one call is exactly what that call cost.
func (s *DB) AllRoundTrips() uint64 { return s.allTrips.Load() }

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

// commandFlush is command with a load that may flush. A bookkeeping
// command (storage.Command.Bookkeeping) is never refused by
// Options.RequireSyncReplica.
func (s *DB) commandFlush(ctx context.Context, name string, bookkeeping bool, load func(p *pending) error, decide func() (func(execer) error, error)) error {
	for attempt := 1; ; attempt++ {
		wrote, err := s.commandOnce(ctx, name, bookkeeping, load, decide)
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
		if isCommitUnknown(err) {
			return err // it may have committed: never again
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
func (s *DB) commandOnce(ctx context.Context, name string, bookkeeping bool, load func(p *pending) error, decide func() (func(execer) error, error)) (wrote bool, err error) {
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
	if !bookkeeping {
		if err := s.writable(); err != nil {
			rollback(ctx, conn)
			return false, err
		}
	}
	w.b.Queue("COMMIT")
	if err := conn.SendBatch(ctx, w.b).Close(); err != nil {
		rollback(ctx, conn)
		return false, commitFailed(err)
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
