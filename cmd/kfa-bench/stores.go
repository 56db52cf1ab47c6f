package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/client"
)

// The store comparison (--store postgres://...): the load phases (asks,
// GetTask, ListTasks, search, replies) against kfa on bbolt, on
// PostgreSQL, and on PostgreSQL with two kfa processes sharing the load,
// each setup on fresh storage, their rounds alternating so that a drifting
// machine hits them alike.

// storeEnv names the PostgreSQL server to compare with when --store is
// not given (make bench passes no flags of its own); testStoreEnv, the
// test suite's server, stands in when storeEnv is unset, so that a
// machine set up for the PostgreSQL tests measures the PostgreSQL
// targets too.
const (
	storeEnv     = "KFA_BENCH_POSTGRES"
	testStoreEnv = "KFA_TEST_POSTGRES"
)

// storeFromEnv is the PostgreSQL URL the environment names, and the
// variable it came from ("" for none).
func storeFromEnv(getenv func(string) string) (url, from string) {
	for _, k := range []string{storeEnv, testStoreEnv} {
		if v := getenv(k); v != "" {
			return v, k
		}
	}
	return "", ""
}

// StoreBench is the store comparison of one run.
type StoreBench struct {
	// Server describes the PostgreSQL server and the settings that matter
	// for durability and speed (never the URL: it holds a password).
	Server string     `json:"server"`
	Runs   []StoreRun `json:"runs"`
	// Skipped names the phases measured on bbolt only, and why.
	Skipped string `json:"skipped"`
	// Trips is what an ask and a reply cost PostgreSQL in round trips;
	// TripsError says why they were not measured.
	Trips      Trips  `json:"trips"`
	TripsError string `json:"tripsError,omitempty"`
	// Follow is how soon search on one of the two processes finds a write
	// made through the other.
	Follow FollowDelay `json:"follow"`
}

// StoreRun is the load phases against one setup.
type StoreRun struct {
	Name      string     `json:"name"`
	Procs     int        `json:"procs"`
	Asks      Throughput `json:"asks"`
	GetTask   Throughput `json:"getTask"`
	ListTasks Throughput `json:"listTasks"`
	// ListDiscussions is the public discussions list's first page
	// (GET /api/v1/discussions, anonymous, the default page size).
	ListDiscussions Throughput `json:"listDiscussions"`
	Search          Throughput `json:"search"`
	SearchSkipped   string     `json:"searchSkipped,omitempty"`
	Replies         Throughput `json:"replies"`
}

// storeSkipped says which phases the comparison leaves out.
const storeSkipped = "the preloaded sizes, the import, push, the refusal flood and the one-at-a-time latencies run on bbolt only: " +
	"the preload writes bbolt files directly with this build's store code, and the others measure the server, not its store"

// checkStoreURL accepts a postgres:// or postgresql:// URL with a host.
// Its error never holds the password.
func checkStoreURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("--store: not a URL (postgres://user:password@host:port/db)")
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return fmt.Errorf("--store: want a postgres:// URL, got scheme %q", u.Scheme)
	}
	if u.Host == "" {
		return fmt.Errorf("--store: the URL names no host")
	}
	return nil
}

// withDatabase returns the URL s naming database db instead.
func withDatabase(s, db string) (string, error) {
	u, err := url.Parse(s)
	if err != nil {
		return "", err
	}
	u.Path = "/" + db
	u.RawPath = ""
	return u.String(), nil
}

// storeTarget is one setup under load: its processes share one store.
type storeTarget struct {
	run    StoreRun
	procs  []*kfaProc
	agents []agent
	mu     sync.Mutex
	all    []asked
}

// proc is the process worker w talks to: the load is split between them.
func (t *storeTarget) proc(w *worker) *kfaProc { return t.procs[w.id%len(t.procs)] }

// measureStores runs the comparison against the PostgreSQL server at
// b.store.
func (b *bench) measureStores(ctx context.Context) (StoreBench, error) {
	sb := StoreBench{Skipped: storeSkipped}
	conn, err := pgx.Connect(ctx, b.store)
	if err != nil {
		return sb, fmt.Errorf("--store: cannot connect to PostgreSQL (%s)", redactErr(err, b.store))
	}
	defer conn.Close(context.Background())
	sb.Server = describePostgres(ctx, conn)
	if b.storePool > 0 {
		sb.Server += fmt.Sprintf("; kfa --store-pool-size %d", b.storePool)
	} else {
		sb.Server += "; kfa's default pool (the larger of 4 and the CPUs)"
	}
	b.logf("stores: PostgreSQL %s", sb.Server)

	// Each PostgreSQL setup gets a new database, dropped at the end.
	var dbs []string
	defer func() {
		for _, db := range dbs {
			if _, err := conn.Exec(context.Background(), "DROP DATABASE IF EXISTS "+pgx.Identifier{db}.Sanitize()+" WITH (FORCE)"); err != nil {
				b.logf("drop database %s: %v", db, err)
			}
		}
	}()
	newDB := func() (string, error) {
		db := fmt.Sprintf("kfabench_%d_%d", os.Getpid(), len(dbs)+1)
		if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{db}.Sanitize()); err != nil {
			return "", fmt.Errorf("--store: create database %s (the role needs CREATEDB): %s", db, redactErr(err, b.store))
		}
		dbs = append(dbs, db)
		return withDatabase(b.store, db)
	}

	tripsDB, err := newDB()
	if err != nil {
		return sb, err
	}
	if sb.Trips, err = measureTrips(ctx, tripsDB); err != nil {
		sb.TripsError = redactErr(err, b.store)
	}
	b.logf("stores: %s", tripsLine(sb.Trips))

	var targets []*storeTarget
	defer func() {
		for _, t := range targets {
			for _, p := range t.procs {
				p.stop()
			}
		}
	}()
	start := func(name string, procs int, store string) error {
		t := &storeTarget{run: StoreRun{Name: name, Procs: procs}}
		targets = append(targets, t)
		for i := range procs {
			var extra []string
			if store != "" {
				extra = []string{"--store", store}
				if b.storePool > 0 {
					extra = append(extra, "--store-pool-size", fmt.Sprint(b.storePool))
				}
			}
			p, err := b.startKFA(ctx, filepath.Join(b.dir, fmt.Sprintf("store-%d-%d", len(targets), i)), extra...)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			t.procs = append(t.procs, p)
		}
		return nil
	}
	if err := start("bbolt, 1 process", 1, ""); err != nil {
		return sb, err
	}
	for _, procs := range []int{1, 2} {
		store, err := newDB()
		if err != nil {
			return sb, err
		}
		if err := start(fmt.Sprintf("PostgreSQL, %d process%s", procs, map[bool]string{true: "es"}[procs > 1]), procs, store); err != nil {
			return sb, err
		}
	}
	for _, t := range targets {
		if err := b.prepareTarget(ctx, t); err != nil {
			return sb, err
		}
	}
	b.measureTargets(ctx, targets)
	for _, t := range targets {
		sb.Runs = append(sb.Runs, t.run)
	}
	two := targets[len(targets)-1]
	for _, p := range two.procs {
		settle(ctx, p) // the followers have caught up with the load
	}
	reps := 50
	if b.quick {
		reps = 25
	}
	b.logf("stores: %d times an ask, two replies and a record import through one process, searched on the other", reps)
	sb.Follow = b.followDelay(ctx, two, reps)
	return sb, nil
}

// prepareTarget imports the search records and makes the agents through
// the first process's admin socket.
func (b *bench) prepareTarget(ctx context.Context, t *storeTarget) error {
	p := t.procs[0]
	if err := b.importRecords(ctx, p); err != nil {
		b.logf("%s: records import skipped: %v", t.run.Name, err)
	}
	adm := client.NewUnix(filepath.Join(p.dataDir, "kfa.sock"))
	for i := range b.agents {
		a, err := adm.CreateAgent(ctx, fmt.Sprintf("bench-%03d", i), []string{"read", "post"})
		if err != nil {
			return fmt.Errorf("%s: create agent: %w", t.run.Name, err)
		}
		t.agents = append(t.agents, agent{id: a.ID, token: a.Token})
	}
	return nil
}

// measureTargets runs the load phases, each setup's rounds alternating
// with the others'.
func (b *bench) measureTargets(ctx context.Context, targets []*storeTarget) {
	hc := httpClient(2 * (max(b.writers, b.readers) + 8))
	ask := func(t *storeTarget, owner func(w *worker) int, tag string) op {
		return func(ctx context.Context, w *worker, i int) error {
			o := owner(w)
			if err := do(ctx, hc, w, call{method: http.MethodPost, url: t.proc(w).url + "/a2a/v1/message:send",
				token: t.agents[o].token, body: askBody(w.id, i, "", tag), a2a: true}); err != nil {
				return err
			}
			a := asked{owner: o, task: jsonString(w.buf.Bytes(), "id", false), disc: jsonString(w.buf.Bytes(), "discussionId", true)}
			t.mu.Lock()
			t.all = append(t.all, a)
			t.mu.Unlock()
			return nil
		}
	}
	each := func(name string, workers int, fn func(t *storeTarget) op) []*phase {
		var ps []*phase
		for i, t := range targets {
			ps = append(ps, &phase{name: name, workers: workers, fn: fn(t), profile: b.profiler(t.procs[0], fmt.Sprintf("stores-%d-%s", i, name))})
		}
		return ps
	}

	b.logf("stores: asks, %d rounds, %d workers", b.nRounds, b.writers)
	asks := each("asks", b.writers, func(t *storeTarget) op {
		return ask(t, func(w *worker) int { return w.id % len(t.agents) }, "sask")
	})
	b.rounds(ctx, asks...)
	for i, t := range targets {
		t.run.Asks = asks[i].total.throughput(b.writers)
	}

	// Two pages of tasks for every agent, as in the main run.
	for _, t := range targets {
		perAgent := make([]int, len(t.agents))
		for _, a := range t.all {
			perAgent[a.owner]++
		}
		var short []int
		for i, n := range perAgent {
			for range max(0, 2*50-n) {
				short = append(short, i)
			}
		}
		var next atomic.Int64
		load(ctx, b.writers, 0, time.Hour, len(short), ask(t, func(*worker) int { return short[next.Add(1)-1] }, "stop"))
	}

	probe := &worker{rng: rand.New(rand.NewPCG(5, 6))}
	for _, t := range targets {
		for _, p := range t.procs {
			if err := do(ctx, hc, probe, call{method: http.MethodPost, url: p.url + "/a2a/v1/message:send", body: searchBody, a2a: true}); err != nil {
				t.run.SearchSkipped = "not measurable: " + truncate(err.Error(), 200)
			}
		}
	}
	b.logf("stores: GetTask, ListTasks, ListDiscussions and search, %d rounds, %d workers", b.nRounds, b.readers)
	gets := each("gettask", b.readers, func(t *storeTarget) op {
		return func(ctx context.Context, w *worker, _ int) error {
			a := t.all[w.rng.IntN(len(t.all))]
			return do(ctx, hc, w, call{method: http.MethodGet, url: t.proc(w).url + "/a2a/v1/tasks/" + a.task, token: t.agents[a.owner].token, a2a: true})
		}
	})
	lists := each("listtasks", b.readers, func(t *storeTarget) op {
		return func(ctx context.Context, w *worker, _ int) error {
			return do(ctx, hc, w, call{method: http.MethodGet, url: t.proc(w).url + "/a2a/v1/tasks?pageSize=50",
				token: t.agents[w.rng.IntN(len(t.agents))].token, a2a: true})
		}
	})
	discs := each("listdiscussions", b.readers, func(t *storeTarget) op {
		return func(ctx context.Context, w *worker, _ int) error {
			return do(ctx, hc, w, call{method: http.MethodGet, url: t.proc(w).url + "/api/v1/discussions"})
		}
	})
	searches := each("search", b.readers, func(t *storeTarget) op {
		return func(ctx context.Context, w *worker, _ int) error {
			return do(ctx, hc, w, call{method: http.MethodPost, url: t.proc(w).url + "/a2a/v1/message:send", body: searchBody, a2a: true})
		}
	})
	reads := append(append(append([]*phase{}, gets...), lists...), discs...)
	for i, t := range targets {
		if t.run.SearchSkipped == "" {
			reads = append(reads, searches[i])
		}
	}
	b.rounds(ctx, reads...)
	for i, t := range targets {
		t.run.GetTask = gets[i].total.throughput(b.readers)
		t.run.ListTasks = lists[i].total.throughput(b.readers)
		t.run.ListDiscussions = discs[i].total.throughput(b.readers)
		if t.run.SearchSkipped == "" {
			t.run.Search = searches[i].total.throughput(b.readers)
		}
	}

	b.logf("stores: replies, %d rounds, %d workers", b.nRounds, b.writers)
	replies := each("replies", b.writers, func(t *storeTarget) op {
		order := rand.New(rand.NewPCG(7, 8)).Perm(len(t.all))
		var next atomic.Int64
		return func(ctx context.Context, w *worker, _ int) error {
			n := int(next.Add(1)) - 1
			if n >= len(order) {
				return fmt.Errorf("out of discussions to reply on")
			}
			a := t.all[order[n]]
			return do(ctx, hc, w, call{method: http.MethodPost, url: t.proc(w).url + "/api/v1/discussions/" + a.disc + "/replies",
				token: t.agents[(a.owner+1)%len(t.agents)].token, body: replyBody, want: http.StatusCreated})
		}
	})
	b.rounds(ctx, replies...)
	for i, t := range targets {
		t.run.Replies = replies[i].total.throughput(b.writers)
	}
}

// describePostgres names the server's version and its durability
// settings.
func describePostgres(ctx context.Context, conn *pgx.Conn) string {
	var parts []string
	for _, s := range []string{"server_version", "fsync", "synchronous_commit", "full_page_writes", "shared_buffers"} {
		var v string
		if err := conn.QueryRow(ctx, "SELECT current_setting($1)", s).Scan(&v); err != nil {
			v = "?"
		}
		if s == "server_version" {
			parts = append(parts, v)
			continue
		}
		parts = append(parts, s+"="+v)
	}
	host := "?"
	if cfg := conn.Config(); cfg != nil {
		host = cfg.Host
	}
	return strings.Join(parts, ", ") + " on " + host
}

// redactErr is err's text with the URL's password, if any, blanked.
func redactErr(err error, store string) string {
	msg := err.Error()
	if u, perr := url.Parse(store); perr == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok && pw != "" {
			msg = strings.ReplaceAll(msg, pw, "xxxxx")
		}
	}
	return msg
}
