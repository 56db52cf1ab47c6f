package server

import (
	"errors"
	"fmt"
	"github.com/kfa-project/kfa/moderation"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/internal/httpkit"
	"github.com/kfa-project/kfa/oauth"
	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/signing"
	"github.com/kfa-project/kfa/webhook"
)

// Config is everything kfa serve can be told. Zero durations and sizes are
// replaced by their defaults in Validate.
type Config struct {
	Addr    string // listen address, default 127.0.0.1:8080
	DataDir string // holds kfa.db, the search index and the admin socket; default ./data
	// Store, when set, is the postgres:// URL of a PostgreSQL database the
	// server keeps its data in instead of <DataDir>/kfa.db (DataDir still
	// holds this process's search index and admin socket).
	Store string
	// StorePoolSize bounds the PostgreSQL connections; 0 for the default
	// (the larger of 4 and the number of CPUs).
	StorePoolSize int
	// RequireSyncReplica, with Store, refuses writes (503) and fails
	// /readyz while the primary has no synchronous standby that kfa's
	// commits wait for (postgres.Replication.Safe).
	RequireSyncReplica bool
	PublicURL          string // base URL clients see; default http://<Addr>
	// AdminSocket is the admin unix socket path; default <DataDir>/kfa.sock,
	// "off" disables it.
	AdminSocket       string
	ContributorWrites bool // enables ask-network; default true (see DefaultConfig)
	Version           string
	// SeedSamples imports the embedded sample records on start when the
	// database holds no record; default false (make run sets it).
	SeedSamples bool

	// PprofAddr, when set, serves net/http/pprof on this address (its own
	// listener; keep it on loopback). Off by default.
	PprofAddr string

	// GRPCAddr, when set, serves the A2A gRPC binding on this host:port
	// (its own listener). Off by default.
	GRPCAddr string
	// GRPCPublicAddr is the host:port clients reach the gRPC binding at,
	// as the card lists it; default the host of PublicURL and the port
	// GRPCAddr is bound to.
	GRPCPublicAddr string

	LogFormat string // text or json
	LogLevel  string // debug, info, warn, error

	AskRate      int // asks per minute per agent; 0 disables the limit
	MaxOpenTasks int // open (working) tasks per agent; 0 disables the limit
	ReplyRate    int // replies per minute per agent; 0 disables the limit
	MaxReplies   int // replies one discussion holds; 0 disables the limit
	// FlagHideThreshold is how many distinct agents' flags hide an item
	// pending review; 0: flags never hide anything on their own.
	FlagHideThreshold int
	FlagRate          int // flags per minute per agent; 0 disables the limit
	VoteRate          int // votes and verifications per minute per agent (one budget); 0 disables the limit
	SearchRate        int // searches per minute per client address; 0 disables the limit
	AuthFailRate      int // failed bearer authentications per minute per address; 0 disables the limit
	RequestRate       int // authenticated requests per minute per agent; 0 disables the limit

	MaxStreams         int           // open task streams in total; 0 disables the limit
	MaxStreamsPerAgent int           // open task streams per agent; 0 disables the limit
	StreamHeartbeat    time.Duration // keep-alive comment after this much idle time on a stream
	// PeerPoll is how often each peer's feed is read when nothing wakes
	// its follower (default federation.DefaultPoll, about 2 s).
	PeerPoll time.Duration

	MaxBodyBytes      int64
	MaxHeaderBytes    int
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
	ShutdownTimeout   time.Duration
	CardMaxAge        time.Duration
	BatchDelay        time.Duration // group-commit window
	LockTimeout       time.Duration // wait for the store's file lock

	// MetricsAddr, when set, serves GET /metrics on this host:port only;
	// when empty, /metrics is served on Addr.
	MetricsAddr string

	// Web serves the web view (pages for people, sign-in and replies);
	// default true. Off leaves an API-only server.
	Web bool
	// WebSessionTTL is how long a web sign-in session lives; default 30
	// days.
	WebSessionTTL time.Duration
	// WebHighlightBudget is how long the code of one body may be
	// highlighted for on a page (default markdown.DefaultHighlightBudget,
	// 2ms); past it, code is shown plain (tests under the race detector
	// raise it).
	WebHighlightBudget time.Duration

	// MCP serves the MCP tools at /mcp on the public listener; default
	// true. kfa mcp (stdio) works either way.
	MCP bool
	// MCPAllowedOrigins are the browser origins (scheme://host[:port])
	// allowed to call /mcp; a request with another Origin header is
	// refused (DNS-rebinding protection). Empty (the default), only kfa's
	// own origins are: that of PublicURL, and http://127.0.0.1:PORT,
	// http://localhost:PORT and http://[::1]:PORT when Addr is a loopback
	// address. A list replaces that default.
	MCPAllowedOrigins []string

	// LogRetention is the change log's horizon: events written longer
	// ago are trimmed once every durable follower (each process's search
	// index) has passed them, except what a reader of the records' feed
	// starting from the beginning needs (each record's latest entry) and
	// the newest event; default 30 days, 0 keeps everything. A follower
	// stopped longer rebuilds when it returns; a get_changes cursor older
	// than it may have to start over. (--feed-retention is its old name.)
	LogRetention time.Duration
	// Push accepts push notification configs and delivers them; default
	// true. Off, the card says pushNotifications false.
	Push bool
	// PushAllow lists destinations allowed besides public https: host
	// names, addresses and CIDR ranges; plain http to them too.
	PushAllow []string
	// PushRetryFor is how long a delivery is retried after its
	// transition before it fails; default 24h.
	PushRetryFor time.Duration
	// PushKeep is how long delivered and failed deliveries are kept;
	// default 7 days.
	PushKeep time.Duration
	// PushFirstRetry is the gap before a delivery's first retry (later
	// gaps double, up to an hour); default 2s.
	PushFirstRetry time.Duration
	// PushTimeout bounds one delivery request; default 10s.
	PushTimeout time.Duration
	// PushConcurrency bounds the delivery requests in flight; default 8.
	PushConcurrency int
	// PushResolver, when set, resolves the host names of push
	// destinations instead of the system resolver (tests).
	PushResolver webhook.Resolver
	// PushObserver, when set, hears of every recorded delivery attempt,
	// besides the metrics (tests, embedding).
	PushObserver webhook.Observer
	// FollowTick is how often this process's followers of the change log
	// (the live one, the search index) read it without a wake-up: the
	// safety net for a lost NOTIFY. 0: changelog.DefaultTick. Tests of
	// the wake-up path set it longer than their patience, so that only a
	// wake-up can deliver a write; longer than 800 ms it also leaves the
	// credential cache untrusted between passes (every lookup then reads
	// the store).
	FollowTick time.Duration
	// SigningKeyGrace is how long a rotated-out signing key stays in
	// /.well-known/jwks.json; default 7 days.
	SigningKeyGrace time.Duration

	// OAuthIssuers, when set, make kfa an OAuth 2.1 resource server for
	// these providers (see docs/oauth.md): their JWT access tokens are
	// accepted beside kfa's own tokens. Each is the issuer URL exactly as
	// the provider names itself; https, or http on a loopback host.
	OAuthIssuers []string
	// OAuthAudiences replace the resource identifiers an access token's
	// aud must hold; default: PublicURL and PublicURL + "/mcp".
	OAuthAudiences []string
	// OAuthPlainJWTIssuers are issuers (of OAuthIssuers) whose access
	// tokens are accepted typed JWT, or untyped, rather than at+jwt (RFC
	// 9068): providers that cannot type their access tokens. Off by
	// default, since such an issuer's ID tokens are then taken for access
	// tokens wherever their audience is one of kfa's.
	OAuthPlainJWTIssuers []string
	// OAuthAutoProvision creates the agent of an identity (iss, sub) at its
	// first valid token; default true. Off, only identities an operator
	// linked (kfa agent link) are let in.
	OAuthAutoProvision bool
	// OAuthWebClientID, when set, adds "Sign in with <provider>" to the web
	// view: the OAuth client registered at each issuer with the redirect
	// URI PublicURL + "/login/callback".
	OAuthWebClientID string
	// OAuthWebAgentScopes are issuers (of OAuthIssuers) that cannot grant
	// kfa's scopes to a person (Google): a sign-in there asks for none,
	// and its session holds its agent's scopes. Elsewhere a session holds
	// what the provider granted the sign-in.
	OAuthWebAgentScopes []string
	// OAuthWebClientSecret is that client's secret. kfa serve reads it
	// from --oauth-web-client-secret-file or KFA_OAUTH_WEB_CLIENT_SECRET,
	// never from a flag value (which any user of the machine can read in
	// the process list). Empty: a public client (PKCE only).
	OAuthWebClientSecret string

	// TLS makes the public listener serve HTTPS itself (config_tls.go).
	TLS TLSOptions
}

// OAuthAudienceList is the resource identifiers an access token's aud
// must hold: OAuthAudiences, or the public URL and its MCP endpoint.
func (c *Config) OAuthAudienceList() []string {
	if len(c.OAuthAudiences) > 0 {
		return c.OAuthAudiences
	}
	return []string{c.PublicURL, c.PublicURL + "/mcp"}
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{
		Addr:               "127.0.0.1:8080",
		DataDir:            "./data",
		ContributorWrites:  true,
		Version:            "dev",
		LogFormat:          "text",
		LogLevel:           "info",
		AskRate:            5,
		MaxOpenTasks:       25,
		ReplyRate:          10,
		MaxReplies:         200,
		FlagHideThreshold:  moderation.DefaultHideThreshold,
		FlagRate:           10,
		VoteRate:           30,
		SearchRate:         60,
		AuthFailRate:       30,
		RequestRate:        1200,
		MaxStreams:         10_000,
		MaxStreamsPerAgent: 50,
		StreamHeartbeat:    15 * time.Second,
		MaxBodyBytes:       httpkit.DefaultMaxBodyBytes,
		MaxHeaderBytes:     16 << 10,
		ReadHeaderTimeout:  5 * time.Second,
		ReadTimeout:        30 * time.Second,
		WriteTimeout:       30 * time.Second,
		IdleTimeout:        2 * time.Minute,
		ShutdownTimeout:    15 * time.Second,
		CardMaxAge:         5 * time.Minute,
		BatchDelay:         2 * time.Millisecond,
		LockTimeout:        time.Second,
		Web:                true,
		WebSessionTTL:      30 * 24 * time.Hour,
		MCP:                true,
		LogRetention:       changelog.DefaultRetention,
		Push:               true,
		PushRetryFor:       push.DefaultRetryFor,
		PushKeep:           7 * 24 * time.Hour,
		PushFirstRetry:     push.DefaultFirstRetry,
		PushTimeout:        10 * time.Second,
		PushConcurrency:    8,
		SigningKeyGrace:    signing.DefaultGrace,
		OAuthAutoProvision: true,
	}
}

// Validate checks c, naming the field of the first problem, and fills
// derived values (the public URL and admin socket path).
func (c *Config) Validate() error {
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		return fmt.Errorf("addr: %q is not host:port: %w", c.Addr, err)
	}
	if c.MetricsAddr != "" {
		if _, _, err := net.SplitHostPort(c.MetricsAddr); err != nil {
			return fmt.Errorf("metrics-addr: %q is not host:port: %w", c.MetricsAddr, err)
		}
	}
	if strings.TrimSpace(c.DataDir) == "" {
		return errors.New("data: must not be empty")
	}
	if c.Store != "" && !IsPostgresURL(c.Store) {
		// The value may hold a password: never print it.
		return errors.New("store: want a postgres://user:password@host:port/database URL, or nothing for the bbolt file in --data")
	}
	if c.RequireSyncReplica && c.Store == "" {
		return errors.New("require-sync-replica: needs --store postgres://... (a bbolt file has no standby)")
	}
	if c.StorePoolSize < 0 || c.StorePoolSize > 10000 {
		return fmt.Errorf("store-pool-size: %d must be between 0 and 10000", c.StorePoolSize)
	}
	if err := c.validateTLS(); err != nil {
		return err
	}
	if c.PublicURL == "" {
		c.PublicURL = "http://" + c.Addr
	}
	u, err := url.Parse(c.PublicURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("public-url: %q must be an absolute http(s) URL without query or fragment", c.PublicURL)
	}
	c.PublicURL = strings.TrimRight(c.PublicURL, "/")
	if c.PprofAddr != "" {
		if _, _, err := net.SplitHostPort(c.PprofAddr); err != nil {
			return fmt.Errorf("pprof-addr: %q is not host:port: %w", c.PprofAddr, err)
		}
	}
	if err := c.validateGRPC(); err != nil {
		return err
	}
	if c.AdminSocket == "" {
		c.AdminSocket = filepath.Join(c.DataDir, "kfa.sock")
	}
	switch c.LogFormat {
	case "text", "json":
	default:
		return fmt.Errorf("log-format: %q must be text or json", c.LogFormat)
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return fmt.Errorf("log-level: %q must be debug, info, warn or error", c.LogLevel)
	}
	for _, f := range []struct {
		name string
		v    int
	}{
		{"ask-rate", c.AskRate}, {"max-open-tasks", c.MaxOpenTasks}, {"reply-rate", c.ReplyRate}, {"max-replies", c.MaxReplies},
		{"flag-hide-threshold", c.FlagHideThreshold}, {"flag-rate", c.FlagRate}, {"vote-rate", c.VoteRate},
		{"search-rate", c.SearchRate}, {"request-rate", c.RequestRate},
		{"auth-fail-rate", c.AuthFailRate}, {"max-streams", c.MaxStreams}, {"max-streams-per-agent", c.MaxStreamsPerAgent},
	} {
		if f.v < 0 {
			return fmt.Errorf("%s: %d must not be negative (0 disables the limit)", f.name, f.v)
		}
	}
	if c.MaxBodyBytes < 4096 {
		return fmt.Errorf("max-body-bytes: %d is too small (at least 4096)", c.MaxBodyBytes)
	}
	if c.MaxHeaderBytes < 4096 {
		return fmt.Errorf("max-header-bytes: %d is too small (at least 4096)", c.MaxHeaderBytes)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"read-header-timeout", c.ReadHeaderTimeout}, {"read-timeout", c.ReadTimeout}, {"write-timeout", c.WriteTimeout},
		{"idle-timeout", c.IdleTimeout}, {"shutdown-timeout", c.ShutdownTimeout}, {"card-max-age", c.CardMaxAge},
		{"batch-delay", c.BatchDelay}, {"lock-timeout", c.LockTimeout}, {"stream-heartbeat", c.StreamHeartbeat},
		{"web-session-ttl", c.WebSessionTTL}, {"push-retry-for", c.PushRetryFor}, {"push-keep", c.PushKeep},
		{"push-first-retry", c.PushFirstRetry}, {"push-timeout", c.PushTimeout}, {"signing-key-grace", c.SigningKeyGrace},
	} {
		if d.v <= 0 {
			return fmt.Errorf("%s: %s must be positive", d.name, d.v)
		}
	}
	if c.LogRetention < 0 {
		return fmt.Errorf("log-retention: %s must not be negative (0 keeps every event)", c.LogRetention)
	}
	for _, o := range c.MCPAllowedOrigins {
		if err := checkOrigin(o); err != nil {
			return fmt.Errorf("mcp-allowed-origins: %w", err)
		}
	}
	if _, err := push.ParseAllow(c.PushAllow); err != nil {
		return fmt.Errorf("push-allow: %w", err)
	}
	if c.PushConcurrency < 1 {
		return fmt.Errorf("push-concurrency: %d must be at least 1", c.PushConcurrency)
	}
	if c.BatchDelay > 100*time.Millisecond {
		return fmt.Errorf("batch-delay: %s is too long (at most 100ms; every write waits up to this long)", c.BatchDelay)
	}
	return c.validateOAuth()
}

// validateOAuth checks the OAuth settings.
func (c *Config) validateOAuth() error {
	seen := map[string]bool{}
	for _, is := range c.OAuthIssuers {
		if err := oauth.ValidateIssuer(is); err != nil {
			return fmt.Errorf("oauth-issuer: %w", err)
		}
		if seen[is] {
			return fmt.Errorf("oauth-issuer: %s is given twice", is)
		}
		seen[is] = true
	}
	for _, is := range c.OAuthPlainJWTIssuers {
		if !seen[is] {
			return fmt.Errorf("oauth-plain-jwt-issuer: %s is not an --oauth-issuer", is)
		}
	}
	for _, is := range c.OAuthWebAgentScopes {
		switch {
		case !seen[is]:
			return fmt.Errorf("oauth-web-agent-scopes: %s is not an --oauth-issuer", is)
		case c.OAuthWebClientID == "":
			return errors.New("oauth-web-agent-scopes: needs --oauth-web-client-id")
		}
	}
	for _, a := range c.OAuthAudiences {
		if strings.TrimSpace(a) == "" || strings.ContainsAny(a, " \t,") {
			return fmt.Errorf("oauth-audience: %q is not a resource identifier", a)
		}
	}
	switch {
	case len(c.OAuthIssuers) == 0 && len(c.OAuthAudiences) > 0:
		return errors.New("oauth-audience: needs --oauth-issuer")
	case len(c.OAuthIssuers) == 0 && c.OAuthWebClientID != "":
		return errors.New("oauth-web-client-id: needs --oauth-issuer")
	case c.OAuthWebClientID == "" && c.OAuthWebClientSecret != "":
		return errors.New("oauth-web-client-secret: a secret without --oauth-web-client-id")
	case c.OAuthWebClientID != "" && !c.Web:
		return errors.New("oauth-web-client-id: the web view is off (--web=false), so no one can sign in with it")
	}
	return nil
}

// checkOrigin checks one allowed origin: what a browser sends in Origin,
// an http(s) scheme and a host with an optional port, nothing after.
func checkOrigin(o string) error {
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		strings.TrimRight(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return fmt.Errorf("%q is not an origin such as https://app.example.com or http://localhost:3000", o)
	}
	return nil
}
