package pgha

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Cluster is a set of PostgreSQL servers replicating one another, under
// one directory, with one superuser (postgres) and its password.
type Cluster struct {
	bin      string
	root     string
	password string
	asOwner  bool // root: run the server commands as the postgres user
	uid, gid int
	watchdog *os.Process // stops the servers if this process dies first

	mu    sync.Mutex
	nodes []*Node
}

// Node is one server of a Cluster: a data directory and its port, the
// same for the node's whole life (a multi-host URL names it).
type Node struct {
	c *Cluster
	// Name is the node's cluster_name, which is the application_name its
	// walreceiver reports as a standby.
	Name string
	// Port is the node's loopback port.
	Port int
	dir  string
}

// FindBin returns the directory of the server binaries (initdb, pg_ctl,
// pg_basebackup, pg_rewind), as .ci/postgres.sh finds it.
func FindBin() (string, error) {
	var dirs []string
	if b := os.Getenv("PG_BIN"); b != "" {
		dirs = append(dirs, b)
	}
	dirs = append(dirs, "/usr/lib/postgresql/15/bin")
	if more, _ := filepath.Glob("/usr/lib/postgresql/*/bin"); len(more) > 0 {
		for i := len(more) - 1; i >= 0; i-- { // the newest first
			dirs = append(dirs, more[i])
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		dirs = append(dirs, filepath.Dir(p))
	}
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "pg_rewind")); err == nil {
			return d, nil
		}
	}
	return "", errors.New("pgha: no PostgreSQL server binaries (install the postgresql package, or set PG_BIN)")
}

// New makes an empty cluster under a new directory in parent ("" for the
// system's temporary directory). Close stops its servers and deletes it;
// if this process ends without Close (a test that panicked or timed out),
// a watchdog process does both within a few seconds.
func New(parent string) (*Cluster, error) {
	bin, err := FindBin()
	if err != nil {
		return nil, err
	}
	if parent == "" {
		parent = os.TempDir()
	}
	var b [9]byte
	_, _ = rand.Read(b[:])
	c := &Cluster{bin: bin, root: filepath.Join(parent, "kfa-pgha-"+hex.EncodeToString(b[:6])), password: hex.EncodeToString(b[6:]) + randHex(12)}
	if err := os.MkdirAll(c.root, 0o755); err != nil {
		return nil, err
	}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("pgha: run as root, the servers run as the postgres user: %w", err)
		}
		c.asOwner = true
		c.uid, _ = strconv.Atoi(u.Uid)
		c.gid, _ = strconv.Atoi(u.Gid)
		if err := os.Chown(c.root, c.uid, c.gid); err != nil {
			return nil, err
		}
	}
	if err := c.startWatchdog(); err != nil {
		_ = os.RemoveAll(c.root)
		return nil, err
	}
	return c, nil
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Password is the postgres user's password.
func (c *Cluster) Password() string { return c.password }

// Dir is the cluster's directory: each node's data directory and server
// log (NAME.log) are in it.
func (c *Cluster) Dir() string { return c.root }

// run runs a server binary (as the postgres user when root), returning
// its output in the error when it fails.
func (c *Cluster) run(ctx context.Context, name string, args ...string) error {
	path := filepath.Join(c.bin, name)
	var cmd *exec.Cmd
	if c.asOwner {
		cmd = exec.CommandContext(ctx, "runuser", append([]string{"-u", "postgres", "--", path}, args...)...)
	} else {
		cmd = exec.CommandContext(ctx, path, args...)
	}
	cmd.Dir = c.root
	out, err := cmd.CombinedOutput()
	if os.Getenv("PGHA_DEBUG") != "" { // every command and its output, for a failing test
		fmt.Fprintf(os.Stderr, "pgha: %s\n", strings.ReplaceAll(fmt.Sprintf("%s %v\n%s", name, args, out), c.password, "***"))
	}
	if err != nil {
		return fmt.Errorf("pgha: %s: %w\n%s", name, err, strings.ReplaceAll(string(out), c.password, "***"))
	}
	return nil
}

// conninfo is the keyword form of a connection to n as postgres, named
// app (a standby's primary_conninfo names its walreceiver so).
func (n *Node) conninfo(app string) string {
	s := fmt.Sprintf("host=127.0.0.1 port=%d user=postgres password=%s dbname=postgres", n.Port, n.c.password)
	if app != "" {
		s += " application_name=" + app
	}
	return s
}

// URL is a postgres:// URL of database db on n alone.
func (n *Node) URL(db string) string {
	return fmt.Sprintf("postgres://postgres:%s@127.0.0.1:%d/%s?sslmode=disable", n.c.password, n.Port, db)
}

// MultiURL is the URL of database db on every node, as kfa is given it:
// every host, and target_session_attrs=read-write, so that a connection
// goes to whichever is the primary.
func (c *Cluster) MultiURL(db string, nodes ...*Node) string {
	hosts := make([]string, len(nodes))
	for i, n := range nodes {
		hosts[i] = "127.0.0.1:" + strconv.Itoa(n.Port)
	}
	return fmt.Sprintf("postgres://postgres:%s@%s/%s?sslmode=disable&target_session_attrs=read-write",
		c.password, strings.Join(hosts, ","), db)
}

// Log returns the end of n's server log (for a failure's message).
func (n *Node) Log() string {
	b, _ := os.ReadFile(n.logFile())
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

func (n *Node) logFile() string { return filepath.Join(n.c.root, n.Name+".log") }

// settings are the primary's: replication, and what pg_rewind needs
// (wal_log_hints, full_page_writes, which is on by default). A standby
// copies them with its base backup.
const settings = `
listen_addresses = '127.0.0.1'
fsync = off
wal_log_hints = on
wal_keep_size = '1GB'
max_wal_senders = 10
max_connections = 100
wal_receiver_status_interval = 1s
`

// freePort returns a loopback port nothing listens on now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Primary initializes a new primary named name and starts it.
func (c *Cluster) Primary(ctx context.Context, name string) (*Node, error) {
	n := &Node{c: c, Name: name, dir: filepath.Join(c.root, name)}
	pw := filepath.Join(c.root, "pwfile")
	if err := c.writeFile(pw, c.password+"\n", 0o600); err != nil {
		return nil, err
	}
	defer os.Remove(pw)
	if err := c.run(ctx, "initdb", "-D", n.dir, "-U", "postgres", "--auth=scram-sha-256", "--pwfile="+pw,
		"-E", "UTF8", "--locale=C.UTF-8"); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(n.dir, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	_, err = f.WriteString(settings)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	if err := n.startOnFreePort(ctx); err != nil {
		return nil, err
	}
	return n, nil
}

// writeFile writes a file the servers' user owns.
func (c *Cluster) writeFile(path, content string, mode os.FileMode) error {
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		return err
	}
	if c.asOwner {
		return os.Chown(path, c.uid, c.gid)
	}
	return nil
}

// Standby makes a new node named name from a base backup of of
// (pg_basebackup -R, so it streams from of), starts it, and waits until
// of sees it streaming.
func (c *Cluster) Standby(ctx context.Context, name string, of *Node) (*Node, error) {
	n := &Node{c: c, Name: name, dir: filepath.Join(c.root, name)}
	if err := c.run(ctx, "pg_basebackup", "-D", n.dir, "-d", of.conninfo(name), "-R", "-X", "stream", "-c", "fast"); err != nil {
		return nil, err
	}
	if err := n.startOnFreePort(ctx); err != nil {
		return nil, err
	}
	if err := of.WaitStandby(ctx, name, false); err != nil {
		return nil, err
	}
	return n, nil
}

// startOnFreePort starts a new node on a free port, trying another when
// something took the one it chose.
func (n *Node) startOnFreePort(ctx context.Context) error {
	var err error
	for range 5 {
		if n.Port, err = freePort(); err != nil {
			return err
		}
		if err = n.Start(ctx); err == nil {
			n.c.mu.Lock()
			n.c.nodes = append(n.c.nodes, n)
			n.c.mu.Unlock()
			return nil
		}
	}
	return fmt.Errorf("%w\n%s", err, n.Log())
}

// Start starts n on its port and waits until it accepts connections (a
// standby: until it is consistent).
func (n *Node) Start(ctx context.Context) error {
	return n.c.run(ctx, "pg_ctl", "-D", n.dir, "-l", n.logFile(), "-w", "-t", "60",
		"-o", fmt.Sprintf("-p %d -k %s -c cluster_name=%s", n.Port, n.c.root, n.Name), "start")
}

// Stop stops n: mode "immediate" is a crash (no checkpoint, clients cut
// off at once), "fast" a clean shutdown.
func (n *Node) Stop(ctx context.Context, mode string) error {
	return n.c.run(ctx, "pg_ctl", "-D", n.dir, "-m", mode, "-w", "-t", "60", "stop")
}

// Promote makes the standby n a primary and waits until it accepts
// writes.
func (n *Node) Promote(ctx context.Context) error {
	return n.c.run(ctx, "pg_ctl", "-D", n.dir, "-w", "-t", "60", "promote")
}

// Rewind turns the stopped former primary n into a standby of source,
// the primary promoted in its place: pg_rewind takes back what n wrote
// after the standby's timeline forked from it (it first finishes n's
// crash recovery when n stopped uncleanly) and writes its recovery
// configuration; n then starts as source's standby and Rewind waits until
// source sees it streaming.
func (n *Node) Rewind(ctx context.Context, source *Node) error {
	// A promoted server records its new timeline in its control file at
	// its first checkpoint, and pg_rewind reads the timeline there: before
	// that it finds both on one timeline and rewinds nothing.
	if err := source.Exec(ctx, "CHECKPOINT"); err != nil {
		return err
	}
	if err := n.c.run(ctx, "pg_rewind", "-D", n.dir, "--source-server="+source.conninfo(n.Name), "-R"); err != nil {
		return err
	}
	// pg_rewind writes standby.signal with -R; an older one may not when
	// no rewind was needed.
	if _, err := os.Stat(filepath.Join(n.dir, "standby.signal")); err != nil {
		if err := n.c.writeFile(filepath.Join(n.dir, "standby.signal"), "", 0o600); err != nil {
			return err
		}
		f, err := os.OpenFile(filepath.Join(n.dir, "postgresql.auto.conf"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(f, "\nprimary_conninfo = '%s'\n", source.conninfo(n.Name))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	if err := n.Start(ctx); err != nil {
		return fmt.Errorf("%w\n%s", err, n.Log())
	}
	if err := source.WaitStandby(ctx, n.Name, false); err != nil {
		return fmt.Errorf("%w\n%s", err, n.Log())
	}
	return nil
}

// Close stops every node at once and deletes the cluster's directory.
func (c *Cluster) Close() {
	c.mu.Lock()
	nodes := c.nodes
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, n := range nodes {
		if _, err := os.Stat(filepath.Join(n.dir, "postmaster.pid")); err == nil {
			_ = n.Stop(ctx, "immediate")
		}
	}
	_ = os.RemoveAll(c.root)
	c.stopWatchdog()
}
