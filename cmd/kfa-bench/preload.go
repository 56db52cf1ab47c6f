package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/server"
	"github.com/kfa-project/kfa/tasks"
)

// Size is what the benchmark measures of kfa serve over a database
// preloaded with Tasks tasks.
type Size struct {
	Tasks       int     `json:"tasks"`
	Agents      int     `json:"agents"`
	LoadSeconds float64 `json:"loadSeconds"`
	// StartupMs is the median time from exec to the first /readyz 200 over
	// StartupRunsMs, each started with the file evicted from the page
	// cache.
	StartupMs     float64   `json:"startupMs"`
	StartupRunsMs []float64 `json:"startupRunsMs"`
	DBMiB         float64   `json:"dbMiB"`
	Memory        Memory    `json:"memory"`
	// GetTaskFirst is the first read of each sampled task after a start
	// with the file evicted from the page cache (a cold read, as after a
	// reboot); the others are steady state, one request at a time, in
	// rounds that alternate between the sizes.
	GetTaskFirst Latency `json:"getTaskFirstRead"`
	GetTask      Latency `json:"getTask"`
	ListFirst    Latency `json:"listFirstPage"`
	ListDeep     Latency `json:"listDeepPage"`
	DeepPage     int     `json:"deepPage"` // the page number ListDeep reads
}

// preloadAgents is how many agents own the preloaded tasks.
const preloadAgents = 100

// getTaskSample is how many distinct tasks GetTask reads at each size:
// spread evenly over the whole file, the same working set at every size.
const getTaskSample = 2000

// loadChunk is how many asks go into one bulk-load transaction.
const loadChunk = 20_000

// preloaded is one bulk-loaded database and the server over it.
type preloaded struct {
	res     Size
	dir     string
	agents  []agent
	sample  []asked
	deep    []struct{ token, pageToken string }
	p       *kfaProc
	get     *phase
	first   *phase
	deepPh  *phase
	startup []time.Duration
}

// runSizes bulk-loads each size into a data directory of its own, starts a
// kfa serve over each, and measures reads in rounds that alternate between
// the sizes (so the comparison sees the same machine), then memory, file
// size and startup time.
func (b *bench) runSizes(ctx context.Context) ([]Size, error) {
	var all []*preloaded
	defer func() {
		for _, pl := range all {
			if pl.p != nil {
				pl.p.stop()
			}
		}
	}()
	for _, n := range b.sizes {
		pl := &preloaded{res: Size{Tasks: n, Agents: preloadAgents}, dir: filepath.Join(b.dir, fmt.Sprintf("preload-%d", n))}
		t0 := time.Now()
		var err error
		if pl.agents, pl.sample, err = bulkLoad(ctx, pl.dir, n); err != nil {
			return nil, fmt.Errorf("preload %d: %w", n, err)
		}
		pl.res.LoadSeconds = time.Since(t0).Seconds()
		b.logf("preload %d: bulk-loaded in %.1fs", n, pl.res.LoadSeconds)
		all = append(all, pl)
	}
	hc := httpClient(4)
	// Page tokens for the deep pages come from walking each list once, on a
	// server of its own: the walk reads half the file, which the measured
	// server must not have read. (Tokens are keyed by the file's secret, so
	// they stay valid across restarts.)
	for _, pl := range all {
		p, err := b.startKFA(ctx, pl.dir)
		if err != nil {
			return nil, err
		}
		err = b.deepTokens(ctx, hc, p, pl)
		p.stop()
		if err != nil {
			return nil, err
		}
	}
	for _, pl := range all {
		var err error
		if pl.p, err = b.startCold(ctx, pl.dir); err != nil {
			return nil, err
		}
		pl.startup = append(pl.startup, pl.p.startup)
		b.logf("preload %d: kfa serve ready in %s (page cache evicted)", pl.res.Tasks, pl.p.startup.Round(time.Millisecond))
		if err := b.preparePreloaded(ctx, hc, pl); err != nil {
			return nil, err
		}
	}
	var phases []*phase
	for _, kind := range []func(*preloaded) *phase{
		func(pl *preloaded) *phase { return pl.get },
		func(pl *preloaded) *phase { return pl.first },
		func(pl *preloaded) *phase { return pl.deepPh },
	} {
		for _, pl := range all {
			phases = append(phases, kind(pl))
		}
	}
	b.logf("preloads: %d rounds of GetTask, first and deep ListTasks pages, one request at a time", b.nRounds)
	b.roundsOf(ctx, b.sizeRound, phases...)
	for _, pl := range all {
		pl.res.GetTask = pl.get.total.throughput(1).Latency
		pl.res.ListFirst = pl.first.total.throughput(1).Latency
		pl.res.ListDeep = pl.deepPh.total.throughput(1).Latency
		var err error
		if pl.res.Memory, err = pl.p.memory(); err != nil {
			return nil, err
		}
	}
	for _, pl := range all {
		pl.p.stop()
		pl.p = nil
	}
	// Two more cold starts of each, alternating.
	for range 2 {
		for _, pl := range all {
			p, err := b.startCold(ctx, pl.dir)
			if err != nil {
				return nil, err
			}
			pl.startup = append(pl.startup, p.startup)
			p.stop()
		}
	}
	var out []Size
	for _, pl := range all {
		for _, s := range pl.startup {
			pl.res.StartupRunsMs = append(pl.res.StartupRunsMs, ms(s))
		}
		st := slices.Clone(pl.startup)
		slices.Sort(st)
		pl.res.StartupMs = ms(st[len(st)/2])
		pl.res.DBMiB = fileMiB(filepath.Join(pl.dir, "kfa.db"))
		out = append(out, pl.res)
	}
	return out, nil
}

// startCold starts kfa serve over dataDir after dropping its file from
// the page cache.
func (b *bench) startCold(ctx context.Context, dataDir string) (*kfaProc, error) {
	if err := evictCache(filepath.Join(dataDir, "kfa.db")); err != nil {
		return nil, fmt.Errorf("evict page cache: %w", err)
	}
	return b.startKFA(ctx, dataDir)
}

// deepTokens walks the lists of a few agents to the middle and keeps the
// page tokens there.
func (b *bench) deepTokens(ctx context.Context, hc *http.Client, p *kfaProc, pl *preloaded) error {
	base := p.url + "/a2a/v1/tasks"
	w := &worker{rng: rand.New(rand.NewPCG(uint64(pl.res.Tasks), 8))}
	perAgent := pl.res.Tasks / len(pl.agents)
	pl.res.DeepPage = max(1, perAgent/50/2)
	for i := range min(4, len(pl.agents)) {
		tok := ""
		for range pl.res.DeepPage - 1 {
			if err := do(ctx, hc, w, call{method: http.MethodGet, url: base + url50(tok), token: pl.agents[i].token, a2a: true}); err != nil {
				return err
			}
			if tok = jsonString(w.buf.Bytes(), "nextPageToken", true); tok == "" {
				break
			}
		}
		pl.deep = append(pl.deep, struct{ token, pageToken string }{pl.agents[i].token, tok})
	}
	return nil
}

// preparePreloaded reads every sampled task once (GetTaskFirst: cold),
// every agent's first page and every deep page once, and builds the
// phases.
func (b *bench) preparePreloaded(ctx context.Context, hc *http.Client, pl *preloaded) error {
	base := pl.p.url + "/a2a/v1/tasks"
	w := &worker{rng: rand.New(rand.NewPCG(uint64(pl.res.Tasks), 9))}
	var first []time.Duration
	for _, t := range pl.sample {
		t0 := time.Now()
		if err := do(ctx, hc, w, call{method: http.MethodGet, url: base + "/" + t.task, token: pl.agents[t.owner].token, a2a: true}); err != nil {
			return err
		}
		first = append(first, time.Since(t0))
	}
	pl.res.GetTaskFirst = summarize(first)
	for _, a := range pl.agents {
		if err := do(ctx, hc, w, call{method: http.MethodGet, url: base + url50(""), token: a.token, a2a: true}); err != nil {
			return err
		}
	}
	for _, d := range pl.deep {
		if err := do(ctx, hc, w, call{method: http.MethodGet, url: base + url50(d.pageToken), token: d.token, a2a: true}); err != nil {
			return err
		}
	}
	pl.get = &phase{name: "get", workers: 1, fn: func(ctx context.Context, w *worker, _ int) error {
		t := pl.sample[w.rng.IntN(len(pl.sample))]
		return do(ctx, hc, w, call{method: http.MethodGet, url: base + "/" + t.task, token: pl.agents[t.owner].token, a2a: true})
	}}
	pl.first = &phase{name: "first", workers: 1, fn: func(ctx context.Context, w *worker, _ int) error {
		return do(ctx, hc, w, call{method: http.MethodGet, url: base + url50(""), token: pl.agents[w.rng.IntN(len(pl.agents))].token, a2a: true})
	}}
	pl.deepPh = &phase{name: "deep", workers: 1, fn: func(ctx context.Context, w *worker, _ int) error {
		d := pl.deep[w.rng.IntN(len(pl.deep))]
		return do(ctx, hc, w, call{method: http.MethodGet, url: base + url50(d.pageToken), token: d.token, a2a: true})
	}}
	return nil
}

func url50(pageToken string) string {
	if pageToken == "" {
		return "?pageSize=50"
	}
	return "?pageSize=50&pageToken=" + pageToken
}

// bulkLoad creates the agents and n asks with the real store code (the
// store's LoadAsks runs CreateAsk's transaction body), in big transactions,
// while no server runs. It returns the agents with their tokens and a
// sample of the tasks.
func bulkLoad(ctx context.Context, dataDir string, n int) ([]agent, []asked, error) {
	core, err := server.OpenCore(server.CoreOptions{DataDir: dataDir})
	if err != nil {
		return nil, nil, err
	}
	defer core.Close()
	ags := make([]agent, preloadAgents)
	names := make([]string, preloadAgents)
	for i := range ags {
		c, err := core.Agents.Create(ctx, fmt.Sprintf("load-%03d", i), []agents.Scope{agents.ScopeRead, agents.ScopePost})
		if err != nil {
			return nil, nil, err
		}
		ags[i] = agent{id: c.Agent.ID, token: c.Token}
		names[i] = c.Agent.Name
	}
	// Status timestamps one millisecond apart, ending now.
	start := time.Now().Add(-time.Duration(n) * time.Millisecond)
	rng := rand.New(rand.NewPCG(uint64(n), 10))
	var sample []asked
	// GetTask reads a fixed sample of tasks spread evenly over the whole
	// file: the same working set at every size, so memory and latency
	// compare sizes, not sample sizes.
	sampleEvery := max(1, n/getTaskSample)
	chunk := make([]tasks.CreateAsk, 0, loadChunk)
	for i := 0; i < n; i++ {
		owner := rng.IntN(len(ags))
		data, _ := json.Marshal(map[string]string{
			"action":   "ask",
			"question": "How do I keep an A2A task open across a server restart? (load " + strconv.Itoa(i) + ")",
			"details":  "We run kfa behind a reverse proxy with two replicas; after a deploy the streams drop.",
			"kind":     "howto", "product": "kfa",
		})
		in := tasks.AskInput{
			Asker: tasks.Asker{ID: ags[owner].id, Name: names[owner]},
			Message: a2a.Message{MessageID: "load-" + strconv.Itoa(i), Role: a2a.RoleUser,
				Parts: []a2a.Part{a2a.DataPart(data)}},
			Question: "How do I keep an A2A task open across a server restart? (load " + strconv.Itoa(i) + ")",
			Details:  "We run kfa behind a reverse proxy with two replicas; after a deploy the streams drop.",
		}
		in.Kind, in.Product = "howto", "kfa"
		c := tasks.NewAsk(in, start.Add(time.Duration(i)*time.Millisecond), 0)
		chunk = append(chunk, c)
		if i%sampleEvery == 0 {
			sample = append(sample, asked{owner: owner, task: c.Task.ID, disc: c.Task.DiscussionID})
		}
		if len(chunk) == loadChunk || i == n-1 {
			if err := core.DB.LoadAsks(chunk); err != nil {
				return nil, nil, err
			}
			chunk = chunk[:0]
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
		}
	}
	return ags, sample, nil
}

func fileMiB(path string) float64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return float64(st.Size()) / (1 << 20)
}
