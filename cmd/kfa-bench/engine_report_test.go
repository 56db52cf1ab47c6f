package main

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kfa-project/kfa/store/postgres"
)

// engineTargets is r's issue 24 targets by name.
func engineTargets(r *Results) map[string]Target {
	m := map[string]Target{}
	for _, t := range r.Targets {
		if t.Group == engineGroup {
			m[t.Name] = t
		}
	}
	return m
}

func TestJudgeEngine(t *testing.T) {
	tp := func(perSec float64) Throughput { return Throughput{PerSec: perSec, Ops: 1} }
	stores := func(pgAsks, twoAsks, pgReplies, twoReplies, pgGet, pgList float64, trips postgres.RoundTrips, follow FollowDelay) *StoreBench {
		return &StoreBench{
			Runs: []StoreRun{
				{Name: "bbolt, 1 process", Procs: 1, Asks: tp(1000), Replies: tp(100), GetTask: tp(1000), ListTasks: tp(1000)},
				{Name: "PostgreSQL, 1 process", Procs: 1, Asks: tp(pgAsks), Replies: tp(pgReplies), GetTask: tp(pgGet), ListTasks: tp(pgList)},
				{Name: "PostgreSQL, 2 processes", Procs: 2, Asks: tp(twoAsks), Replies: tp(twoReplies), GetTask: tp(pgGet), ListTasks: tp(pgList)},
			},
			Trips:  Trips{Asks: trips},
			Follow: follow,
		}
	}
	fast := FollowDelay{All: Latency{N: 100, P50Ms: 40, P99Ms: 200, MaxMs: 1000}}
	cpu := func(today, now float64) Baseline {
		return Baseline{Commit: baselineCommit, Today: CPURun{CPUPerAskUs: today}, Now: CPURun{CPUPerAskUs: now}}
	}
	const (
		cpuName    = "server CPU per honest ask vs kfa dcd6410 (alternating rounds)"
		askShare   = "durable asks vs the Batch create ceiling"
		pgAsks     = "PostgreSQL asks vs bbolt's (1 process)"
		twoAsks    = "PostgreSQL asks, 2 processes vs 1"
		twoReplies = "PostgreSQL replies, 2 processes vs 1"
		pgGet      = "PostgreSQL GetTask vs bbolt's (1 process)"
		pgList     = "PostgreSQL ListTasks vs bbolt's (1 process)"
		trips      = "PostgreSQL round trips per ask (most of any ask)"
		follow     = "search on one of 2 processes finds a write made through the other, max"
	)
	for _, tc := range []struct {
		name     string
		asks     float64 // of a create ceiling of 100
		baseline Baseline
		stores   *StoreBench
		met      map[string]bool // the rest are not met
		skipped  []string
	}{
		{
			name: "every bound met exactly", asks: 30, baseline: cpu(1000, 500),
			stores: stores(700, 700, 100, 100, 500, 500, postgres.RoundTrips{Commands: 50, Trips: 150, Max: 3}, fast),
			met:    map[string]bool{cpuName: true, askShare: true, pgAsks: true, twoAsks: true, twoReplies: true, pgGet: true, pgList: true, trips: true, follow: true},
		},
		{
			name: "every bound just missed", asks: 29.9, baseline: cpu(1000, 501),
			stores: stores(699, 698, 100, 99, 499, 499, postgres.RoundTrips{Commands: 50, Trips: 150, Max: 4},
				FollowDelay{All: Latency{N: 100, MaxMs: 1001}}),
			met: map[string]bool{},
		},
		{
			name: "a write never found fails the follow target", asks: 30, baseline: cpu(1000, 400),
			stores: stores(700, 800, 100, 120, 600, 600, postgres.RoundTrips{Commands: 50, Trips: 100, Max: 2},
				FollowDelay{All: Latency{N: 99, MaxMs: 300}, Missed: 1}),
			met: map[string]bool{cpuName: true, askShare: true, pgAsks: true, twoAsks: true, twoReplies: true, pgGet: true, pgList: true, trips: true},
		},
		{
			name: "no PostgreSQL, no baseline", asks: 31, baseline: Baseline{Commit: baselineCommit, Skipped: "commit dcd6410 is not in this clone's git history"},
			met:     map[string]bool{askShare: true},
			skipped: []string{cpuName, pgAsks, twoAsks, twoReplies, pgGet, pgList, trips, follow},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Results{Ceilings: Ceilings{Create: tp(100)}, KFA: KFA{Asks: tp(tc.asks)}, Baselines: []Baseline{tc.baseline}, Stores: tc.stores}
			r.judgeEngine()
			got := engineTargets(&r)
			if len(got) != 9 {
				t.Fatalf("%d engine targets: %+v", len(got), r.Targets)
			}
			for name, tg := range got {
				if tg.Met != tc.met[name] {
					t.Errorf("%s: met=%v (got %s)", name, tg.Met, tg.Got)
				}
			}
			for _, name := range tc.skipped {
				if tg, ok := got[name]; !ok || tg.Skipped == "" || tg.Met {
					t.Errorf("%s: %+v, want not measured", name, tg)
				}
			}
			var out bytes.Buffer
			printTargets(&out, r.Targets)
			if !strings.Contains(out.String(), engineGroup) {
				t.Errorf("no %s heading:\n%s", engineGroup, out.String())
			}
			if tc.stores == nil && !strings.Contains(out.String(), ".ci/postgres.sh start DIR") {
				t.Errorf("the report does not say how to measure the PostgreSQL targets:\n%s", out.String())
			}
		})
	}
}

func TestWordMaker(t *testing.T) {
	m := newWordMaker(rand.New(rand.NewPCG(1, 2)))
	var words []string
	for range 2000 {
		words = append(words, m.next())
	}
	for i, a := range words {
		if len(a) != 11 || !strings.HasPrefix(a, "zq") {
			t.Fatalf("word %q", a)
		}
		for _, b := range words[:i] {
			if differences(a, b) < 3 {
				t.Fatalf("%q and %q are within two edits", a, b)
			}
		}
	}
}
