package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"sync"
	"text/tabwriter"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/kfa-project/kfa/client"
)

// GRPCBench is the gRPC binding beside HTTP+JSON on one kfa serve, in
// alternating rounds of the same load: durable asks, then GetTask over the
// tasks both made. CPU is the server's, per operation.
type GRPCBench struct {
	HTTPAsks    Throughput `json:"httpAsks"`
	GRPCAsks    Throughput `json:"grpcAsks"`
	HTTPGetTask Throughput `json:"httpGetTask"`
	GRPCGetTask Throughput `json:"grpcGetTask"`
	// The server's CPU microseconds per operation, in each phase.
	HTTPAskCPUUs  float64 `json:"httpAskCpuUs"`
	GRPCAskCPUUs  float64 `json:"grpcAskCpuUs"`
	HTTPGetCPUUs  float64 `json:"httpGetCpuUs"`
	GRPCGetCPUUs  float64 `json:"grpcGetCpuUs"`
	Skipped       string  `json:"skipped,omitempty"`
	GRPCConns     int     `json:"grpcConns"`
	HTTPConnsUpTo int     `json:"httpConnsUpTo"`
}

// grpcConnsPer is how many workers share one gRPC connection: HTTP/2
// multiplexes a connection's calls, as real clients use it.
const grpcConnsPer = 16

// measureGRPC runs a kfa serve with --grpc-addr and compares the two
// bindings on it.
func (b *bench) measureGRPC(ctx context.Context) (GRPCBench, error) {
	var res GRPCBench
	gaddr, err := freeAddr()
	if err != nil {
		return res, err
	}
	dataDir := filepath.Join(b.dir, "kfa-grpc-data")
	p, err := b.startKFA(ctx, dataDir, "--grpc-addr", gaddr)
	if err != nil {
		// A kfa measured with --kfa from before the gRPC binding.
		res.Skipped = "kfa serve --grpc-addr did not start: " + truncate(err.Error(), 200)
		return res, nil
	}
	defer p.stop()
	adm := client.NewUnix(filepath.Join(dataDir, "kfa.sock"))
	agents := make([]agent, b.agents)
	mds := make([]metadata.MD, b.agents)
	for i := range agents {
		a, err := adm.CreateAgent(ctx, fmt.Sprintf("grpc-bench-%03d", i), []string{"read", "post"})
		if err != nil {
			return res, fmt.Errorf("create agent: %w", err)
		}
		agents[i] = agent{id: a.ID, token: a.Token}
		mds[i] = metadata.Pairs("a2a-version", "1.0", "authorization", "Bearer "+a.Token)
	}
	workers := max(b.writers, b.readers)
	conns := make([]a2apb.A2AServiceClient, (workers+grpcConnsPer-1)/grpcConnsPer)
	for i := range conns {
		cc, err := grpc.NewClient(gaddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return res, err
		}
		defer cc.Close()
		conns[i] = a2apb.NewA2AServiceClient(cc)
	}
	res.GRPCConns, res.HTTPConnsUpTo = len(conns), workers
	rpc := func(w *worker) a2apb.A2AServiceClient { return conns[w.id/grpcConnsPer%len(conns)] }
	hc := httpClient(workers + 8)
	sendURL := p.url + "/a2a/v1/message:send"

	var mu sync.Mutex
	var tasks []asked
	keep := func(owner int, id string) {
		mu.Lock()
		tasks = append(tasks, asked{owner: owner, task: id})
		mu.Unlock()
	}
	httpAsks := &phase{name: "asks-http", workers: b.writers, cpu: p.cpuTime, fn: func(ctx context.Context, w *worker, i int) error {
		owner := w.id % len(agents)
		if err := do(ctx, hc, w, call{method: http.MethodPost, url: sendURL, token: agents[owner].token,
			body: askBody(w.id, i, "", "ask"), a2a: true}); err != nil {
			return err
		}
		keep(owner, jsonString(w.buf.Bytes(), "id", false))
		return nil
	}}
	grpcAsks := &phase{name: "asks-grpc", workers: b.writers, cpu: p.cpuTime, fn: func(ctx context.Context, w *worker, i int) error {
		owner := w.id % len(agents)
		resp, err := rpc(w).SendMessage(metadata.NewOutgoingContext(ctx, mds[owner]), grpcAsk(w.id, i))
		if err != nil {
			return err
		}
		if resp.GetTask().GetId() == "" {
			return fmt.Errorf("an ask answered no task")
		}
		keep(owner, resp.GetTask().GetId())
		return nil
	}}
	b.logf("gRPC: %d rounds of asks over HTTP+JSON and gRPC, %d workers", b.nRounds, b.writers)
	b.rounds(ctx, httpAsks, grpcAsks)
	res.HTTPAsks, res.GRPCAsks = httpAsks.total.throughput(b.writers), grpcAsks.total.throughput(b.writers)
	res.HTTPAskCPUUs, res.GRPCAskCPUUs = cpuPerOp(httpAsks, res.HTTPAsks), cpuPerOp(grpcAsks, res.GRPCAsks)
	if len(tasks) == 0 {
		return res, fmt.Errorf("gRPC: no ask succeeded: %s / %s", res.HTTPAsks.FirstError, res.GRPCAsks.FirstError)
	}

	httpGet := &phase{name: "gettask-http", workers: b.readers, cpu: p.cpuTime, fn: func(ctx context.Context, w *worker, _ int) error {
		t := tasks[w.rng.IntN(len(tasks))]
		return do(ctx, hc, w, call{method: http.MethodGet, url: p.url + "/a2a/v1/tasks/" + t.task, token: agents[t.owner].token, a2a: true})
	}}
	grpcGet := &phase{name: "gettask-grpc", workers: b.readers, cpu: p.cpuTime, fn: func(ctx context.Context, w *worker, _ int) error {
		t := tasks[w.rng.IntN(len(tasks))]
		got, err := rpc(w).GetTask(metadata.NewOutgoingContext(ctx, mds[t.owner]), &a2apb.GetTaskRequest{Id: t.task})
		if err == nil && got.GetId() != t.task {
			err = fmt.Errorf("GetTask answered task %q for %q", got.GetId(), t.task)
		}
		return err
	}}
	b.logf("gRPC: %d rounds of GetTask over HTTP+JSON and gRPC, %d tasks, %d workers", b.nRounds, len(tasks), b.readers)
	b.rounds(ctx, httpGet, grpcGet)
	res.HTTPGetTask, res.GRPCGetTask = httpGet.total.throughput(b.readers), grpcGet.total.throughput(b.readers)
	res.HTTPGetCPUUs, res.GRPCGetCPUUs = cpuPerOp(httpGet, res.HTTPGetTask), cpuPerOp(grpcGet, res.GRPCGetTask)
	return res, nil
}

// cpuPerOp is the server's CPU microseconds per operation of a phase.
func cpuPerOp(p *phase, t Throughput) float64 {
	if t.PerSec <= 0 {
		return 0
	}
	return p.cpuPerSecond() / t.PerSec * 1e6
}

// grpcAsk is askBody's ask as a protobuf request.
func grpcAsk(w, i int) *a2apb.SendMessageRequest {
	n := msgSeq.Add(1)
	data, _ := structpb.NewStruct(map[string]any{
		"action": "ask",
		"question": "How do I keep an A2A task open across a server restart without losing its subscribers? (bench " +
			strconv.Itoa(w) + "/" + strconv.Itoa(i) + ")",
		"details": "We run kfa behind a reverse proxy with two replicas. After a deploy the streams drop and the agents " +
			"re-subscribe, but some of them see a terminal task and stop polling. What is the recommended reconnect logic?",
		"kind": "howto", "product": "kfa",
	})
	return &a2apb.SendMessageRequest{
		Message: &a2apb.Message{MessageId: "grpc-" + strconv.FormatInt(n, 36), Role: a2apb.Role_ROLE_USER,
			Parts: []*a2apb.Part{{Content: &a2apb.Part_Data{Data: structpb.NewStructValue(data)}, MediaType: "application/json"}}},
		Configuration: &a2apb.SendMessageConfiguration{ReturnImmediately: true},
	}
}

// print writes the comparison, gRPC against HTTP+JSON of the same run.
func (g *GRPCBench) print(out io.Writer) {
	if g == nil {
		return
	}
	if g.Skipped != "" {
		fmt.Fprintf(out, "\nGRPC vs HTTP+JSON: not measured (%s)\n", g.Skipped)
		return
	}
	fmt.Fprintf(out, "\nGRPC vs HTTP+JSON: one kfa serve, alternating rounds; %d gRPC connections, up to %d HTTP ones\n",
		g.GRPCConns, g.HTTPConnsUpTo)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "\tworkers\tops/s\tp50 ms\tp99 ms\terrors\tserver CPU us/op\tgRPC / HTTP\t\n")
	row := func(name string, t Throughput, cpu float64, ref string) {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%d\t%s\t%s\t\n", name, t.Workers, f1(t.PerSec), f1(t.P50Ms), f1(t.P99Ms), t.Errors, f1(cpu), ref)
	}
	row("durable ask, HTTP+JSON", g.HTTPAsks, g.HTTPAskCPUUs, "")
	row("durable ask, gRPC", g.GRPCAsks, g.GRPCAskCPUUs, times(ratio(g.GRPCAsks.PerSec, g.HTTPAsks.PerSec)))
	row("GetTask, HTTP+JSON", g.HTTPGetTask, g.HTTPGetCPUUs, "")
	row("GetTask, gRPC", g.GRPCGetTask, g.GRPCGetCPUUs, times(ratio(g.GRPCGetTask.PerSec, g.HTTPGetTask.PerSec)))
	_ = tw.Flush()
	for _, t := range []Throughput{g.HTTPAsks, g.GRPCAsks, g.HTTPGetTask, g.GRPCGetTask} {
		if t.FirstError != "" {
			fmt.Fprintf(out, "  first error: %s\n", t.FirstError)
		}
	}
}
