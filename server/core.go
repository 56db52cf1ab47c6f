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
	"github.com/kfa-project/kfa/knowledge"
	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/ratelimit"
	"github.com/kfa-project/kfa/signing"
	"github.com/kfa-project/kfa/store"
	"github.com/kfa-project/kfa/tasks"
)

// Core is the store with the domain services over it: what both kfa serve
// and the CLI (when no server runs) need.
type Core struct {
	DB          *store.DB
	Agents      *agents.Service
	Tasks       *tasks.Service
	Discussions *discussions.Service
	Records     *knowledge.Service
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
	// pushKick, when set, wakes the delivery worker (an operator retry).
	pushKick func()
}

// CoreOptions tune OpenCore.
type CoreOptions struct {
	DataDir string
	// ReadOnly opens the file with a shared lock and refuses every write
	// (kfa mcp without a server); the file must exist.
	ReadOnly    bool
	LockTimeout time.Duration
	BatchDelay  time.Duration
	AskRate     int // per minute per agent; 0 for none
	MaxOpen     int
	ReplyRate   int // replies per minute per agent; 0 for none
	MaxReplies  int // replies per discussion; 0 for no bound
	Now         func() time.Time
	// OnTaskChange receives each task after a committed transition (the
	// stream broker); nil when nothing listens.
	OnTaskChange func(tasks.Task)
	// WrapTasks and WrapDiscussions, when set, wrap the store under the
	// task and discussion services: metrics count events there, and the
	// search index watches replies.
	WrapTasks       func(tasks.Store) tasks.Store
	WrapDiscussions func(discussions.Store) discussions.Store
	// PushPolicy is the destination policy of push configs (--push-allow).
	PushPolicy push.Policy
	// SigningKeyGrace is how long a rotated-out signing key stays in the
	// JWKS; default signing.DefaultGrace.
	SigningKeyGrace time.Duration
}

// OpenCore opens <DataDir>/kfa.db and builds the services.
func OpenCore(o CoreOptions) (*Core, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	db, err := store.Open(filepath.Join(o.DataDir, store.FileName), store.Options{
		LockTimeout: o.LockTimeout, BatchDelay: o.BatchDelay, OnTaskChange: o.OnTaskChange, ReadOnly: o.ReadOnly,
	})
	if err != nil {
		return nil, err
	}
	var ts tasks.Store = db
	if o.WrapTasks != nil {
		ts = o.WrapTasks(ts)
	}
	var ds discussions.Store = db
	if o.WrapDiscussions != nil {
		ds = o.WrapDiscussions(ds)
	}
	return &Core{
		DB:     db,
		Agents: agents.NewService(db, o.Now),
		Tasks: tasks.NewService(ts, tasks.Limits{AskRate: ratelimit.PerMinute(o.AskRate), MaxOpen: o.MaxOpen},
			db.Secret(), o.Now),
		Discussions: discussions.NewService(ds,
			discussions.Limits{ReplyRate: ratelimit.PerMinute(o.ReplyRate), MaxReplies: o.MaxReplies}, db.Secret(), o.Now),
		Records: knowledge.NewService(db, o.Now),
		Push:    push.NewService(db, o.PushPolicy, db.Secret(), o.Now),
		Signer:  signing.New(db, o.SigningKeyGrace, o.Now),
	}, nil
}

// AdminHandler returns the admin API over the core's services.
func (c *Core) AdminHandler(log *slog.Logger, version, dataDir, mode string) *admin.Handler {
	return admin.NewHandler(admin.Deps{
		Agents: c.Agents, Tasks: c.Tasks, Discussions: c.Discussions, Store: adminStore{c.DB}, Log: log,
		Version: version, DataDir: dataDir, Mode: mode,
		Records: c.Records, Index: c.indexer(dataDir), IndexLag: c.IndexLag, MCP: c.MCP,
		Push: pushOps{db: c.DB, signer: c.Signer, kick: c.pushKick},
	})
}

// Close closes the store.
func (c *Core) Close() error {
	if err := c.DB.Close(); err != nil {
		return fmt.Errorf("close store: %w", err)
	}
	return nil
}
