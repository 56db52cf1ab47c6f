package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kfa-project/kfa/client"
)

// KFA is what the benchmark measures of kfa serve under load.
type KFA struct {
	Agents int        `json:"agents"`
	Asks   Throughput `json:"asks"`
	// Pages are the pages written per ask, and per create by the ceiling.
	Pages     Pages      `json:"pagesWritten"`
	GetTask   Throughput `json:"getTask"`
	ListTasks Throughput `json:"listTasks"`
	Search    Throughput `json:"search"`
	// SearchSkipped says why search could not be measured, when it could not.
	SearchSkipped string `json:"searchSkipped,omitempty"`
	// MCPSearch is the same search as an MCP tools/call on /mcp.
	MCPSearch        Throughput `json:"mcpSearch"`
	MCPSearchSkipped string     `json:"mcpSearchSkipped,omitempty"`
	Replies          Throughput `json:"replies"`
	// Flood is honest asks alone and beside a flood of refused writes.
	Flood Flood `json:"flood"`
	// Reply1 is the latency of a qualifying reply that completes one
	// waiting task; Reply1000 of one that completes 1,000 (one sample per
	// repetition).
	Reply1    Latency `json:"reply1"`
	Reply1000 Latency `json:"reply1000"`
	// Readable is the time from a qualifying reply's answer to a GetTask
	// that shows the task completed; SSE from the same answer to the
	// completion event on a stream opened before the reply (negative when
	// the event arrives before the reply's answer).
	Readable Latency `json:"commitToReadable"`
	SSE      Latency `json:"commitToSSE"`
	// SSEBeforeAnswer counts the events that arrived before the reply's
	// HTTP answer did.
	SSEBeforeAnswer int     `json:"sseBeforeAnswer"`
	StartupMs       float64 `json:"startupMs"`
	Memory          Memory  `json:"memory"`
	// AsksMemory is the server's memory through the asks phase (its start
	// and the records import before included): VmHWM after it, and the
	// highest RssAnon and RssFile sampled every 100 ms during it.
	AsksMemory Memory  `json:"asksMemory"`
	DBMiB      float64 `json:"dbMiB"`
	// Curve is asks and GetTask at 1 to 256 clients (--curve).
	Curve []CurvePoint `json:"curve,omitempty"`
}

// agent is one bench agent and its token.
type agent struct {
	id, token string
}

// asked is a task made during the run.
type asked struct {
	owner      int // index into the agents
	task, disc string
}

// msgSeq makes message ids unique within the run.
var msgSeq atomic.Int64

// askBody is a SendMessage request for an ask; with disc it joins that
// discussion. The ceiling create server receives the same bodies.
func askBody(w, i int, disc, tag string) []byte {
	n := msgSeq.Add(1)
	var b bytes.Buffer
	b.Grow(640)
	b.WriteString(`{"message":{"messageId":"`)
	b.WriteString(tag)
	b.WriteByte('-')
	b.WriteString(strconv.FormatInt(n, 36))
	b.WriteString(`","role":"ROLE_USER","parts":[{"data":{"action":"ask","question":"How do I keep an A2A task open across a server restart without losing its subscribers? (bench `)
	b.WriteString(strconv.Itoa(w))
	b.WriteByte('/')
	b.WriteString(strconv.Itoa(i))
	b.WriteString(`)","details":"We run kfa behind a reverse proxy with two replicas. After a deploy the streams drop and the agents re-subscribe, but some of them see a terminal task and stop polling. What is the recommended reconnect logic?","kind":"howto","product":"kfa"`)
	if disc != "" {
		b.WriteString(`,"discussionId":"`)
		b.WriteString(disc)
		b.WriteByte('"')
	}
	b.WriteString(`},"mediaType":"application/json"}]},"configuration":{"returnImmediately":true}}`)
	return b.Bytes()
}

var replyBody = []byte(`{"body":"Subscribe again with SubscribeToTask after the reconnect; a terminal task answers with the task itself, so read it with GetTask and stop."}`)

// searchBody is an anonymous knowledge search.
var searchBody = []byte(`{"message":{"messageId":"bench-search","role":"ROLE_USER","parts":[{"data":{"action":"search","query":"agent card discovery well-known","limit":5},"mediaType":"application/json"}]}}`)

// mcpSearchBody is the same search as an MCP tool call (stateless: no
// session needed).
var mcpSearchBody = []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"query":"agent card discovery well-known","limit":5}}}`)

// mcpSearch makes one MCP search and checks that it answered a result,
// not an error.
func mcpSearch(ctx context.Context, hc *http.Client, w *worker, url string) error {
	if err := do(ctx, hc, w, call{method: http.MethodPost, url: url, body: mcpSearchBody}); err != nil {
		return err
	}
	if !bytes.Contains(w.buf.Bytes(), []byte(`"structuredContent"`)) {
		return fmt.Errorf("MCP search answered no result: %s", truncate(w.buf.String(), 200))
	}
	return nil
}

// measureLoad measures the ceilings and kfa serve under load. The
// ceiling servers and kfa serve run side by side; each kfa throughput is
// measured in rounds that alternate with the rounds of the ceiling it is
// compared with.
func (b *bench) measureLoad(ctx context.Context) (Ceilings, KFA, error) {
	var (
		c   Ceilings
		res KFA
		err error
	)
	b.logf("ceiling: raw fsync in %s", b.dir)
	if c.Fsync, err = measureFsync(b.dir, b.fsyncTime); err != nil {
		return c, res, fmt.Errorf("fsync: %w", err)
	}
	ceil, err := b.startCeilings()
	if err != nil {
		return c, res, err
	}
	defer ceil.stop()

	dataDir := filepath.Join(b.dir, "kfa-data")
	p, err := b.startKFA(ctx, dataDir)
	if err != nil {
		return c, res, err
	}
	defer p.stop()
	res.StartupMs = ms(p.startup)
	b.logf("kfa serve ready in %s (pid %d)", p.startup.Round(time.Millisecond), p.cmd.Process.Pid)
	if err := b.importRecords(ctx, p); err != nil {
		b.logf("records import skipped: %v", err)
	}

	adm := client.NewUnix(filepath.Join(dataDir, "kfa.sock"))
	agents := make([]agent, b.agents)
	for i := range agents {
		a, err := adm.CreateAgent(ctx, fmt.Sprintf("bench-%03d", i), []string{"read", "post"})
		if err != nil {
			return c, res, fmt.Errorf("create agent: %w", err)
		}
		agents[i] = agent{id: a.ID, token: a.Token}
	}
	ra, err := adm.CreateAgent(ctx, "bench-replier", []string{"read", "post"})
	if err != nil {
		return c, res, fmt.Errorf("create agent: %w", err)
	}
	replier := agent{id: ra.ID, token: ra.Token}
	res.Agents = len(agents) + 1

	hc := httpClient(max(b.writers, b.readers) + 8)
	sendURL := p.url + "/a2a/v1/message:send"

	// Writes: the Batch create ceiling against durable asks, each ask a
	// new task and a new discussion.
	b.logf("writes: %d rounds of Batch create and kfa asks, %d workers over %d agents", b.nRounds, b.writers, len(agents))
	var mu sync.Mutex
	var all []asked
	create := ceil.createPhase(hc, b.writers)
	asks := &phase{name: "asks", workers: b.writers, profile: b.profiler(p, "asks"), fn: func(ctx context.Context, w *worker, i int) error {
		owner := w.id % len(agents)
		if err := do(ctx, hc, w, call{method: http.MethodPost, url: sendURL, token: agents[owner].token,
			body: askBody(w.id, i, "", "ask"), a2a: true}); err != nil {
			return err
		}
		a := asked{owner: owner, task: jsonString(w.buf.Bytes(), "id", false), disc: jsonString(w.buf.Bytes(), "discussionId", true)}
		mu.Lock()
		all = append(all, a)
		mu.Unlock()
		return nil
	}}
	var sdkIDs []string
	sdkSend := ceil.sdkSendPhase(hc, b.writers, func(id string) {
		mu.Lock()
		sdkIDs = append(sdkIDs, id)
		mu.Unlock()
	})
	pagesBefore := countPages(ctx, hc, p.url, ceil)
	stopSampling := sampleMemory(p)
	b.rounds(ctx, create, asks, sdkSend)
	res.AsksMemory = stopSampling()
	c.Create, res.Asks = create.total.throughput(b.writers), asks.total.throughput(b.writers)
	c.SDKSend = sdkSend.total.throughput(b.writers)
	if res.Pages, err = pagesSince(pagesBefore, countPages(ctx, hc, p.url, ceil), len(all)); err != nil {
		b.logf("pages per ask not measured: %v", err)
	}
	if len(all) == 0 {
		return c, res, fmt.Errorf("no ask succeeded: %s", res.Asks.FirstError)
	}

	if res.Flood, err = b.refusalFlood(ctx, hc, p, agents, replier); err != nil {
		return c, res, err
	}

	// Every agent gets at least two pages of tasks, so that each ListTasks
	// answers a full page of 50.
	perAgent := make([]int, len(agents))
	for _, a := range all {
		perAgent[a.owner]++
	}
	var short []int
	for i, n := range perAgent {
		for range max(0, 2*50-n) {
			short = append(short, i)
		}
	}
	if len(short) > 0 {
		b.logf("topping up %d tasks so that every agent has two pages", len(short))
		var next atomic.Int64
		top := load(ctx, b.writers, 0, time.Hour, len(short), func(ctx context.Context, w *worker, i int) error {
			owner := short[next.Add(1)-1]
			if err := do(ctx, hc, w, call{method: http.MethodPost, url: sendURL, token: agents[owner].token,
				body: askBody(w.id, i, "", "top"), a2a: true}); err != nil {
				return err
			}
			a := asked{owner: owner, task: jsonString(w.buf.Bytes(), "id", false), disc: jsonString(w.buf.Bytes(), "discussionId", true)}
			mu.Lock()
			all = append(all, a)
			mu.Unlock()
			return nil
		})
		if top.Errors > 0 {
			return c, res, fmt.Errorf("top-up asks: %s", top.FirstError)
		}
	}

	// Reads: the hello-JSON ceiling against GetTask, ListTasks and search.
	probe := &worker{rng: rand.New(rand.NewPCG(1, 2))}
	if err := do(ctx, hc, probe, call{method: http.MethodPost, url: sendURL, body: searchBody, a2a: true}); err != nil {
		res.SearchSkipped = "not measurable: " + truncate(err.Error(), 200)
		b.logf("search %s", res.SearchSkipped)
	}
	mcpURL := p.url + "/mcp"
	if err := mcpSearch(ctx, hc, probe, mcpURL); err != nil {
		res.MCPSearchSkipped = "not measurable: " + truncate(err.Error(), 200)
		b.logf("MCP search %s", res.MCPSearchSkipped)
	}
	hello := ceil.helloPhase(hc, b.readers)
	get := &phase{name: "gettask", workers: b.readers, profile: b.profiler(p, "gettask"), fn: func(ctx context.Context, w *worker, _ int) error {
		t := all[w.rng.IntN(len(all))]
		return do(ctx, hc, w, call{method: http.MethodGet, url: p.url + "/a2a/v1/tasks/" + t.task, token: agents[t.owner].token, a2a: true})
	}}
	listURL := p.url + "/a2a/v1/tasks?pageSize=50"
	list := &phase{name: "listtasks", workers: b.readers, profile: b.profiler(p, "listtasks"), fn: func(ctx context.Context, w *worker, _ int) error {
		return do(ctx, hc, w, call{method: http.MethodGet, url: listURL, token: agents[w.rng.IntN(len(agents))].token, a2a: true})
	}}
	search := &phase{name: "search", workers: b.readers, profile: b.profiler(p, "search"), fn: func(ctx context.Context, w *worker, _ int) error {
		return do(ctx, hc, w, call{method: http.MethodPost, url: sendURL, body: searchBody, a2a: true})
	}}
	mcpPhase := &phase{name: "mcpsearch", workers: b.readers, profile: b.profiler(p, "mcpsearch"), fn: func(ctx context.Context, w *worker, _ int) error {
		return mcpSearch(ctx, hc, w, mcpURL)
	}}
	reads := []*phase{hello, get, list}
	var sdkGet *phase
	if len(sdkIDs) > 0 {
		sdkGet = ceil.sdkGetPhase(hc, b.readers, sdkIDs)
		reads = append(reads, sdkGet)
	}
	if res.SearchSkipped == "" {
		reads = append(reads, search)
	}
	if res.MCPSearchSkipped == "" {
		reads = append(reads, mcpPhase)
	}
	b.logf("reads: %d rounds of hello-JSON, GetTask over %d tasks, ListTasks pageSize=50%s%s, %d workers",
		b.nRounds, len(all), map[bool]string{true: ", search", false: ""}[res.SearchSkipped == ""],
		map[bool]string{true: ", MCP search", false: ""}[res.MCPSearchSkipped == ""], b.readers)
	b.rounds(ctx, reads...)
	c.Hello, res.GetTask, res.ListTasks = hello.total.throughput(b.readers), get.total.throughput(b.readers), list.total.throughput(b.readers)
	if sdkGet != nil {
		c.SDKGet = sdkGet.total.throughput(b.readers)
	}
	if res.SearchSkipped == "" {
		res.Search = search.total.throughput(b.readers)
	}
	if res.MCPSearchSkipped == "" {
		res.MCPSearch = mcpPhase.total.throughput(b.readers)
	}
	ceil.stop()
	if b.curve {
		res.Curve = b.costCurve(ctx, p, agents, all)
	}

	// Replies: each on its own discussion, by another agent than the
	// asker, so each qualifies and completes one task.
	b.logf("replies: %d workers", b.writers)
	order := rand.New(rand.NewPCG(3, 4)).Perm(len(all))
	var next atomic.Int64
	replies := &phase{name: "replies", workers: b.writers, profile: b.profiler(p, "replies"), fn: func(ctx context.Context, w *worker, _ int) error {
		n := int(next.Add(1)) - 1
		if n >= len(order) {
			return fmt.Errorf("out of discussions to reply on")
		}
		t := all[order[n]]
		return do(ctx, hc, w, call{method: http.MethodPost, url: p.url + "/api/v1/discussions/" + t.disc + "/replies",
			token: agents[(t.owner+1)%len(agents)].token, body: replyBody, want: http.StatusCreated})
	}}
	b.rounds(ctx, replies)
	res.Replies = replies.total.throughput(b.writers)

	b.logf("latency: %d replies completing 1 task, with GetTask and SSE watching", b.iterations)
	if err := b.commitLatency(ctx, hc, p, agents[0], replier, &res); err != nil {
		return c, res, err
	}

	b.logf("fan-out: %d replies completing 1,000 tasks", b.fanoutReps)
	if err := b.fanout(ctx, hc, p, agents, replier, &res); err != nil {
		return c, res, err
	}

	if res.Memory, err = p.memory(); err != nil {
		return c, res, err
	}
	p.stop()
	res.DBMiB = fileMiB(filepath.Join(dataDir, "kfa.db"))
	return c, res, nil
}

// profiler returns what records a CPU profile of the server into the
// profile directory, or nil when no profiles were asked for.
func (b *bench) profiler(p *kfaProc, name string) func(time.Duration) {
	if b.profileDir == "" {
		return nil
	}
	return func(d time.Duration) {
		if err := p.profile(d, filepath.Join(b.profileDir, name+".pprof")); err != nil {
			b.logf("profile %s: %v", name, err)
		}
	}
}

// importRecords loads the sample knowledge records with `kfa records
// import`, when this kfa has that command, so that search has something to
// find. A kfa without it (search not built yet) is left as it is.
func (b *bench) importRecords(ctx context.Context, p *kfaProc) error {
	if b.records == "" {
		return nil
	}
	cmd := execCommand(ctx, p.bin, "records", "import", b.records, "--data", p.dataDir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %s", err, truncate(string(bytes.TrimSpace(out)), 200))
	}
	return nil
}
