package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// storeRows is the store comparison as table rows: a header, then one row
// per phase with each setup's ops/s and p99, and every setup after the
// first as a ratio to the first (bbolt).
func storeRows(sb StoreBench) [][]string {
	if len(sb.Runs) == 0 {
		return nil
	}
	head := []string{"STORES (each setup on fresh storage, rounds alternating)"}
	for i, r := range sb.Runs {
		head = append(head, r.Name+": ops/s", "p99 ms")
		if i > 0 {
			head = append(head, "of bbolt")
		}
	}
	rows := [][]string{head}
	phase := func(name string, get func(StoreRun) Throughput, skipped func(StoreRun) bool) {
		cells := []string{name}
		base := get(sb.Runs[0])
		for i, r := range sb.Runs {
			t := get(r)
			if skipped(r) {
				cells = append(cells, "n/a", "")
			} else {
				cells = append(cells, f1(t.PerSec), f1(t.P99Ms))
			}
			if i > 0 {
				q := "-"
				if !skipped(r) && !skipped(sb.Runs[0]) && base.PerSec > 0 {
					q = times(ratio(t.PerSec, base.PerSec))
				}
				cells = append(cells, q)
			}
		}
		rows = append(rows, cells)
	}
	never := func(StoreRun) bool { return false }
	phase("durable ask (new task + discussion)", func(r StoreRun) Throughput { return r.Asks }, never)
	phase("GetTask", func(r StoreRun) Throughput { return r.GetTask }, never)
	phase("ListTasks, page of 50", func(r StoreRun) Throughput { return r.ListTasks }, never)
	phase("ListDiscussions, first page", func(r StoreRun) Throughput { return r.ListDiscussions }, never)
	phase("search (message:send)", func(r StoreRun) Throughput { return r.Search }, func(r StoreRun) bool { return r.SearchSkipped != "" })
	phase("reply (qualifying, completes 1 task)", func(r StoreRun) Throughput { return r.Replies }, never)
	return rows
}

// printStores writes the store comparison and what it leaves out.
func printStores(out io.Writer, sb StoreBench) {
	fmt.Fprintln(out)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, row := range storeRows(sb) {
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	_ = tw.Flush()
	fmt.Fprintf(out, "PostgreSQL: %s\n", sb.Server)
	if sb.TripsError != "" {
		fmt.Fprintf(out, "PostgreSQL round trips: not measured (%s)\n", sb.TripsError)
	} else {
		fmt.Fprintln(out, tripsLine(sb.Trips))
	}
	fmt.Fprintf(out, "not compared: %s\n", sb.Skipped)
	for _, r := range sb.Runs {
		for _, t := range []struct {
			name string
			tp   Throughput
		}{{"asks", r.Asks}, {"gettask", r.GetTask}, {"listtasks", r.ListTasks}, {"listdiscussions", r.ListDiscussions}, {"search", r.Search}, {"replies", r.Replies}} {
			if t.tp.FirstError != "" {
				fmt.Fprintf(out, "first error in %s on %s: %s\n", t.name, r.Name, t.tp.FirstError)
			}
		}
		if r.SearchSkipped != "" {
			fmt.Fprintf(out, "search on %s: %s\n", r.Name, r.SearchSkipped)
		}
	}
}
