package main

import (
	"fmt"
	"strings"
)

// The targets of issue 32 (Engine II: an ask costs less, PostgreSQL reads
// take one round trip), each a ratio measured in this run.

// engine2Group is the heading of issue 32's targets.
const engine2Group = "ENGINE II TARGETS (issue 32)"

// Issue 32's bounds.
const (
	maxCPURatio2    = 0.65            // server CPU per durable ask, of de7e102's
	minAskShare2    = 0.35            // durable asks, of the Batch create ceiling
	minGetTaskShare = 0.55            // GetTask, of hello-JSON
	minListShare    = 0.25            // ListTasks page of 50, of hello-JSON
	minPGGetTask    = 0.60            // PostgreSQL GetTask, of bbolt's
	minPGListTasks  = 0.50            // PostgreSQL ListTasks, of bbolt's
	minPGListDiscs  = 0.50            // PostgreSQL ListDiscussions, of bbolt's
	maxReadTrips    = 1               // round trips of every read route
	maxWriteTrips   = maxCommandTrips // round trips of an ask, and of a reply
	maxAsksRSSMiB   = 100             // peak RSS of the server through the asks phase
)

// judgeEngine2 adds issue 32's targets to r.Targets.
func (r *Results) judgeEngine2() {
	add := func(name, want, got string, v float64, met bool) {
		r.Targets = append(r.Targets, Target{Group: engine2Group, Name: name, Want: want, Got: got, Value: v, Met: met})
	}
	skip := func(name, want, why string) {
		r.Targets = append(r.Targets, Target{Group: engine2Group, Name: name, Want: want, Skipped: why})
	}
	c, k := r.Ceilings, r.KFA
	judgeCPU(baselineOf(r.Baselines, engine2Commit), maxCPURatio2, add, skip)
	q := ratio(k.Asks.PerSec, c.Create.PerSec)
	add("durable asks vs the Batch create ceiling", ">= "+pct(minAskShare2), pct(q), q, q >= minAskShare2)
	q = ratio(k.GetTask.PerSec, c.Hello.PerSec)
	add("GetTask vs hello-JSON", ">= "+pct(minGetTaskShare), pct(q), q, q >= minGetTaskShare)
	q = ratio(k.ListTasks.PerSec, c.Hello.PerSec)
	add("ListTasks, page of 50, vs hello-JSON", ">= "+pct(minListShare), pct(q), q, q >= minListShare)

	type pg struct {
		name string
		min  float64
		get  func(StoreRun) Throughput
	}
	pgTargets := []pg{
		{"PostgreSQL GetTask vs bbolt's (1 process)", minPGGetTask, func(s StoreRun) Throughput { return s.GetTask }},
		{"PostgreSQL ListTasks vs bbolt's (1 process)", minPGListTasks, func(s StoreRun) Throughput { return s.ListTasks }},
		{"PostgreSQL ListDiscussions vs bbolt's (1 process)", minPGListDiscs, func(s StoreRun) Throughput { return s.ListDiscussions }},
	}
	readsName, readsWant := "PostgreSQL round trips of every read route (most of any read)", fmt.Sprintf("<= %d", maxReadTrips)
	askName, replyName, writeWant := "PostgreSQL round trips per ask (most of any ask)", "PostgreSQL round trips per reply (most of any reply)",
		fmt.Sprintf("<= %d", maxWriteTrips)
	sb := r.Stores
	if sb == nil || len(sb.Runs) < 2 {
		for _, t := range pgTargets {
			skip(t.name, ">= "+times(t.min), noStore)
		}
		skip(readsName, readsWant, noStore)
		skip(askName, writeWant, noStore)
		skip(replyName, writeWant, noStore)
	} else {
		for _, t := range pgTargets {
			bolt, one := t.get(sb.Runs[0]), t.get(sb.Runs[1])
			if bolt.Ops == 0 {
				skip(t.name, ">= "+times(t.min), "not measured: the store comparison made no such read on bbolt")
				continue
			}
			q := ratio(one.PerSec, bolt.PerSec)
			add(t.name, ">= "+times(t.min), times(q), q, q >= t.min)
		}
		if sb.TripsError != "" {
			skip(readsName, readsWant, "not measured: "+sb.TripsError)
			skip(askName, writeWant, "not measured: "+sb.TripsError)
			skip(replyName, writeWant, "not measured: "+sb.TripsError)
		} else {
			tr := sb.Trips
			most, met := uint64(0), len(tr.Reads) > 0
			var cells []string
			for _, rd := range tr.Reads {
				most = max(most, rd.Max)
				met = met && rd.Max <= maxReadTrips && rd.Reads > 0
				cells = append(cells, fmt.Sprintf("%s %d", rd.Route, rd.Max))
			}
			add(readsName, readsWant, fmt.Sprintf("%d (%s)", most, strings.Join(cells, ", ")), float64(most), met)
			for _, w := range []struct {
				name string
				t    tripCount
			}{{askName, tripCount{tr.Asks.PerCommand(), tr.Asks.Max, tr.Asks.Commands}},
				{replyName, tripCount{tr.Replies.PerCommand(), tr.Replies.Max, tr.Replies.Commands}}} {
				add(w.name, writeWant, fmt.Sprintf("%.2f (most %d)", w.t.per, w.t.most), float64(w.t.most),
					w.t.n > 0 && w.t.per <= maxWriteTrips && w.t.most <= maxWriteTrips)
			}
		}
	}

	m := k.AsksMemory
	name, want := "server peak RSS through the asks phase (VmHWM)", fmt.Sprintf("<= %d MiB", maxAsksRSSMiB)
	if m.VmHWMMiB == 0 {
		skip(name, want, "not measured: no /proc/PID/status to read it from")
		return
	}
	add(name, want, fmt.Sprintf("%.0f MiB (the highest sampled: anon %.0f MiB, file-backed %.0f MiB)", m.VmHWMMiB, m.AnonMiB, m.FileMiB),
		m.VmHWMMiB, m.VmHWMMiB <= maxAsksRSSMiB)
}

// tripCount is what the write targets judge of a command's round trips.
type tripCount struct {
	per  float64
	most uint64
	n    uint64
}
