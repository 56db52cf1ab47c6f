package postgres

import (
	"context"
	"crypto/rand"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/commands"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationLock is the advisory lock key Open holds while it migrates.
const migrationLock int64 = 0x6b66615f6d6967 // "kfa_mig"

// DB is a kfa store in a PostgreSQL database. The commands are written
// once (package commands) and run on this store's primitives
// (engine.go); the reads are this store's own.
type DB struct {
	*commands.Commands
	pool   *pgxpool.Pool
	secret []byte

	logWake changelog.Signal // wakes this process's log followers
	poke    chan struct{}    // asks notifyLoop for a NOTIFY (capacity 1)
	stopLog context.CancelFunc
	logDone []chan struct{} // closed when notifyLoop and logListenLoop end

	trips    sync.Map       // command name -> *tripStats (RoundTrips)
	allTrips *atomic.Uint64 // every connection's round trips (AllRoundTrips)

	repl      replication
	lastReset atomic.Int64 // unix nanos of the pool's last Reset (resetPool)
}

// Options configure Open.
type Options struct {
	// MaxConns bounds the pool; 0 keeps pgxpool's default (the larger of
	// 4 and the number of CPUs).
	MaxConns int32
	// RequireSyncReplica refuses every write (an unavailable error, 503)
	// while the primary has no synchronous standby that kfa's commits
	// wait for (see Replication.Safe), as checked every ReplicationCheck.
	RequireSyncReplica bool
}

// ErrSchemaNewer is a database migrated by a newer kfa than this one.
var ErrSchemaNewer = errors.New("postgres: the database schema is newer than this kfa; upgrade kfa")

// Open connects to the database at url, applies the migrations it lacks,
// and returns the store. Its errors never hold the URL's password.
func Open(ctx context.Context, url string, opts Options) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, errors.New("postgres: malformed database URL (want postgres://user:password@host:port/database)")
	}
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	}
	primaryOnly(cfg.ConnConfig)
	db := &DB{poke: make(chan struct{}, 1), allTrips: new(atomic.Uint64)}
	db.repl.require = opts.RequireSyncReplica
	wrapConns(cfg, db.resetPool, db.allTrips)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	db.pool = pool
	db.Commands = commands.New(db)
	if err := db.migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	db.checkReplication(ctx)
	if err := db.startLog(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	if db.secret, err = db.loadSecret(ctx); err != nil {
		db.stopLogLoops()
		pool.Close()
		return nil, err
	}
	return db, nil
}

// loadSecret reads the database's secret (page tokens are keyed with it,
// so every process must share it), making it on first use.
func (s *DB) loadSecret(ctx context.Context) ([]byte, error) {
	var b [32]byte
	_, _ = rand.Read(b[:])
	if _, err := s.pool.Exec(ctx, "INSERT INTO kfa_meta (key, value) VALUES ('secret', $1) ON CONFLICT (key) DO NOTHING",
		hex.EncodeToString(b[:])); err != nil {
		return nil, fmt.Errorf("postgres: store the secret: %w", err)
	}
	var v string
	if err := s.pool.QueryRow(ctx, "SELECT value FROM kfa_meta WHERE key = 'secret'").Scan(&v); err != nil {
		return nil, fmt.Errorf("postgres: read the secret: %w", err)
	}
	return hex.DecodeString(v)
}

// Secret returns the database's secret (for page tokens).
func (s *DB) Secret() []byte { return append([]byte(nil), s.secret...) }

// Close stops listening and closes the pool.
func (s *DB) Close() error {
	s.stopLogLoops()
	s.pool.Close()
	return nil
}

// startLog starts the change log's notifier and listener, and waits until
// the listener listens (or ctx ends), so that no commit after Open goes
// unheard.
func (s *DB) startLog(ctx context.Context) error {
	lctx, cancel := context.WithCancel(context.Background())
	s.stopLog = cancel
	ready := make(chan struct{})
	notified, listened, watched := make(chan struct{}), make(chan struct{}), make(chan struct{})
	s.logDone = []chan struct{}{notified, listened, watched}
	go s.notifyLoop(lctx, notified)
	go s.logListenLoop(lctx, ready, listened)
	go s.watchReplication(lctx, watched)
	select {
	case <-ready:
		return nil
	case <-ctx.Done():
		s.stopLogLoops()
		return fmt.Errorf("postgres: listen for the change log: %w", ctx.Err())
	}
}

// stopLogLoops ends the notifier, the listener and the replication
// watcher; safe to call twice.
func (s *DB) stopLogLoops() {
	if s.stopLog == nil {
		return
	}
	s.stopLog()
	for _, d := range s.logDone {
		<-d
	}
	s.stopLog = nil
}

// pingTimeout bounds Ping, so that /readyz answers while the database
// does not.
const pingTimeout = 2 * time.Second

// Ping checks that the database answers a query, and, with
// Options.RequireSyncReplica, that the store takes writes (the last check
// of the standbys found a synchronous one).
func (s *DB) Ping() error {
	ctx, cancel := context.WithTimeout(context.Background(), pingTimeout)
	defer cancel()
	_, err := s.pool.Exec(ctx, "SELECT 1")
	if err != nil {
		return unavailable(fmt.Errorf("postgres: %w", err))
	}
	return s.writable()
}

type migration struct {
	version int
	name    string
	sql     string
}

// migrations lists the embedded migrations in version order.
func migrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v < 1 {
			return nil, fmt.Errorf("postgres: migration %s is not named NNNN_name.sql", e.Name())
		}
		b, err := migrationFiles.ReadFile("migrations/" + e.Name())
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: e.Name(), sql: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i, m := range out {
		if m.version != i+1 {
			return nil, fmt.Errorf("postgres: migration %s: want version %d", m.name, i+1)
		}
	}
	return out, nil
}

// SchemaVersion is the schema version this binary migrates to.
func SchemaVersion() int {
	ms, err := migrations()
	if err != nil {
		return 0
	}
	return len(ms)
}

// migrate applies the missing migrations, each in its own transaction,
// holding a session advisory lock so that two processes do not both
// apply one.
func (s *DB) migrate(ctx context.Context) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("postgres: connect: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", migrationLock); err != nil {
		return fmt.Errorf("postgres: migration lock: %w", err)
	}
	defer func() {
		_, _ = conn.Exec(context.Background(), "SELECT pg_advisory_unlock($1)", migrationLock)
	}()
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS kfa_schema_migrations (
		version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return fmt.Errorf("postgres: migrations table: %w", err)
	}
	var have int
	if err := conn.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM kfa_schema_migrations").Scan(&have); err != nil {
		return fmt.Errorf("postgres: read schema version: %w", err)
	}
	if have > len(ms) {
		return fmt.Errorf("%w (database at version %d, this kfa knows %d)", ErrSchemaNewer, have, len(ms))
	}
	for _, m := range ms[have:] {
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "INSERT INTO kfa_schema_migrations (version, name) VALUES ($1, $2)", m.version, m.name)
			return err
		})
		if err != nil {
			return fmt.Errorf("postgres: migration %s: %w", m.name, err)
		}
	}
	if err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error { return fillNameKeys(ctx, tx) }); err != nil {
		return fmt.Errorf("postgres: agents' name keys: %w", err)
	}
	return nil
}

// fillNameKeys gives every agent without one its name key: those the
// migration that added the column found, and any a kfa older than it
// wrote since. The key is Go's (agents.NameKey), not SQL's lower().
func fillNameKeys(ctx context.Context, tx pgx.Tx) error {
	rows, err := tx.Query(ctx, "SELECT id, doc FROM agents WHERE name_key IS NULL")
	if err != nil {
		return err
	}
	type row struct {
		ID  string
		Doc []byte
	}
	missing, err := pgx.CollectRows(rows, pgx.RowToStructByPos[row])
	if err != nil {
		return err
	}
	for _, r := range missing {
		a, err := decodeAgent(r.Doc)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "UPDATE agents SET name_key = $2 WHERE id = $1", r.ID, agents.NameKey(a.Name)); err != nil {
			return err
		}
	}
	return nil
}

// maxAttempts bounds the runs of one write transaction that keeps losing
// deadlocks or unique races.
const maxAttempts = 20

// counted runs fn on a connection of the pool, counting its round trips
// under name.
func (s *DB) counted(ctx context.Context, name string, fn func(conn *pgxpool.Conn) error) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	start := connTrips(conn)
	defer func() { s.tripsOf(name).record(connTrips(conn) - start) }()
	return fn(conn)
}

func retryable(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	switch pe.Code {
	case "40P01", "40001", "23505": // deadlock, serialization, unique
		return true
	}
	return false
}
