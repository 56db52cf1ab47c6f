package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// Results is one run of the benchmark.
type Results struct {
	Quick    bool        `json:"quick"`
	Started  time.Time   `json:"started"`
	Seconds  float64     `json:"seconds"`
	Machine  Machine     `json:"machine"`
	Settings Settings    `json:"settings"`
	Ceilings Ceilings    `json:"ceilings"`
	KFA      KFA         `json:"kfa"`
	Push     PushBench   `json:"push"`
	Import   ImportBench `json:"import"`
	Sizes    []Size      `json:"sizes"`
	// Baselines are the server CPU per ask of this build against the kfa
	// of earlier commits, measured in the same rounds.
	Baselines []Baseline `json:"baselines"`
	// Stores is the bbolt / PostgreSQL comparison (--store), nil without it.
	Stores *StoreBench `json:"stores,omitempty"`
	// Failover is asks per second through a failover (with --store, on
	// a cluster of its own), nil without --store.
	Failover *FailoverBench `json:"failover,omitempty"`
	// GRPC is the gRPC binding beside HTTP+JSON (grpc.go).
	GRPC    *GRPCBench `json:"grpc,omitempty"`
	Targets []Target   `json:"targets"`
}

// Settings are the knobs of the run.
type Settings struct {
	Readers      int     `json:"readers"`
	Writers      int     `json:"writers"`
	Agents       int     `json:"agents"`
	Rounds       int     `json:"rounds"`
	RoundSeconds float64 `json:"roundSeconds"`
	WarmSeconds  float64 `json:"warmSeconds"`
	BatchDelay   string  `json:"batchDelay"`
	Iterations   int     `json:"iterations"`
	FanoutReps   int     `json:"fanoutReps"`
}

// Target is one of the targets, judged on this run.
type Target struct {
	// Group is the heading the target is printed under: "" for those of
	// docs/performance.md, engineGroup for issue 24's, engine2Group for
	// issue 32's.
	Group string  `json:"group,omitempty"`
	Name  string  `json:"name"`
	Want  string  `json:"want"`
	Got   string  `json:"got"`
	Met   bool    `json:"met"`
	Value float64 `json:"value"`
	// Skipped says why the target was not measured in this run, and how
	// to measure it; Met is then false.
	Skipped string `json:"skipped,omitempty"`
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// judge computes the targets.
func (r *Results) judge() {
	c, k := r.Ceilings, r.KFA
	add := func(name, want, got string, v float64, met bool) {
		r.Targets = append(r.Targets, Target{Name: name, Want: want, Got: got, Value: v, Met: met})
	}
	q := ratio(k.Asks.PerSec, c.Create.PerSec)
	add("durable asks vs bbolt Batch create ceiling", ">= 60%", pct(q), q, q >= 0.60)
	q = ratio(k.GetTask.PerSec, c.Hello.PerSec)
	add("GetTask vs hello-JSON ceiling", ">= 50%", pct(q), q, q >= 0.50)
	q = ratio(k.Asks.PerSec, c.SDKSend.PerSec)
	add("durable asks vs the a2a-go SDK's in-memory sends", ">= 5x", times(q), q, q >= 5)
	q = ratio(k.GetTask.PerSec, c.SDKGet.PerSec)
	add("GetTask vs the a2a-go SDK's in-memory GetTask", ">= 5x", times(q), q, q >= 5)
	q = ratio(k.ListTasks.PerSec, c.Hello.PerSec)
	add("ListTasks page(50) vs hello-JSON ceiling", ">= 20%", pct(q), q, q >= 0.20)
	if len(r.Sizes) >= 2 {
		small, large := r.Sizes[0], r.Sizes[len(r.Sizes)-1]
		lbl := fmt.Sprintf(" at %s vs %s (p50)", count(large.Tasks), count(small.Tasks))
		q = ratio(large.ListFirst.P50Ms, small.ListFirst.P50Ms)
		add("ListTasks page latency"+lbl, "<= 1.5x", fmt.Sprintf("%.2fx", q), q, q <= 1.5)
		q = ratio(large.ListDeep.P50Ms, small.ListDeep.P50Ms)
		add("ListTasks deep page latency"+lbl, "<= 1.5x", fmt.Sprintf("%.2fx", q), q, q <= 1.5)
		q = ratio(large.GetTask.P50Ms, small.GetTask.P50Ms)
		add("GetTask latency"+lbl, "<= 1.5x", fmt.Sprintf("%.2fx", q), q, q <= 1.5)
		add("startup at "+count(large.Tasks)+" tasks (median of 3)", "< 1 s", fmt.Sprintf("%.0f ms", large.StartupMs),
			large.StartupMs, large.StartupMs < 1000)
		add("RSS at "+count(large.Tasks)+" tasks", "< 200 MiB", fmt.Sprintf("%.0f MiB", large.Memory.RSSMiB),
			large.Memory.RSSMiB, large.Memory.RSSMiB < 200)
	}
	if im := r.Import; im.Records >= 100_000 && im.Skipped == "" {
		add("import of "+count(im.Records)+" records, peak server RSS", "< 256 MiB", fmt.Sprintf("%.0f MiB", im.PeakRSSMiB),
			im.PeakRSSMiB, im.PeakRSSMiB < 256)
	}
	q = ratio(k.Flood.Flooded.PerSec, k.Flood.Quiet.PerSec)
	add("honest asks during a refusal flood vs without", ">= 80%", pct(q), q, k.Flood.Refusals.Ops > 0 && q >= 0.80)
	add("reply completing 1,000 tasks, p99", "< 100 ms", fmt.Sprintf("%.1f ms", k.Reply1000.P99Ms), k.Reply1000.P99Ms,
		k.Reply1000.N > 0 && k.Reply1000.P99Ms < 100)
	r.judgeEngine()
	r.judgeEngine2()
}

func times(q float64) string { return fmt.Sprintf("%.2fx", q) }

func pct(q float64) string { return fmt.Sprintf("%.0f%%", q*100) }

func count(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1000 && n%1000 == 0:
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}

func f1(v float64) string {
	switch {
	case v == 0:
		return "-"
	case v >= 100 || v <= -100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10 || v <= -10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// print writes the human table.
func (r *Results) print(out io.Writer) {
	m := r.Machine
	mode := "full run"
	if r.Quick {
		mode = "quick run (--quick)"
	}
	fmt.Fprintf(out, "\nkfa-bench, %s, %s, %.0f s\n", mode, r.Started.UTC().Format("2006-01-02 15:04 UTC"), r.Seconds)
	fmt.Fprintf(out, "machine: %d CPUs (%s), %d GiB RAM, Linux %s, %s\n", m.CPUs, m.CPUModel, m.MemoryGiB, m.Kernel, m.GoVersion)
	fmt.Fprintf(out, "disk:    %s\n", m.Disk)
	fmt.Fprintf(out, "kfa:     %s; batch delay %s; load generator in-process, sharing the CPUs\n\n", m.KFAVersion, r.Settings.BatchDelay)

	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	row := func(cells ...string) { fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t") }
	c, k := r.Ceilings, r.KFA
	row("CEILINGS (this machine, this run)", "workers", "ops/s", "p50 ms", "p99 ms", "errors")
	row("raw fsync, 128 B write + fsync", "1", f1(c.Fsync.PerSec), f1(c.Fsync.P50Ms), f1(c.Fsync.P99Ms), "")
	tp := func(name string, t Throughput, ref string) {
		row(name, fmt.Sprint(t.Workers), f1(t.PerSec), f1(t.P50Ms), f1(t.P99Ms), fmt.Sprint(t.Errors), ref)
	}
	tp("hello-JSON, bare net/http", c.Hello, "")
	tp("create, bare net/http + bbolt Batch", c.Create, "")
	tp("a2a-go v2 SDK server, in memory: send", c.SDKSend, "")
	tp("a2a-go v2 SDK server, in memory: GetTask", c.SDKGet, "")
	row("")
	row(fmt.Sprintf("KFA SERVE (%d agents)", k.Agents), "workers", "ops/s", "p50 ms", "p99 ms", "errors", "of ceiling")
	tp("durable ask (new task + discussion)", k.Asks, pct(ratio(k.Asks.PerSec, c.Create.PerSec))+" of create")
	row("pages written per ask / per create", "", f1(k.Pages.PerAsk)+" / "+f1(k.Pages.PerCreate), "", "", "",
		fmt.Sprintf("%.1fx create", ratio(k.Pages.PerAsk, k.Pages.PerCreate)))
	row("  durable asks vs the SDK's in-memory sends", "", "", "", "", "", times(ratio(k.Asks.PerSec, c.SDKSend.PerSec)))
	tp("GetTask", k.GetTask, pct(ratio(k.GetTask.PerSec, c.Hello.PerSec))+" of hello")
	row("  GetTask vs the SDK's in-memory GetTask", "", "", "", "", "", times(ratio(k.GetTask.PerSec, c.SDKGet.PerSec)))
	tp("ListTasks, page of 50", k.ListTasks, pct(ratio(k.ListTasks.PerSec, c.Hello.PerSec))+" of hello")
	if k.SearchSkipped != "" {
		row("search (message:send)", "", "n/a", "", "", "", "")
	} else {
		tp("search (message:send)", k.Search, pct(ratio(k.Search.PerSec, c.Hello.PerSec))+" of hello")
	}
	switch {
	case k.MCPSearchSkipped != "":
		row("search (MCP tools/call on /mcp)", "", "n/a", "", "", "", "")
	case k.SearchSkipped != "":
		tp("search (MCP tools/call on /mcp)", k.MCPSearch, pct(ratio(k.MCPSearch.PerSec, c.Hello.PerSec))+" of hello")
	default:
		tp("search (MCP tools/call on /mcp)", k.MCPSearch, pct(ratio(k.MCPSearch.PerSec, k.Search.PerSec))+" of A2A search")
	}
	tp("reply (qualifying, completes 1 task)", k.Replies, pct(ratio(k.Replies.PerSec, c.Create.PerSec))+" of create")
	row("")
	row("REFUSAL FLOOD, as many refusals as asks (alternating rounds)", "workers", "ops/s", "p50 ms", "p99 ms", "errors", "of quiet")
	tp("honest asks, alone", k.Flood.Quiet, "")
	tp("honest asks, beside the flood", k.Flood.Flooded, pct(ratio(k.Flood.Flooded.PerSec, k.Flood.Quiet.PerSec)))
	tp("  the flood: refused writes answered", k.Flood.Refusals, "")
	row("  server CPU per request, µs: honest ask", "", f1(k.Flood.CPUPerAskUs))
	row("  server CPU per request, µs: refusal", "", f1(k.Flood.CPUPerRefusalUs), "", "", "",
		pct(ratio(k.Flood.CPUPerRefusalUs, k.Flood.CPUPerAskUs))+" of an ask")
	row("")
	row("LATENCY, one at a time", "n", "p50 ms", "p99 ms", "max ms")
	lat := func(name string, l Latency) { row(name, fmt.Sprint(l.N), f1(l.P50Ms), f1(l.P99Ms), f1(l.MaxMs)) }
	lat("reply completing 1 waiting task", k.Reply1)
	lat("reply completing 1,000 waiting tasks", k.Reply1000)
	lat("reply answered -> GetTask shows COMPLETED", k.Readable)
	lat("reply answered -> SSE completion event", k.SSE)
	row("")
	if r.Push.Skipped == "" {
		row(fmt.Sprintf("PUSH NOTIFICATIONS, one reply completing %s tasks with a config each", count(r.Push.Tasks)), "n", "p50 ms", "p99 ms", "max ms")
		lat("reply sent -> a notification at the receiver", r.Push.Arrival)
		lat("reply sent -> the last of them at the receiver", r.Push.All)
		row("  duplicates received", fmt.Sprint(r.Push.Duplicates))
		row("")
	}
	if im := r.Import; im.Records > 0 {
		if im.Skipped != "" {
			row(fmt.Sprintf("IMPORT of %s records: %s", count(im.Records), im.Skipped))
		} else {
			row(fmt.Sprintf("IMPORT, kfa records import of %s records (%.0f MiB) into a running server", count(im.Records), im.FileMiB),
				"wall s", "records/s", "peak RSS MiB", "peak anon MiB", "peak file MiB")
			row("  server memory: VmHWM, and the highest RssAnon and RssFile sampled", f1(im.Seconds),
				f1(ratio(float64(im.Records), im.Seconds)), f1(im.PeakRSSMiB), f1(im.PeakAnonMiB), f1(im.PeakFileMiB))
		}
		row("")
	}
	row("SERVER", "startup ms", "RSS MiB", "anon MiB", "file MiB", "db MiB")
	row("through the asks phase: VmHWM, highest anon and file sampled", "", f1(k.AsksMemory.VmHWMMiB), f1(k.AsksMemory.AnonMiB),
		f1(k.AsksMemory.FileMiB), "")
	row("after the load phases above", f1(k.StartupMs), f1(k.Memory.RSSMiB), f1(k.Memory.AnonMiB), f1(k.Memory.FileMiB), f1(k.DBMiB))
	_ = tw.Flush()

	printCurve(out, k.Curve)
	printBaselines(out, r.Baselines)
	r.GRPC.print(out)
	if r.Stores != nil {
		printStores(out, *r.Stores)
		printFollow(out, r.Stores.Follow)
	}
	if r.Failover != nil {
		for _, line := range failoverLines(*r.Failover) {
			fmt.Fprintln(out, line)
		}
	}
	if len(r.Sizes) > 0 {
		fmt.Fprintln(out)
		tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
		row = func(cells ...string) { fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t") }
		head := []string{"PRELOADED TASKS (one request at a time, sizes alternating)"}
		for _, s := range r.Sizes {
			head = append(head, count(s.Tasks))
		}
		if len(r.Sizes) >= 2 {
			head = append(head, "ratio")
		}
		row(head...)
		line := func(name string, get func(Size) float64) {
			cells := []string{name}
			for _, s := range r.Sizes {
				cells = append(cells, f1(get(s)))
			}
			if len(r.Sizes) >= 2 {
				cells = append(cells, fmt.Sprintf("%.2fx", ratio(get(r.Sizes[len(r.Sizes)-1]), get(r.Sizes[0]))))
			}
			row(cells...)
		}
		line("bulk load, s", func(s Size) float64 { return s.LoadSeconds })
		line("db file, MiB", func(s Size) float64 { return s.DBMiB })
		line("startup exec -> /readyz 200, ms (median of 3)", func(s Size) float64 { return s.StartupMs })
		line("RSS after the reads, MiB", func(s Size) float64 { return s.Memory.RSSMiB })
		line("  of which anonymous (heap, stacks), MiB", func(s Size) float64 { return s.Memory.AnonMiB })
		line("  of which the mapped file, MiB", func(s Size) float64 { return s.Memory.FileMiB })
		line("GetTask, first read of each task after start, p50 ms", func(s Size) float64 { return s.GetTaskFirst.P50Ms })
		line("GetTask, first read of each task after start, p99 ms", func(s Size) float64 { return s.GetTaskFirst.P99Ms })
		line("GetTask p50, ms", func(s Size) float64 { return s.GetTask.P50Ms })
		line("GetTask p99, ms", func(s Size) float64 { return s.GetTask.P99Ms })
		line("ListTasks first page p50, ms", func(s Size) float64 { return s.ListFirst.P50Ms })
		line("ListTasks first page p99, ms", func(s Size) float64 { return s.ListFirst.P99Ms })
		line("ListTasks deep page p50, ms", func(s Size) float64 { return s.ListDeep.P50Ms })
		line("ListTasks deep page p99, ms", func(s Size) float64 { return s.ListDeep.P99Ms })
		line("  (deep page number)", func(s Size) float64 { return float64(s.DeepPage) })
		_ = tw.Flush()
	}

	printTargets(out, r.Targets)
	if k.SearchSkipped != "" {
		fmt.Fprintf(out, "\nsearch: %s\n", k.SearchSkipped)
	}
	if k.MCPSearchSkipped != "" {
		fmt.Fprintf(out, "\nMCP search: %s\n", k.MCPSearchSkipped)
	}
	if r.Push.Skipped != "" {
		fmt.Fprintf(out, "\npush notifications: %s\n", r.Push.Skipped)
	}
	if k.SSEBeforeAnswer > 0 {
		fmt.Fprintf(out, "sse: %d of %d completion events arrived before the reply's own HTTP answer (negative times)\n",
			k.SSEBeforeAnswer, k.SSE.N)
	}
	for _, t := range []struct {
		name string
		tp   Throughput
	}{{"hello", c.Hello}, {"create", c.Create}, {"sdk-send", c.SDKSend}, {"sdk-get", c.SDKGet}, {"asks", k.Asks}, {"gettask", k.GetTask}, {"listtasks", k.ListTasks}, {"search", k.Search}, {"mcpsearch", k.MCPSearch}, {"replies", k.Replies},
		{"asks-quiet", k.Flood.Quiet}, {"asks-flooded", k.Flood.Flooded}, {"refusals", k.Flood.Refusals}} {
		if t.tp.FirstError != "" {
			fmt.Fprintf(out, "first error in %s: %s\n", t.name, t.tp.FirstError)
		}
	}
	if r.Quick && len(r.Sizes) > 0 {
		fmt.Fprintf(out, "\n--quick preloads %s instead of 1M tasks; run without --quick for the 1M numbers.\n", count(r.Sizes[len(r.Sizes)-1].Tasks))
	}
}
