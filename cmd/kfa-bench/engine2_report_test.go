package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kfa-project/kfa/store/postgres"
)

func TestJudgeEngine2(t *testing.T) {
	tp := func(perSec float64) Throughput { return Throughput{PerSec: perSec, Ops: 1} }
	stores := func(get, list, discs float64, reads []ReadTrips, ask, reply uint64) *StoreBench {
		return &StoreBench{
			Runs: []StoreRun{
				{Name: "bbolt, 1 process", GetTask: tp(1000), ListTasks: tp(1000), ListDiscussions: tp(1000)},
				{Name: "PostgreSQL, 1 process", GetTask: tp(get), ListTasks: tp(list), ListDiscussions: tp(discs)},
			},
			Trips: Trips{Asks: postgres.RoundTrips{Commands: 50, Trips: 50 * ask, Max: ask},
				Replies: postgres.RoundTrips{Commands: 50, Trips: 50 * reply, Max: reply}, Reads: reads},
		}
	}
	ones := []ReadTrips{{Route: "GetTask", Reads: 10, Trips: 10, Max: 1}, {Route: "GetDiscussion", Reads: 10, Trips: 10, Max: 1}}
	twos := []ReadTrips{{Route: "GetTask", Reads: 10, Trips: 10, Max: 1}, {Route: "GetDiscussion", Reads: 10, Trips: 11, Max: 2}}
	cpu := func(today, now float64) []Baseline {
		return []Baseline{{Commit: engine2Commit, Today: CPURun{CPUPerAskUs: today}, Now: CPURun{CPUPerAskUs: now}}}
	}
	const (
		cpuName = "server CPU per honest ask vs kfa de7e102 (alternating rounds)"
		asks    = "durable asks vs the Batch create ceiling"
		get     = "GetTask vs hello-JSON"
		list    = "ListTasks, page of 50, vs hello-JSON"
		pgGet   = "PostgreSQL GetTask vs bbolt's (1 process)"
		pgList  = "PostgreSQL ListTasks vs bbolt's (1 process)"
		pgDiscs = "PostgreSQL ListDiscussions vs bbolt's (1 process)"
		reads   = "PostgreSQL round trips of every read route (most of any read)"
		ask     = "PostgreSQL round trips per ask (most of any ask)"
		reply   = "PostgreSQL round trips per reply (most of any reply)"
		rss     = "server peak RSS through the asks phase (VmHWM)"
	)
	all := []string{cpuName, asks, get, list, pgGet, pgList, pgDiscs, reads, ask, reply, rss}
	for _, tc := range []struct {
		name                string
		asks, gets, lists   float64 // of ceilings of 100
		rss                 float64
		baselines           []Baseline
		stores              *StoreBench
		met                 []string // the rest are not met
		skipped             []string
		wantInGot, wantName string
	}{
		{
			name: "every bound met exactly", asks: 35, gets: 55, lists: 25, rss: 100, baselines: cpu(1000, 650),
			stores: stores(600, 500, 500, ones, 2, 2), met: all,
			wantName: reads, wantInGot: "GetTask 1, GetDiscussion 1",
		},
		{
			name: "every bound just missed", asks: 34.9, gets: 54.9, lists: 24.9, rss: 100.5, baselines: cpu(1000, 651),
			stores:   stores(599, 499, 499, twos, 3, 3),
			wantName: reads, wantInGot: "2 (GetTask 1, GetDiscussion 2)",
		},
		{
			name: "no PostgreSQL, no baseline", asks: 40, gets: 60, lists: 30, rss: 90,
			met: []string{asks, get, list, rss}, skipped: []string{cpuName, pgGet, pgList, pgDiscs, reads, ask, reply},
			wantName: pgDiscs, wantInGot: "",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Results{Ceilings: Ceilings{Create: tp(100), Hello: tp(100)},
				KFA:       KFA{Asks: tp(tc.asks), GetTask: tp(tc.gets), ListTasks: tp(tc.lists), AsksMemory: Memory{VmHWMMiB: tc.rss, AnonMiB: 30, FileMiB: 60}},
				Baselines: tc.baselines, Stores: tc.stores}
			r.judgeEngine2()
			got := map[string]Target{}
			for _, tg := range r.Targets {
				if tg.Group == engine2Group {
					got[tg.Name] = tg
				}
			}
			if len(got) != len(all) {
				t.Fatalf("%d targets: %+v", len(got), r.Targets)
			}
			met := map[string]bool{}
			for _, n := range tc.met {
				met[n] = true
			}
			for name, tg := range got {
				if tg.Met != met[name] {
					t.Errorf("%s: met=%v (got %s)", name, tg.Met, tg.Got)
				}
			}
			for _, name := range tc.skipped {
				if tg := got[name]; tg.Skipped == "" || tg.Met {
					t.Errorf("%s: %+v, want not measured", name, tg)
				}
			}
			if g := got[tc.wantName]; !strings.Contains(g.Got, tc.wantInGot) {
				t.Errorf("%s: got %q, want it to hold %q", tc.wantName, g.Got, tc.wantInGot)
			}
			var out bytes.Buffer
			printTargets(&out, r.Targets)
			if !strings.Contains(out.String(), engine2Group) {
				t.Errorf("no %s heading:\n%s", engine2Group, out.String())
			}
		})
	}
}
