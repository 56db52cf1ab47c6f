package main

import (
	"testing"
	"time"
)

func TestSummarize(t *testing.T) {
	var d []time.Duration
	for i := 100; i >= 1; i-- {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	l := summarize(d)
	if l.N != 100 || l.P50Ms != 50 || l.P99Ms != 99 || l.MaxMs != 100 {
		t.Fatalf("summarize: %+v", l)
	}
	if (summarize(nil) != Latency{}) {
		t.Fatal("summarize of nothing")
	}
}

func TestJSONString(t *testing.T) {
	b := []byte(`{"task":{"id":"T1","history":[{"data":{"discussionId":"D0"}}],"metadata":{"discussionId":"D1"}}}`)
	if got := jsonString(b, "id", false); got != "T1" {
		t.Fatalf("id: %q", got)
	}
	if got := jsonString(b, "discussionId", true); got != "D1" {
		t.Fatalf("last discussionId: %q", got)
	}
	if got := jsonString(b, "nextPageToken", true); got != "" {
		t.Fatalf("missing key: %q", got)
	}
}

func TestJudge(t *testing.T) {
	r := Results{
		Ceilings: Ceilings{Hello: Throughput{PerSec: 1000}, Create: Throughput{PerSec: 100},
			SDKSend: Throughput{PerSec: 12}, SDKGet: Throughput{PerSec: 100}},
		Import: ImportBench{Records: 100_000, PeakRSSMiB: 255.9},
		KFA: KFA{Asks: Throughput{PerSec: 60}, GetTask: Throughput{PerSec: 499}, ListTasks: Throughput{PerSec: 200}, Reply1000: Latency{N: 3, P99Ms: 99},
			Flood: Flood{Quiet: Throughput{PerSec: 100}, Flooded: Throughput{PerSec: 79}, Refusals: Throughput{Ops: 10}}},
		Sizes: []Size{
			{Tasks: 10_000, GetTask: Latency{P50Ms: 1}, ListFirst: Latency{P50Ms: 1}, ListDeep: Latency{P50Ms: 1}},
			{Tasks: 1_000_000, GetTask: Latency{P50Ms: 1.6}, ListFirst: Latency{P50Ms: 1.5}, ListDeep: Latency{P50Ms: 1}, StartupMs: 999, Memory: Memory{RSSMiB: 200}},
		},
	}
	r.judge()
	want := map[string]bool{
		"durable asks vs bbolt Batch create ceiling":       true,
		"GetTask vs hello-JSON ceiling":                    false,
		"durable asks vs the a2a-go SDK's in-memory sends": true,
		"GetTask vs the a2a-go SDK's in-memory GetTask":    false,
		"import of 100k records, peak server RSS":          true,
		"ListTasks page(50) vs hello-JSON ceiling":         true,
		"ListTasks page latency at 1M vs 10k (p50)":        true,
		"ListTasks deep page latency at 1M vs 10k (p50)":   true,
		"GetTask latency at 1M vs 10k (p50)":               false,
		"startup at 1M tasks (median of 3)":                true,
		"RSS at 1M tasks":                                  false,
		"reply completing 1,000 tasks, p99":                true,
		"honest asks during a refusal flood vs without":    false,
	}
	var n int
	for _, tg := range r.Targets {
		if tg.Group != "" {
			continue
		}
		n++
		if met, ok := want[tg.Name]; !ok || met != tg.Met {
			t.Errorf("%s: met=%v (%s)", tg.Name, tg.Met, tg.Got)
		}
	}
	if n != len(want) {
		t.Fatalf("%d targets of docs/performance.md: %+v", n, r.Targets)
	}
}
