package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestCheckStoreURL(t *testing.T) {
	for _, tc := range []struct {
		url string
		ok  bool
	}{
		{"postgres://kfa:secret@127.0.0.1:5432/kfa?sslmode=disable", true},
		{"postgresql://kfa@db.internal/kfa", true},
		{"mysql://kfa:secret@127.0.0.1/kfa", false},
		{"/var/lib/kfa/kfa.db", false},
		{"postgres:///kfa", false},
		{"postgres://kfa:secret@%zz/kfa", false},
	} {
		err := checkStoreURL(tc.url)
		if (err == nil) != tc.ok {
			t.Errorf("%q: err=%v, want ok=%v", tc.url, err, tc.ok)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("%q: the error prints the password: %v", tc.url, err)
		}
	}
}

func TestRunMainRefusesBadStore(t *testing.T) {
	if code := runMain(t.Context(), []string{"--store", "mysql://u:p@h/db"}); code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
}

func TestWithDatabase(t *testing.T) {
	got, err := withDatabase("postgres://kfa:pw@127.0.0.1:5432/postgres?sslmode=disable", "kfabench_1_2")
	if err != nil || got != "postgres://kfa:pw@127.0.0.1:5432/kfabench_1_2?sslmode=disable" {
		t.Fatalf("%q, %v", got, err)
	}
}

func TestStoreRows(t *testing.T) {
	tp := func(perSec, p99 float64) Throughput { return Throughput{PerSec: perSec, Latency: Latency{P99Ms: p99}} }
	sb := StoreBench{Server: "15.0, fsync=off", Skipped: storeSkipped, Runs: []StoreRun{
		{Name: "bbolt, 1 process", Procs: 1, Asks: tp(1000, 20), GetTask: tp(4000, 5), ListTasks: tp(2000, 9), ListDiscussions: tp(1000, 10), Search: tp(500, 40), Replies: tp(800, 30)},
		{Name: "PostgreSQL, 1 process", Procs: 1, Asks: tp(250, 80), GetTask: tp(2000, 9), ListTasks: tp(1000, 20), ListDiscussions: tp(400, 30), SearchSkipped: "not measurable", Replies: tp(400, 60)},
		{Name: "PostgreSQL, 2 processes", Procs: 2, Asks: tp(500, 70), GetTask: tp(3000, 7), ListTasks: tp(1500, 12), ListDiscussions: tp(600, 20), Search: tp(600, 30), Replies: tp(200, 90)},
	}}
	rows := storeRows(sb)
	if len(rows) != 7 {
		t.Fatalf("%d rows: %q", len(rows), rows)
	}
	// header: name, then ops/s and p99 per setup, and a ratio for each setup after the first
	if len(rows[0]) != 1+2+3+3 {
		t.Fatalf("header %q", rows[0])
	}
	want := map[string][]string{
		"durable ask (new task + discussion)":  {"1000", "20.0", "250", "80.0", "0.25x", "500", "70.0", "0.50x"},
		"GetTask":                              {"4000", "5.00", "2000", "9.00", "0.50x", "3000", "7.00", "0.75x"},
		"ListTasks, page of 50":                {"2000", "9.00", "1000", "20.0", "0.50x", "1500", "12.0", "0.75x"},
		"ListDiscussions, first page":          {"1000", "10.0", "400", "30.0", "0.40x", "600", "20.0", "0.60x"},
		"search (message:send)":                {"500", "40.0", "n/a", "", "-", "600", "30.0", "1.20x"},
		"reply (qualifying, completes 1 task)": {"800", "30.0", "400", "60.0", "0.50x", "200", "90.0", "0.25x"},
	}
	for _, row := range rows[1:] {
		w, ok := want[row[0]]
		if !ok {
			t.Errorf("unexpected row %q", row)
			continue
		}
		if strings.Join(row[1:], "|") != strings.Join(w, "|") {
			t.Errorf("%s: %q, want %q", row[0], row[1:], w)
		}
	}
	var out bytes.Buffer
	printStores(&out, sb)
	for _, s := range []string{"PostgreSQL, 2 processes: ops/s", "PostgreSQL: 15.0, fsync=off", "not compared: the preloaded sizes", "search on PostgreSQL, 1 process: not measurable"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("report lacks %q:\n%s", s, out.String())
		}
	}
	if storeRows(StoreBench{}) != nil {
		t.Error("rows without runs")
	}
}

// TestStoreFromEnv: make bench passes no flags of its own, so the URL
// comes from the bench's variable, else from the test suite's (the same
// throwaway server the PostgreSQL tests use), else there is none.
func TestStoreFromEnv(t *testing.T) {
	for _, tc := range []struct {
		name       string
		env        map[string]string
		want, from string
	}{
		{"none", nil, "", ""},
		{"bench", map[string]string{storeEnv: "postgres://b@h/b"}, "postgres://b@h/b", storeEnv},
		{"tests", map[string]string{testStoreEnv: "postgres://t@h/t"}, "postgres://t@h/t", testStoreEnv},
		{"bench first", map[string]string{storeEnv: "postgres://b@h/b", testStoreEnv: "postgres://t@h/t"}, "postgres://b@h/b", storeEnv},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, from := storeFromEnv(func(k string) string { return tc.env[k] })
			if got != tc.want || from != tc.from {
				t.Fatalf("storeFromEnv = %q from %q, want %q from %q", got, from, tc.want, tc.from)
			}
		})
	}
}
