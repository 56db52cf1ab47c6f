package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/admin"
	"github.com/kfa-project/kfa/client"
	"github.com/kfa-project/kfa/mcpserver"
	"github.com/kfa-project/kfa/search"
	"github.com/kfa-project/kfa/server"
	"github.com/kfa-project/kfa/service"
	"github.com/kfa-project/kfa/store"
)

func runMCP(ctx context.Context, e env, args []string) error {
	b := &mcpBridge{log: slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	fs := newFlagSet("mcp", "kfa mcp [--data DIR] [--public-url URL]",
		"Serve kfa's MCP tools (search, fetch, get_changes, whoami) over stdio, for a local MCP client that\n"+
			"starts kfa as a subprocess. Each call reads the data directory through the running server's admin\n"+
			"socket; when no server runs, the call opens kfa.db read-only (never creating a database) and the search\n"+
			"index beside it. Only the protocol goes to stdout; warnings go to stderr. KFA_TOKEN gives whoami an agent\n"+
			"token to report on; the other tools need none.", e,
		"kfa mcp --data ./data",
		"KFA_TOKEN=kfa_... kfa mcp --data /var/lib/kfa --public-url https://kfa.example.com")
	fs.StringVar(&b.dir, "data", "./data", "data `directory` of the server")
	fs.StringVar(&b.socket, "admin-socket", "", "admin socket `path` (default <data>/kfa.sock)")
	fs.StringVar(&b.publicURL, "public-url", "http://127.0.0.1:8080",
		"base `URL` of the links in results when no server runs (a running server uses its own)")
	fs.StringVar(&b.token, "token", "",
		"agent `token` that whoami reports on; prefer KFA_TOKEN, which the process list does not show")
	pos, err := parseArgs(fs, args, e)
	if err != nil {
		return err
	}
	if err := wantArgs(pos, 0, ""); err != nil {
		return err
	}
	if b.socket == "" {
		b.socket = filepath.Join(b.dir, admin.SocketName)
	}
	// The first session checks that there is something to read, and gives
	// the instructions of the server that will answer.
	instructions, err := b.instructions(ctx)
	if err != nil {
		return err
	}
	srv, err := mcpserver.NewForwarder(buildInfo().Version, instructions, b.dial)
	if err != nil {
		return err
	}
	pipe := newStdio(e.stdin, e.stdout)
	err = srv.Run(ctx, &mcp.IOTransport{Reader: pipe, Writer: pipe})
	if ctx.Err() != nil {
		return nil // stopped by a signal
	}
	return err
}

// mcpBridge opens, for each tool call, a session to whichever kfa MCP
// server can answer: the running server's, over its admin socket, or one
// of its own over the file. The file is held only during the call, so a
// kfa serve started meanwhile is not locked out.
type mcpBridge struct {
	dir, socket, publicURL, token string
	log                           *slog.Logger
}

var mcpClient = &mcp.Implementation{Name: "kfa-mcp-stdio", Version: version}

func (b *mcpBridge) instructions(ctx context.Context) (string, error) {
	cs, done, err := b.dial(ctx, "")
	if err != nil {
		return "", err
	}
	defer done()
	return cs.InitializeResult().Instructions, nil
}

// dial opens a session for one call of tool. Only whoami carries the
// token.
func (b *mcpBridge) dial(ctx context.Context, tool string) (*mcp.ClientSession, func(), error) {
	token := ""
	if tool == mcpserver.ToolWhoami {
		token = b.token
	}
	if b.serverAnswers(ctx) {
		return b.dialServer(ctx, token)
	}
	return b.dialFile(ctx, tool)
}

// serverAnswers reports whether a kfa server answers on the admin socket.
func (b *mcpBridge) serverAnswers(ctx context.Context) bool {
	if _, err := os.Stat(b.socket); err != nil {
		return false
	}
	pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	_, err := client.NewUnix(b.socket).Ping(pctx)
	return err == nil
}

// dialServer opens a session to the running server's MCP tools on its
// admin socket.
func (b *mcpBridge) dialServer(ctx context.Context, token string) (*mcp.ClientSession, func(), error) {
	var d net.Dialer
	tr := &http.Transport{DisableCompression: true, DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return d.DialContext(ctx, "unix", b.socket)
	}}
	var rt http.RoundTripper = tr
	if token != "" {
		rt = bearer{next: tr, token: token}
	}
	cs, err := mcp.NewClient(mcpClient, nil).Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: "http://kfa-admin/admin/v1/mcp", HTTPClient: &http.Client{Transport: rt},
		DisableStandaloneSSE: true, MaxRetries: -1,
	}, nil)
	if err != nil {
		tr.CloseIdleConnections()
		var we *jsonrpc.Error
		if token != "" && errors.As(err, &we) && we.Code == int64(a2a.Unauthenticated.RPCCode) {
			return nil, nil, errors.New(mcpserver.TokenRefused)
		}
		return nil, nil, fmt.Errorf("the kfa server on %s: %w", b.socket, err)
	}
	return cs, func() {
		_ = cs.Close()
		tr.CloseIdleConnections()
	}, nil
}

// bearer adds the token to every request.
type bearer struct {
	next  http.RoundTripper
	token string
}

func (t bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+t.token)
	return t.next.RoundTrip(r)
}

// dialFile opens kfa.db read-only (and, for a search, the index) and a
// session to an MCP server of this process over them, all closed when the
// call is done.
func (b *mcpBridge) dialFile(ctx context.Context, tool string) (*mcp.ClientSession, func(), error) {
	dbPath := filepath.Join(b.dir, store.FileName)
	if _, err := os.Stat(dbPath); errors.Is(err, os.ErrNotExist) {
		return nil, nil, &noDatabaseError{dir: b.dir, path: dbPath}
	}
	core, err := server.OpenCore(server.CoreOptions{DataDir: b.dir, ReadOnly: true, LockTimeout: 500 * time.Millisecond})
	if errors.Is(err, store.ErrLocked) {
		return nil, nil, fmt.Errorf("%s is locked by another process, and no kfa server answers on %s; "+
			"if kfa serve runs with a different --admin-socket, pass the same one here", dbPath, b.socket)
	}
	if err != nil {
		return nil, nil, err
	}
	closers := []func() error{core.Close}
	closeAll := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			_ = closers[i]()
		}
	}
	deps := service.Deps{Tasks: core.Tasks, Discussions: core.Discussions, Agents: core.Agents, Records: core.Records}
	if tool == mcpserver.ToolSearch {
		var idx *search.Index
		if idx, err = server.OpenIndex(ctx, core, b.dir, b.publicURL, b.log); err != nil {
			closeAll()
			return nil, nil, err
		}
		closers = append(closers, idx.Close)
		deps.Search = idx
	}
	svc, err := service.New(service.Config{PublicURL: b.publicURL, Version: version}, deps)
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	srv, err := mcpserver.NewServer(mcpserver.Deps{
		Service: svc, Token: b.token,
		PublicURL: b.publicURL, Version: buildInfo().Version, ContributorWrites: true, Log: b.log,
	})
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	closers = append(closers, func() error { _ = ss.Close(); return ss.Wait() })
	cs, err := mcp.NewClient(mcpClient, nil).Connect(ctx, ct, nil)
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	closers = append(closers, cs.Close)
	return cs, closeAll, nil
}
