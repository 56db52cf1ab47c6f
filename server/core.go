package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"time"

	"github.com/kfa-project/kfa/admin"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/federation"
	"github.com/kfa-project/kfa/knowledge"
	"github.com/kfa-project/kfa/moderation"
	"github.com/kfa-project/kfa/peers"
	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/ratelimit"
	"github.com/kfa-project/kfa/service"
	"github.com/kfa-project/kfa/signing"
	"github.com/kfa-project/kfa/store"
	"github.com/kfa-project/kfa/store/postgres"
	"github.com/kfa-project/kfa/tasks"
	"github.com/kfa-project/kfa/trust"
)

// Core is the store with the domain services over it: what both kfa serve
// and the CLI (when no server runs) need.
type Core struct {
	// Store is the store the services run on: the bbolt file, or
	// PostgreSQL.
	Store Backend
	// DB is the bbolt store, for what only a bbolt file has (its
	// statistics, check, backup, bulk loading); nil on PostgreSQL.
	DB          *store.DB
	Agents      *agents.Service
	Tasks       *tasks.Service
	Discussions *discussions.Service
	Moderation  *moderation.Service
	Records     *knowledge.Service
	// Trust keeps the votes, verifications, reputations and profiles.
	Trust *trust.Service
	// Index is the live search index the admin API syncs and rebuilds; nil
	// when no server runs (see indexer).
	Index admin.Indexer
	// IndexLag tells how far the live index is behind the change feed; nil
	// when no server runs.
	IndexLag func(ctx context.Context) (int64, error)
	// MCP serves the MCP tools on the admin socket, for kfa mcp; nil when
	// no server runs.
	MCP http.Handler
	// Push manages push notification configs under the destination policy.
	Push *push.Service
	// Signer keeps the signing keys (push notifications sign with them).
	Signer *signing.Signer
	// Peers are this server's peers (federation).
	Peers *peers.Service
	// Limits are the discussions' limits, which an answer come back
	// from a peer is held to as well.
	Limits discussions.Limits
}

// CoreOptions tune OpenCore.
type CoreOptions struct {
	DataDir string
	// Store, when set, is the postgres:// URL of a PostgreSQL database to
	// use instead of the bbolt file in DataDir.
	Store string
	// PoolSize bounds the PostgreSQL connections; 0 for pgxpool's default.
	PoolSize int
	// RequireSyncReplica refuses PostgreSQL writes without a synchronous
	// standby (postgres.Options.RequireSyncReplica).
	RequireSyncReplica bool
	// ReadOnly opens the file with a shared lock and refuses every write
	// (kfa mcp without a server); the file must exist.
	ReadOnly    bool
	LockTimeout time.Duration
	BatchDelay  time.Duration
	AskRate     int // per minute per agent; 0 for none
	MaxOpen     int
	ReplyRate   int // replies per minute per agent; 0 for none
	MaxReplies  int // replies per discussion; 0 for no bound
	// FlagHideThreshold and FlagRate are the flag policy (see Config).
	FlagHideThreshold int
	FlagRate          int
	// VoteRate is votes and verifications per minute per agent; 0 for none.
	VoteRate int
	Now      func() time.Time
	// PushPolicy is the destination policy of push configs (--push-allow).
	PushPolicy push.Policy
	// SigningKeyGrace is how long a rotated-out signing key stays in the
	// JWKS; default signing.DefaultGrace.
	SigningKeyGrace time.Duration
}

// OpenCore opens the store (<DataDir>/kfa.db, or the PostgreSQL database
// of o.Store) and builds the services.
func OpenCore(o CoreOptions) (*Core, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	var (
		backend Backend
		bolt    *store.DB
	)
	if o.Store != "" {
		db, err := openPostgres(o)
		if err != nil {
			return nil, err
		}
		backend = db
	} else {
		db, err := store.Open(filepath.Join(o.DataDir, store.FileName), store.Options{
			LockTimeout: o.LockTimeout, BatchDelay: o.BatchDelay, ReadOnly: o.ReadOnly,
		})
		if err != nil {
			return nil, err
		}
		backend, bolt = db, db
	}
	secret := backend.Secret()
	limits := discussions.Limits{ReplyRate: ratelimit.PerMinute(o.ReplyRate), MaxReplies: o.MaxReplies}
	return &Core{
		Store:  backend,
		DB:     bolt,
		Agents: agents.NewService(backend, o.Now),
		Tasks: tasks.NewService(backend, tasks.Limits{AskRate: ratelimit.PerMinute(o.AskRate), MaxOpen: o.MaxOpen},
			secret, o.Now),
		Discussions: discussions.NewService(backend, limits, secret, o.Now),
		Moderation: moderation.NewService(backend,
			moderation.Policy{HideThreshold: o.FlagHideThreshold, Rate: ratelimit.PerMinute(o.FlagRate)}, o.Now),
		Records: knowledge.NewService(backend, o.Now),
		Trust:   trust.NewService(backend, backend, trust.Limits{Rate: ratelimit.PerMinute(o.VoteRate)}, o.Now),
		Push:    push.NewService(backend, o.PushPolicy, secret, o.Now),
		Signer:  signing.New(backend, o.SigningKeyGrace, o.Now),
		Peers:   peers.NewService(backend, federation.Cards{}, o.Now),
		Limits:  limits,
	}, nil
}

// AdminHandler returns the admin API over the core's services.
func (c *Core) AdminHandler(log *slog.Logger, version, dataDir, mode string) *admin.Handler {
	return admin.NewHandler(admin.Deps{
		Operator: c.Operator(), Store: c.adminStore(), Log: log,
		Version: version, DataDir: dataDir, Mode: mode,
		Index: c.indexer(dataDir), IndexLag: c.IndexLag, MCP: c.MCP,
	})
}

// Operator is the service layer's operator over the core's services:
// how the admin API reaches the domain.
func (c *Core) Operator() *service.Operator {
	return service.NewOperator(service.OperatorDeps{Agents: c.Agents, Tasks: c.Tasks, Discussions: c.Discussions,
		Moderation: c.Moderation, Records: c.Records, Outbox: c.Store, Signer: c.Signer, Peers: c.Peers})
}

// adminStore is the admin API's view of the store.
func (c *Core) adminStore() admin.Store {
	if c.DB != nil {
		return adminStore{c.DB}
	}
	if pg, ok := c.Store.(*postgres.DB); ok {
		return pgAdminStore{db: pg}
	}
	return nil
}

// Close closes the store.
func (c *Core) Close() error {
	if err := c.Store.Close(); err != nil {
		return fmt.Errorf("close store: %w", err)
	}
	return nil
}
