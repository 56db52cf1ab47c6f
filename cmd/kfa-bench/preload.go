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
	// StartupRunsMs.
	StartupMs     float64   `json:"startupMs"`
	StartupRunsMs []float64 `json:"startupRunsMs"`
	DBMiB         float64   `json:"dbMiB"`
	Memory        Memory    `json:"memory"`
	// One request at a time: latency without queueing.
	GetTask   Latency `json:"getTask"`
	ListFirst Latency `json:"listFirstPage"`
	ListDeep  Latency `json:"listDeepPage"`
	DeepPage  int     `json:"deepPage"` // the page number ListDeep reads
}

// preloadAgents is how many agents own the preloaded tasks.
const preloadAgents = 100

// getTaskSample is how many distinct tasks GetTask reads at each size.
const getTaskSample = 2000

// loadChunk is how many asks go into one bulk-load transaction.
const loadChunk = 20_000

// runSize bulk-loads n tasks into a fresh data directory, then starts kfa
// serve over it and measures reads, startup, memory and file size.
func (b *bench) runSize(ctx context.Context, n int) (Size, error) {
	res := Size{Tasks: n, Agents: preloadAgents}
	dataDir := filepath.Join(b.dir, fmt.Sprintf("preload-%d", n))
	t0 := time.Now()
	ags, sample, err := bulkLoad(ctx, dataDir, n)
	if err != nil {
		return res, err
	}
	res.LoadSeconds = time.Since(t0).Seconds()
	b.logf("preload %d: loaded in %.1fs", n, res.LoadSeconds)

	p, err := b.startKFA(ctx, dataDir)
	if err != nil {
		return res, err
	}
	starts := []time.Duration{p.startup}
	hc := httpClient(2)
	w := &worker{rng: rand.New(rand.NewPCG(uint64(n), 9))}
	base := p.url + "/a2a/v1/tasks"

	// The deep page: walk a few agents' lists to the middle once.
	perAgent := n / len(ags)
	res.DeepPage = max(1, perAgent/50/2)
	var deep []struct{ token, pageToken string }
	for i := range min(4, len(ags)) {
		tok := ""
		for range res.DeepPage - 1 {
			q := url50(tok)
			if err := do(ctx, hc, w, call{method: http.MethodGet, url: base + q, token: ags[i].token, a2a: true}); err != nil {
				p.stop()
				return res, err
			}
			tok = jsonString(w.buf.Bytes(), "nextPageToken", true)
			if tok == "" {
				break
			}
		}
		deep = append(deep, struct{ token, pageToken string }{ags[i].token, tok})
	}

	dur := b.sizeTime
	res.GetTask = load(ctx, 1, b.warm, dur, 0, func(ctx context.Context, w *worker, _ int) error {
		t := sample[w.rng.IntN(len(sample))]
		return do(ctx, hc, w, call{method: http.MethodGet, url: base + "/" + t.task, token: ags[t.owner].token, a2a: true})
	}).Latency
	res.ListFirst = load(ctx, 1, b.warm, dur, 0, func(ctx context.Context, w *worker, _ int) error {
		return do(ctx, hc, w, call{method: http.MethodGet, url: base + url50(""), token: ags[w.rng.IntN(len(ags))].token, a2a: true})
	}).Latency
	res.ListDeep = load(ctx, 1, b.warm, dur, 0, func(ctx context.Context, w *worker, _ int) error {
		d := deep[w.rng.IntN(len(deep))]
		return do(ctx, hc, w, call{method: http.MethodGet, url: base + url50(d.pageToken), token: d.token, a2a: true})
	}).Latency
	if res.Memory, err = p.memory(); err != nil {
		p.stop()
		return res, err
	}
	p.stop()
	hc.CloseIdleConnections()

	for range 2 {
		p, err := b.startKFA(ctx, dataDir)
		if err != nil {
			return res, err
		}
		starts = append(starts, p.startup)
		p.stop()
	}
	for _, s := range starts {
		res.StartupRunsMs = append(res.StartupRunsMs, ms(s))
	}
	slices.Sort(starts)
	res.StartupMs = ms(starts[len(starts)/2])
	res.DBMiB = fileMiB(filepath.Join(dataDir, "kfa.db"))
	return res, nil
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
