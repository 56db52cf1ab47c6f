package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/knowledge"
	"github.com/kfa-project/kfa/metrics"
	"github.com/kfa-project/kfa/moderation"
	"github.com/kfa-project/kfa/peers"
	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/sessions"
	"github.com/kfa-project/kfa/signing"
	"github.com/kfa-project/kfa/store/postgres"
	"github.com/kfa-project/kfa/tasks"
	"github.com/kfa-project/kfa/trust"
)

// Backend is every store interface of the domain, with what the process
// needs of the database itself. The bbolt store (*store.DB) and the
// PostgreSQL store (*postgres.DB) are both one.
type Backend interface {
	agents.Store
	tasks.Store
	discussions.Store
	moderation.Store
	sessions.Store
	push.ConfigStore
	push.OutboxStore
	signing.Store
	knowledge.Store
	peers.Store
	trust.Store
	// The change log, its durable cursors and its trimming.
	changelog.Log
	changelog.Cursors
	changelog.Trimmable
	// Secret keys page tokens; every process on one database shares it.
	Secret() []byte
	// Ping tells whether the store answers (/readyz).
	Ping() error
	Close() error
}

// IsPostgresURL reports whether a --store value names a PostgreSQL
// database.
func IsPostgresURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// postgresOpenTimeout bounds connecting and migrating at start.
const postgresOpenTimeout = 30 * time.Second

// openPostgres opens the PostgreSQL store for OpenCore.
func openPostgres(o CoreOptions) (*postgres.DB, error) {
	if !IsPostgresURL(o.Store) {
		return nil, errors.New("store: want a postgres://user:password@host:port/database URL, or nothing for the bbolt file in the data directory")
	}
	if o.ReadOnly {
		return nil, errors.New("store: a read-only open is for the bbolt file only")
	}
	ctx, cancel := context.WithTimeout(context.Background(), postgresOpenTimeout)
	defer cancel()
	db, err := postgres.Open(ctx, o.Store, postgres.Options{MaxConns: int32(o.PoolSize), RequireSyncReplica: o.RequireSyncReplica})
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	return db, nil
}

// pgAdminStore is the admin API's day-2 operations on PostgreSQL.
type pgAdminStore struct{ db *postgres.DB }

func (a pgAdminStore) Stats() (api.Stats, error) {
	ctx := context.Background()
	st, err := a.db.Stats(ctx)
	if err != nil {
		return api.Stats{}, err
	}
	out := api.Stats{
		Database: api.DatabaseStats{Path: "postgresql", Backend: api.BackendPostgres, SchemaVersion: st.SchemaVersion,
			SizeBytes: st.SizeBytes},
		Tasks:       api.TaskStats{Total: st.Tasks, ByState: map[string]int{}},
		Discussions: api.DiscussionStats{Total: st.Discussions, Open: st.Open, Answered: st.Answered},
		Agents:      st.Agents,
		Records:     st.Records,
		LogPosition: st.LogPosition.String(),
	}
	for s, n := range st.TasksByState {
		out.Tasks.ByState[string(s)] = n
	}
	if o := st.OldestWaiting; o != nil {
		out.Tasks.OldestWaiting = &api.WaitingTask{ID: o.ID, OwnerID: o.OwnerID, Since: a2a.FormatTime(time.UnixMilli(o.Since).UTC())}
	}
	return out, nil
}

// errNotOnPostgres is a bbolt file operation asked of a PostgreSQL store.
var errNotOnPostgres = a2a.Errorf(a2a.UnsupportedOperation, "%s", "not available on the PostgreSQL store: "+
	"a PostgreSQL database is backed up with pg_dump")

// Check runs the PostgreSQL invariants (there are no pages to check).
func (a pgAdminStore) Check(ctx context.Context, _ bool) (api.CheckReport, error) {
	rep, err := a.db.Check(ctx)
	if err != nil {
		return api.CheckReport{}, err
	}
	return PostgresCheckReport(rep), nil
}

// PostgresCheckReport is a PostgreSQL check in the admin API's form (the
// table in place of the bucket).
func PostgresCheckReport(rep postgres.CheckReport) api.CheckReport {
	out := api.CheckReport{OK: rep.OK(), Path: "postgresql", SchemaVersion: rep.SchemaVersion, Examined: rep.Examined,
		Violations: []api.Violation{}, Truncated: rep.Truncated, Notes: []string{}}
	for _, v := range rep.Violations {
		out.Violations = append(out.Violations, api.Violation{Kind: v.Kind, Bucket: v.Table, Key: v.Key, TaskID: v.TaskID, Detail: v.Detail})
	}
	return out
}

func (a pgAdminStore) Backup(io.Writer, func(int64)) (int64, error) { return 0, errNotOnPostgres }

func (a pgAdminStore) Identity(ctx context.Context) (api.StoreIdentity, error) {
	st, err := a.db.LogState(ctx)
	if err != nil {
		return api.StoreIdentity{}, err
	}
	return api.StoreIdentity{Backend: api.BackendPostgres, Name: a.db.Describe(), ID: st.Epoch}, nil
}

// pgCounts gives the metrics the PostgreSQL store's counters.
type pgCounts struct{ db *postgres.DB }

func (c pgCounts) Counts() (metrics.Counts, error) {
	st, err := c.db.Stats(context.Background())
	if err != nil {
		return metrics.Counts{}, err
	}
	return metrics.Counts{Tasks: st.Tasks, TasksByState: st.TasksByState, Discussions: st.Discussions,
		Open: st.Open, Answered: st.Answered, Agents: st.Agents}, nil
}
