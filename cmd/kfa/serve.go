package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/kfa-project/kfa/server"
)

func runServe(ctx context.Context, e env, args []string) error {
	cfg := server.DefaultConfig()
	cfg.Version = buildInfo().Version
	fs := newFlagSet("serve", "kfa serve [flags]",
		"Run the kfa server: the A2A HTTP+JSON and JSON-RPC bindings (gRPC with --grpc-addr), the public JSON API,\n"+
			"and the admin socket the CLI uses while the server holds the database. Every flag can also be set with KFA_<FLAG>,\n"+
			"e.g. KFA_ADDR=0.0.0.0:8080; flags win over the environment.", e,
		"kfa serve",
		"kfa serve --addr 0.0.0.0:8080 --public-url https://kfa.example.com",
		"kfa serve --contributor-writes=false --search-rate 120")
	serveFlags(fs, &cfg)
	serveTLSFlags(fs, &cfg.TLS)
	var secretFile string
	fs.StringVar(&secretFile, "oauth-web-client-secret-file", "", "read the web client's secret from this `file` (or set "+oauthSecretEnv+"; never a flag value)")
	pos, err := parseArgs(fs, args, e)
	if err != nil {
		return err
	}
	if err := wantArgs(pos, 0, ""); err != nil {
		return err
	}
	if cfg.OAuthWebClientSecret, err = oauthSecret(e, secretFile); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return usagef("%v", err)
	}
	// A second server on one --data would wait forever for the search
	// index the first holds (on PostgreSQL, nothing else stops it), and
	// take its admin socket over.
	if cfg.AdminSocket != "off" {
		if _, p, ok := answering(ctx, cfg.AdminSocket); ok {
			return fmt.Errorf("kfa serve (pid %d, version %s) already answers on %s, with its data in %s; "+
				"a second server needs a --data of its own (its search index and admin socket are there); "+
				"servers share a PostgreSQL database with the same --store and each its own --data",
				p.PID, p.Version, cfg.AdminSocket, where(p))
		}
	}
	log := newLogger(e, cfg.LogFormat, cfg.LogLevel)
	err = server.Run(ctx, cfg, log)
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("%w\n%s", err, busyHint(e, cfg, err))
	}
	if errors.Is(err, syscall.EACCES) && strings.Contains(err.Error(), "listen on") {
		return fmt.Errorf("%w\n%s", err, privilegedHint(e, err))
	}
	logStopped(ctx, log, err)
	return err
}

// busyHint says which flag moves the listener whose address is taken.
func busyHint(e env, cfg server.Config, err error) string {
	flagName, addr := "--addr", cfg.Addr
	switch {
	case cfg.MetricsAddr != "" && strings.Contains(err.Error(), "metrics-addr "+cfg.MetricsAddr):
		flagName, addr = "--metrics-addr", cfg.MetricsAddr
	case cfg.PprofAddr != "" && strings.Contains(err.Error(), "pprof address "+cfg.PprofAddr):
		flagName, addr = "--pprof-addr", cfg.PprofAddr
	case cfg.TLS.ACMEHTTPAddr != "" && strings.Contains(err.Error(), "acme-http-addr "+cfg.TLS.ACMEHTTPAddr):
		flagName, addr = "--acme-http-addr", cfg.TLS.ACMEHTTPAddr
	case cfg.GRPCAddr != "" && strings.Contains(err.Error(), "grpc-addr: listen on "+cfg.GRPCAddr):
		flagName, addr = "--grpc-addr", cfg.GRPCAddr
	}
	env := "KFA_" + strings.ToUpper(strings.ReplaceAll(strings.TrimPrefix(flagName, "--"), "-", "_"))
	hint := fmt.Sprintf("Another process listens on %s (perhaps another kfa serve). Stop it, or choose another address "+
		"with %s (or %s), e.g. '%s serve %s 127.0.0.1:8081'", addr, flagName, env, e.name(), flagName)
	if flagName == "--addr" {
		hint += "; with make: 'make run ADDR=127.0.0.1:8081'"
	}
	return hint + ". Nothing was written to the data directory."
}

// logStopped ends the log of a server that was asked to stop with why:
// the signal, or whatever else ended ctx. A server that stopped on its
// own says why in its error, which kfa prints last.
func logStopped(ctx context.Context, log *slog.Logger, err error) {
	if ctx.Err() == nil {
		return
	}
	reason := "canceled"
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		reason = cause.Error()
	}
	if err != nil {
		log.Error("kfa stopped", "reason", reason, "err", err)
		return
	}
	log.Info("kfa stopped", "reason", reason)
}

// serveFlags binds the flags of kfa serve to cfg.
func serveFlags(fs *flag.FlagSet, cfg *server.Config) {
	fs.StringVar(&cfg.Addr, "addr", cfg.Addr, "listen `address` (host:port)")
	fs.StringVar(&cfg.DataDir, "data", cfg.DataDir, "data `directory` (kfa.db, search index, admin socket)")
	fs.StringVar(&cfg.Store, "store", cfg.Store, "keep the data in this PostgreSQL database (a postgres://user:password@host:port/db `URL`) instead of kfa.db in --data")
	fs.IntVar(&cfg.StorePoolSize, "store-pool-size", cfg.StorePoolSize, "PostgreSQL connections at most (0: the larger of 4 and the number of CPUs)")
	fs.BoolVar(&cfg.RequireSyncReplica, "require-sync-replica", cfg.RequireSyncReplica, "with --store: refuse writes (503) and fail /readyz while the primary has no synchronous standby (checked every second)")
	fs.StringVar(&cfg.PublicURL, "public-url", cfg.PublicURL, "externally visible base `URL` (default http://<addr>)")
	fs.StringVar(&cfg.AdminSocket, "admin-socket", cfg.AdminSocket, "admin unix socket `path` (default <data>/kfa.sock; off disables it)")
	fs.StringVar(&cfg.MetricsAddr, "metrics-addr", cfg.MetricsAddr, "serve /metrics only on this `address` (host:port); empty serves it on --addr")
	fs.StringVar(&cfg.GRPCAddr, "grpc-addr", cfg.GRPCAddr, "serve the A2A gRPC binding on this `address` (host:port); empty: off")
	fs.StringVar(&cfg.GRPCPublicAddr, "grpc-public-addr", cfg.GRPCPublicAddr, "the gRPC `address` (host:port) the card gives clients (default: the public URL's host, --grpc-addr's port)")
	fs.BoolVar(&cfg.ContributorWrites, "contributor-writes", cfg.ContributorWrites, "enable ask-network (asks and replies)")
	fs.BoolVar(&cfg.SeedSamples, "seed-samples", cfg.SeedSamples, "import the built-in sample records when the database has none")
	fs.StringVar(&cfg.LogFormat, "log-format", cfg.LogFormat, "log `format`: text or json")
	fs.StringVar(&cfg.LogLevel, "log-level", cfg.LogLevel, "log `level`: debug, info, warn or error")
	fs.IntVar(&cfg.AskRate, "ask-rate", cfg.AskRate, "new asks per minute per agent, across every process on one database (0: no limit)")
	fs.IntVar(&cfg.MaxOpenTasks, "max-open-tasks", cfg.MaxOpenTasks, "open (waiting) tasks per agent, across every process on one database (0: no limit)")
	fs.IntVar(&cfg.ReplyRate, "reply-rate", cfg.ReplyRate, "replies per minute per agent, across every process on one database (0: no limit)")
	fs.IntVar(&cfg.MaxReplies, "max-replies", cfg.MaxReplies, "replies one discussion holds (0: no limit)")
	fs.IntVar(&cfg.FlagHideThreshold, "flag-hide-threshold", cfg.FlagHideThreshold, "distinct agents whose flags hide an item pending review (0: flags never hide)")
	fs.IntVar(&cfg.FlagRate, "flag-rate", cfg.FlagRate, "flags per minute per agent, across every process on one database (0: no limit)")
	fs.IntVar(&cfg.VoteRate, "vote-rate", cfg.VoteRate, "votes and verifications per minute per agent, one budget, across every process on one database (0: no limit)")
	fs.IntVar(&cfg.SearchRate, "search-rate", cfg.SearchRate, "searches per minute per client address, counted by each process on its own (0: no limit)")
	fs.IntVar(&cfg.RequestRate, "request-rate", cfg.RequestRate, "authenticated requests per minute per agent, counted by each process on its own: behind a load balancer over N processes, an agent may make up to N times this (0: no limit)")
	fs.IntVar(&cfg.AuthFailRate, "auth-fail-rate", cfg.AuthFailRate, "failed bearer authentications per minute per client address, counted by each process on its own (0: no limit)")
	fs.IntVar(&cfg.MaxStreams, "max-streams", cfg.MaxStreams, "open task streams in total, in each process (0: no limit)")
	fs.IntVar(&cfg.MaxStreamsPerAgent, "max-streams-per-agent", cfg.MaxStreamsPerAgent, "open task streams per agent, in each process (0: no limit)")
	fs.DurationVar(&cfg.StreamHeartbeat, "stream-heartbeat", cfg.StreamHeartbeat, "keep-alive comment on a stream idle this long")
	fs.Int64Var(&cfg.MaxBodyBytes, "max-body-bytes", cfg.MaxBodyBytes, "largest request body in `bytes`")
	fs.IntVar(&cfg.MaxHeaderBytes, "max-header-bytes", cfg.MaxHeaderBytes, "largest request header block in `bytes`")
	fs.DurationVar(&cfg.ReadHeaderTimeout, "read-header-timeout", cfg.ReadHeaderTimeout, "time to read request headers")
	fs.DurationVar(&cfg.ReadTimeout, "read-timeout", cfg.ReadTimeout, "time to read a whole request")
	fs.DurationVar(&cfg.WriteTimeout, "write-timeout", cfg.WriteTimeout, "time to write a response")
	fs.DurationVar(&cfg.IdleTimeout, "idle-timeout", cfg.IdleTimeout, "keep-alive idle time")
	fs.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", cfg.ShutdownTimeout, "time to drain requests on SIGINT/SIGTERM")
	fs.DurationVar(&cfg.CardMaxAge, "card-max-age", cfg.CardMaxAge, "Cache-Control max-age of the agent card")
	fs.DurationVar(&cfg.BatchDelay, "batch-delay", cfg.BatchDelay, "group-commit window: how long a write waits to share a transaction")
	fs.DurationVar(&cfg.LockTimeout, "lock-timeout", cfg.LockTimeout, "how long to wait for the database file lock")
	fs.BoolVar(&cfg.Web, "web", cfg.Web, "serve the web view: pages for people, sign-in with an agent token, replies (false: API only)")
	fs.DurationVar(&cfg.WebSessionTTL, "web-session-ttl", cfg.WebSessionTTL, "how long a web sign-in session lasts")
	fs.BoolVar(&cfg.MCP, "mcp", cfg.MCP, "serve the MCP tools (search, fetch, get_changes, whoami) at /mcp (false: off; kfa mcp over stdio still works)")
	fs.Func("mcp-allowed-origins", "comma-separated browser `origins` (https://app.example.com) allowed to call /mcp, instead of the default: the public URL's origin, and the loopback origins of the port when --addr is on loopback", func(v string) error {
		cfg.MCPAllowedOrigins = nil
		for _, o := range strings.Split(v, ",") {
			if o = strings.TrimSpace(o); o != "" {
				cfg.MCPAllowedOrigins = append(cfg.MCPAllowedOrigins, o)
			}
		}
		return nil
	})
	fs.DurationVar(&cfg.LogRetention, "log-retention", cfg.LogRetention,
		"keep the change log this long (and until every search index has read it) before trimming it; "+
			"each record's latest change stays for get_changes (0: keep everything)")
	fs.DurationVar(&cfg.LogRetention, "feed-retention", cfg.LogRetention, "the old name of --log-retention")
	fs.BoolVar(&cfg.Push, "push", cfg.Push, "accept push notification configs and deliver them (false: the card says pushNotifications false)")
	fs.Func("push-allow", "comma-separated push `destinations` allowed besides public https: host names, IPs, CIDR ranges (plain http to them too), e.g. 127.0.0.1,hooks.internal,10.0.0.0/8", func(v string) error {
		cfg.PushAllow = nil
		for _, d := range strings.Split(v, ",") {
			if d = strings.TrimSpace(d); d != "" {
				cfg.PushAllow = append(cfg.PushAllow, d)
			}
		}
		return nil
	})
	fs.DurationVar(&cfg.PushRetryFor, "push-retry-for", cfg.PushRetryFor, "how long a push notification is retried after its transition before it fails")
	fs.DurationVar(&cfg.PushKeep, "push-keep", cfg.PushKeep, "how long delivered and failed push notifications are kept (kfa push list) before they are purged")
	fs.DurationVar(&cfg.PushFirstRetry, "push-first-retry", cfg.PushFirstRetry, "gap before a push notification's first retry; later gaps double, up to 1h")
	fs.DurationVar(&cfg.PushTimeout, "push-timeout", cfg.PushTimeout, "time limit of one push notification request")
	fs.IntVar(&cfg.PushConcurrency, "push-concurrency", cfg.PushConcurrency, "push notification requests in flight at once (one at a time per destination)")
	fs.DurationVar(&cfg.SigningKeyGrace, "signing-key-grace", cfg.SigningKeyGrace, "how long a rotated-out signing key stays in /.well-known/jwks.json")
	fs.StringVar(&cfg.PprofAddr, "pprof-addr", cfg.PprofAddr, "serve the Go profiler (net/http/pprof) on this `address`, e.g. 127.0.0.1:6060; off when empty")
	fs.Func("oauth-issuer", "accept the JWT access tokens of this OAuth/OpenID provider (issuer `URL`, exactly as it names itself; repeat the flag, or separate with commas, for several)", func(v string) error {
		for _, is := range strings.Split(v, ",") {
			if is = strings.TrimSpace(is); is != "" {
				cfg.OAuthIssuers = append(cfg.OAuthIssuers, is)
			}
		}
		return nil
	})
	fs.Func("oauth-audience", "the `aud` an access token must hold, instead of the public URL or the public URL + /mcp (repeat, or separate with commas, for several)", func(v string) error {
		for _, a := range strings.Split(v, ",") {
			if a = strings.TrimSpace(a); a != "" {
				cfg.OAuthAudiences = append(cfg.OAuthAudiences, a)
			}
		}
		return nil
	})
	fs.Func("oauth-plain-jwt-issuer", "also accept this issuer's access tokens typed JWT or untyped, not at+jwt (RFC 9068), for a provider that cannot type them (Entra ID, Okta, ZITADEL, Dex; docs/oauth.md); its ID tokens then pass for access tokens wherever their audience is kfa's (an issuer `URL` of --oauth-issuer; repeat, or separate with commas)", func(v string) error {
		for _, is := range strings.Split(v, ",") {
			if is = strings.TrimSpace(is); is != "" {
				cfg.OAuthPlainJWTIssuers = append(cfg.OAuthPlainJWTIssuers, is)
			}
		}
		return nil
	})
	fs.BoolVar(&cfg.OAuthAutoProvision, "oauth-auto-provision", cfg.OAuthAutoProvision, "create an agent for the first valid token of a new identity (false: only identities linked with kfa agent link)")
	fs.Func("oauth-web-agent-scopes", "for this issuer `URL` (of --oauth-issuer), which cannot grant kfa's scopes to people (Google): sign-ins ask it for none, and a session holds its agent's scopes (link people to agents with --oauth-auto-provision=false); elsewhere a session holds what the provider granted (repeat, or separate with commas)", func(v string) error {
		for _, is := range strings.Split(v, ",") {
			if is = strings.TrimSpace(is); is != "" {
				cfg.OAuthWebAgentScopes = append(cfg.OAuthWebAgentScopes, is)
			}
		}
		return nil
	})
	fs.StringVar(&cfg.OAuthWebClientID, "oauth-web-client-id", cfg.OAuthWebClientID, "OAuth client `id` of the web view's \"Sign in with <provider>\" (its redirect URI: <public-url>/login/callback)")
}

// oauthSecretEnv holds the web client's secret; there is no flag for
// it, since a flag's value shows in the process list.
const oauthSecretEnv = "KFA_OAUTH_WEB_CLIENT_SECRET"

// oauthSecret reads the web client's secret from --oauth-web-client-
// secret-file or KFA_OAUTH_WEB_CLIENT_SECRET (not both).
func oauthSecret(e env, file string) (string, error) {
	fromEnv := e.getenv(oauthSecretEnv)
	if file == "" {
		return fromEnv, nil
	}
	if fromEnv != "" {
		return "", usagef("--oauth-web-client-secret-file and %s are both set; set one", oauthSecretEnv)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", usagef("--oauth-web-client-secret-file: %v", err)
	}
	secret := strings.TrimSpace(string(b))
	if secret == "" {
		return "", usagef("--oauth-web-client-secret-file: %s is empty", file)
	}
	return secret, nil
}

func newLogger(e env, format, level string) *slog.Logger {
	var lv slog.Level
	_ = lv.UnmarshalText([]byte(level))
	opts := &slog.HandlerOptions{Level: lv}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(e.stderr, opts))
	}
	return slog.New(slog.NewTextHandler(e.stderr, opts))
}

// relTime is a short human form of how long ago t was.
func relTime(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t)
	switch {
	case d < 0:
		return "in the future"
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	default:
		return fmt.Sprintf("%dd ago", int(d.Hours()/24))
	}
}
