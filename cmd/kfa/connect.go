package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/kfa-project/kfa/admin"
	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/client"
	"github.com/kfa-project/kfa/server"
	"github.com/kfa-project/kfa/store"
	"github.com/kfa-project/kfa/store/postgres"
)

// dataFlags are the flags every command that touches the data takes.
type dataFlags struct {
	dir    string
	socket string
	json   bool
	store  string // a postgres:// URL; "" for the bbolt file in dir
}

// bind binds the data flags, --store included.
func (d *dataFlags) bind(fs *flag.FlagSet) {
	d.bindFile(fs)
	fs.StringVar(&d.store, "store", "", "the PostgreSQL database (`URL` postgres://...) the server keeps its data in, when it does; "+
		"with no server answering on the admin socket, the command opens it instead of kfa.db in --data")
}

// bindFile binds the data flags without --store, for a command that names
// its databases otherwise (kfa migrate).
func (d *dataFlags) bindFile(fs *flag.FlagSet) {
	fs.StringVar(&d.dir, "data", "./data", "data `directory` of the server")
	fs.StringVar(&d.socket, "admin-socket", "", "admin socket `path` (default <data>/kfa.sock)")
	fs.BoolVar(&d.json, "json", false, "print machine-readable JSON")
}

// connect reaches the data: through the running server's admin socket when
// one answers, otherwise by opening the database itself and serving the
// same admin API to itself in memory. create allows making a new database:
// only kfa init asks for it (and kfa serve opens the store itself), so
// that a mistyped --data is an error, not a second, empty database.
func connect(ctx context.Context, d dataFlags, create bool) (*client.Client, func(), error) {
	sock := d.socket
	if sock == "" {
		sock = filepath.Join(d.dir, admin.SocketName)
	}
	if c, p, ok := answering(ctx, sock); ok {
		if d.store != "" {
			if err := sameStore(ctx, p, d.store, sock); err != nil {
				return nil, nil, err
			}
		}
		return c, func() {}, nil
	}
	// A socket nobody answers is left by a server that died; the file
	// lock below tells whether another process still holds the data.
	if d.store != "" {
		// PostgreSQL takes several processes: open it beside any server.
		if !server.IsPostgresURL(d.store) {
			return nil, nil, usagef("--store takes a postgres:// URL (or nothing, for kfa.db in --data)")
		}
		core, err := server.OpenCore(server.CoreOptions{DataDir: d.dir, Store: d.store, PoolSize: 4})
		if err != nil {
			return nil, nil, err
		}
		c, done := serveDirect(core, d.dir)
		return c, done, nil
	}
	dbPath := filepath.Join(d.dir, store.FileName)
	if !create {
		if _, err := os.Stat(dbPath); errors.Is(err, os.ErrNotExist) {
			return nil, nil, &noDatabaseError{dir: d.dir, path: dbPath}
		}
	}
	core, err := server.OpenCore(server.CoreOptions{DataDir: d.dir, LockTimeout: 500 * time.Millisecond})
	if errors.Is(err, store.ErrLocked) {
		return nil, nil, fmt.Errorf("%s is locked by another process, and no kfa server answers on %s; "+
			"if kfa serve runs with a different --admin-socket, pass the same one here", dbPath, sock)
	}
	if err != nil {
		return nil, nil, err
	}
	c, done := serveDirect(core, d.dir)
	return c, done, nil
}

// answering is the client and the ping of the kfa process that answers
// on the admin socket sock; ok is false when none does (no socket, or the
// socket file of a server that died).
func answering(ctx context.Context, sock string) (c *client.Client, p api.Ping, ok bool) {
	if _, err := os.Stat(sock); err != nil {
		return nil, api.Ping{}, false
	}
	c = client.NewUnix(sock)
	pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	p, err := c.Ping(pctx)
	if err != nil {
		return nil, api.Ping{}, false
	}
	return c, p, true
}

// where is where the server p keeps its data, for messages.
func where(p api.Ping) string {
	if p.Store == nil {
		return p.DataDir
	}
	return p.Store.Name
}

// sameStore refuses --store when the server answering on sock keeps its
// data elsewhere: the command would go to the server and act on its data
// while the operator named another database. It names both.
func sameStore(ctx context.Context, p api.Ping, storeURL, sock string) error {
	if !server.IsPostgresURL(storeURL) {
		return usagef("--store takes a postgres:// URL (or nothing, for kfa.db in --data)")
	}
	want := postgres.Describe(storeURL)
	theirs := "a store this kfa cannot identify (is the server an older kfa?)"
	if p.Store != nil {
		theirs = where(p)
	}
	refuse := func(why string) error {
		return fmt.Errorf("--store names %s, but the kfa server answering on %s (pid %d) keeps its data in %s%s; "+
			"drop --store to work on the server's data, or stop that server (or give another --data or --admin-socket) "+
			"to open %s", want, sock, p.PID, theirs, why, want)
	}
	if p.Store == nil || p.Store.Backend != api.BackendPostgres {
		return refuse("")
	}
	ictx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	id, err := postgres.Identify(ictx, storeURL)
	switch {
	case err != nil:
		return fmt.Errorf("--store: cannot tell whether %s is the server's database: %w", want, err)
	case id == "":
		return refuse(", and " + want + " holds no kfa data")
	case id != p.Store.ID:
		return refuse(", another kfa database")
	}
	return nil
}

// serveDirect serves core's admin API to the returned client over an
// in-memory pipe; done stops it and closes the core.
func serveDirect(core *server.Core, dir string) (c *client.Client, done func()) {
	l := admin.NewPipeListener()
	log := slog.New(slog.DiscardHandler)
	srv := &http.Server{Handler: core.AdminHandler(log, buildInfo().Version, dir, "direct"), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	return client.NewDialer(l.Dial), func() {
		_ = srv.Close()
		_ = core.Close()
	}
}

// parseAndConnect is the start of most commands: parse the flags and
// arguments, check that there are n positional ones (named by names, for
// the usage error), then reach the data. The caller must call done.
func parseAndConnect(ctx context.Context, fs *flag.FlagSet, args []string, e env, d *dataFlags, n int, names string, create bool) ([]string, *client.Client, func(), error) {
	pos, err := parseArgs(fs, args, e)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := wantArgs(pos, n, names); err != nil {
		return nil, nil, nil, err
	}
	// d's fields were filled by parsing: read them only now.
	c, done, err := connect(ctx, *d, create)
	if err != nil {
		return nil, nil, nil, err
	}
	return pos, c, done, nil
}
