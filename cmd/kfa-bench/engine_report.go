package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// The targets of issue 24 (one engine: the domain decides, one change
// log), each a ratio measured in this run, and the sections that show
// what they are judged on.

// engineGroup is the heading of issue 24's targets.
const engineGroup = "ENGINE TARGETS (issue 24)"

// Engine target bounds.
const (
	minAskShare     = 0.30 // durable asks, of the Batch create ceiling
	minPGAsks       = 0.70 // PostgreSQL asks, of bbolt's
	minTwoProcesses = 1.00 // two processes on one database, of one
	minPGReads      = 0.50 // PostgreSQL GetTask and ListTasks, of bbolt's
)

// noStore says why the PostgreSQL targets were not measured, and how to
// measure them.
const noStore = "not measured: no PostgreSQL URL; run with --store URL, " + storeEnv + "=URL or " + testStoreEnv + "=URL " +
	"(a throwaway server: " + storeEnv + "=$(.ci/postgres.sh start DIR) make bench)"

// judgeEngine adds issue 24's targets to r.Targets.
func (r *Results) judgeEngine() {
	add := func(name, want, got string, v float64, met bool) {
		r.Targets = append(r.Targets, Target{Group: engineGroup, Name: name, Want: want, Got: got, Value: v, Met: met})
	}
	skip := func(name, want, why string) {
		r.Targets = append(r.Targets, Target{Group: engineGroup, Name: name, Want: want, Skipped: why})
	}

	judgeCPU(baselineOf(r.Baselines, baselineCommit), maxCPURatio, add, skip)

	q := ratio(r.KFA.Asks.PerSec, r.Ceilings.Create.PerSec)
	add("durable asks vs the Batch create ceiling", ">= "+pct(minAskShare), pct(q), q, q >= minAskShare)

	type pg struct {
		name, want string
		min        float64
		get        func(StoreRun) Throughput
		num, den   int // indexes into the runs: bbolt, PostgreSQL 1 process, 2 processes
		also       int // another run shown as a ratio to den, -1 for none
	}
	asks := func(s StoreRun) Throughput { return s.Asks }
	pgTargets := []pg{
		{"PostgreSQL asks vs bbolt's (1 process)", ">= " + times(minPGAsks), minPGAsks, asks, 1, 0, 2},
		{"PostgreSQL asks, 2 processes vs 1", ">= " + times(minTwoProcesses), minTwoProcesses, asks, 2, 1, -1},
		{"PostgreSQL replies, 2 processes vs 1", ">= " + times(minTwoProcesses), minTwoProcesses,
			func(s StoreRun) Throughput { return s.Replies }, 2, 1, -1},
		{"PostgreSQL GetTask vs bbolt's (1 process)", ">= " + times(minPGReads), minPGReads,
			func(s StoreRun) Throughput { return s.GetTask }, 1, 0, 2},
		{"PostgreSQL ListTasks vs bbolt's (1 process)", ">= " + times(minPGReads), minPGReads,
			func(s StoreRun) Throughput { return s.ListTasks }, 1, 0, 2},
	}
	tripsName, tripsWant := "PostgreSQL round trips per ask (most of any ask)", fmt.Sprintf("<= %d", maxAskTrips)
	followName, followWant := "search on one of 2 processes finds a write made through the other, max", "<= "+maxFollow.String()
	sb := r.Stores
	if sb == nil || len(sb.Runs) < 3 {
		for _, t := range pgTargets {
			skip(t.name, t.want, noStore)
		}
		skip(tripsName, tripsWant, noStore)
		skip(followName, followWant, noStore)
		return
	}
	for _, t := range pgTargets {
		q := ratio(t.get(sb.Runs[t.num]).PerSec, t.get(sb.Runs[t.den]).PerSec)
		got := times(q)
		if t.also >= 0 {
			got += fmt.Sprintf(" (2 processes %s)", times(ratio(t.get(sb.Runs[t.also]).PerSec, t.get(sb.Runs[t.den]).PerSec)))
		}
		add(t.name, t.want, got, q, q >= t.min)
	}
	if sb.TripsError != "" {
		skip(tripsName, tripsWant, "not measured: "+sb.TripsError)
	} else {
		tr := sb.Trips.Asks
		add(tripsName, tripsWant, fmt.Sprintf("%.2f (most %d)", tr.PerCommand(), tr.Max), float64(tr.Max),
			tr.Commands > 0 && tr.PerCommand() <= maxAskTrips && tr.Max <= maxAskTrips)
	}
	f := sb.Follow
	got := fmt.Sprintf("%s ms (p50 %s, p99 %s; %d writes", f1(f.All.MaxMs), f1(f.All.P50Ms), f1(f.All.P99Ms), f.All.N)
	if f.Missed > 0 {
		got += fmt.Sprintf(", %d not found within %s", f.Missed, followGiveUp)
	}
	if f.Errors > 0 {
		got += fmt.Sprintf(", %d failed", f.Errors)
	}
	add(followName, followWant, got+")", f.All.MaxMs, f.Met())
}

// judgeCPU adds the target of this build's server CPU per honest ask
// against bl's, at most bound times it.
func judgeCPU(bl Baseline, bound float64, add func(name, want, got string, v float64, met bool), skip func(name, want, why string)) {
	name := "server CPU per honest ask vs kfa " + shortCommit(bl.Commit) + " (alternating rounds)"
	want := fmt.Sprintf("<= %.2fx", bound)
	switch {
	case bl.Skipped != "":
		skip(name, want, bl.Skipped)
	case bl.Now.CPUPerAskUs == 0 || bl.Today.CPUPerAskUs == 0:
		skip(name, want, "not measured: no CPU time of the servers (it is read from /proc)")
	default:
		q := bl.Ratio()
		add(name, want, fmt.Sprintf("%s (%s µs vs %s µs)", times(q), f1(bl.Now.CPUPerAskUs), f1(bl.Today.CPUPerAskUs)),
			q, q > 0 && q <= bound)
	}
}

// baselineNames says what each known baseline commit was.
var baselineNames = map[string]string{
	baselineCommit: "main when issue 24 began",
	engine2Commit:  "main when issue 32 began",
}

// printBaselines writes the CPU per ask of this build and of each
// baseline, measured in the same alternating rounds.
func printBaselines(out io.Writer, bls []Baseline) {
	fmt.Fprintln(out)
	var measured []Baseline
	for _, bl := range bls {
		if bl.Skipped != "" {
			fmt.Fprintf(out, "SERVER CPU PER HONEST ASK vs kfa %s: %s\n", shortCommit(bl.Commit), bl.Skipped)
			continue
		}
		measured = append(measured, bl)
	}
	if len(bls) == 0 {
		fmt.Fprintln(out, "SERVER CPU PER HONEST ASK: not measured (--baseline \"\")")
	}
	if len(measured) == 0 {
		return
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	row := func(cells ...string) { fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t") }
	row("SERVER CPU PER HONEST ASK (same asks, rounds alternating)", "workers", "asks/s", "p50 ms", "p99 ms", "errors",
		"CPU µs/ask", "in its rounds", "idle CPU")
	line := func(name string, c CPURun) {
		row(name, fmt.Sprint(c.Asks.Workers), f1(c.Asks.PerSec), f1(c.Asks.P50Ms), f1(c.Asks.P99Ms), fmt.Sprint(c.Asks.Errors),
			f1(c.CPUPerAskUs), f1(c.RoundCPUPerAskUs), pct(c.IdleCPUPerSec))
	}
	label := func(bl Baseline) string {
		name := "kfa " + shortCommit(bl.Commit)
		if what := baselineNames[bl.Commit]; what != "" {
			name += " (" + what + ")"
		}
		return name
	}
	for _, bl := range measured {
		line(label(bl), bl.Today)
	}
	now := measured[0].Now
	line("this build", now)
	for _, bl := range measured {
		row("  this build vs "+shortCommit(bl.Commit), "", times(ratio(now.Asks.PerSec, bl.Today.Asks.PerSec)), "", "", "",
			times(bl.Ratio()), times(ratio(now.RoundCPUPerAskUs, bl.Today.RoundCPUPerAskUs)))
	}
	_ = tw.Flush()
	fmt.Fprintln(out, "CPU µs/ask: the server's user+system time from its first round to the end of the work its last one left (search indexing), per acknowledged ask")
	for _, bl := range measured {
		if bl.Today.Asks.FirstError != "" {
			fmt.Fprintf(out, "first error in asks on kfa %s: %s\n", shortCommit(bl.Commit), bl.Today.Asks.FirstError)
		}
	}
	if now.Asks.FirstError != "" {
		fmt.Fprintf(out, "first error in asks on this build: %s\n", now.Asks.FirstError)
	}
}

// printFollow writes the delays from a write on one process to search on
// the other finding it.
func printFollow(out io.Writer, f FollowDelay) {
	fmt.Fprintln(out)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	row := func(cells ...string) { fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t") }
	row("SEARCH ON ONE PROCESS AFTER A WRITE THROUGH THE OTHER (2 processes, PostgreSQL)", "n", "p50 ms", "p99 ms", "max ms")
	lat := func(name string, l Latency) { row(name, fmt.Sprint(l.N), f1(l.P50Ms), f1(l.P99Ms), f1(l.MaxMs)) }
	for _, k := range f.Kinds {
		lat(k.Name, k.Latency)
	}
	lat("every write", f.All)
	_ = tw.Flush()
	fmt.Fprintf(out, "from the write's answer to the first search on the other process that lists it; not found within %s: %d; failed: %d\n",
		followGiveUp, f.Missed, f.Errors)
	if f.FirstError != "" {
		fmt.Fprintf(out, "first error: %s\n", f.FirstError)
	}
}

// printTargets writes the targets, group by group.
func printTargets(out io.Writer, targets []Target) {
	var groups []string
	for _, t := range targets {
		if len(groups) == 0 || groups[len(groups)-1] != t.Group {
			groups = append(groups, t.Group)
		}
	}
	for _, g := range groups {
		fmt.Fprintln(out)
		if g == "" {
			fmt.Fprintln(out, "TARGETS (docs/performance.md)")
		} else {
			fmt.Fprintln(out, g)
		}
		for _, t := range targets {
			if t.Group != g {
				continue
			}
			switch {
			case t.Skipped != "":
				fmt.Fprintf(out, "  [n/a    ] %-72s %-10s %s\n", t.Name, t.Want, t.Skipped)
			case t.Met:
				fmt.Fprintf(out, "  [met    ] %-72s %-10s got %s\n", t.Name, t.Want, t.Got)
			default:
				fmt.Fprintf(out, "  [NOT MET] %-72s %-10s got %s\n", t.Name, t.Want, t.Got)
			}
		}
	}
}
