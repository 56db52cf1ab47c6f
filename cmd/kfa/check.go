package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/server"
)

// errCheckFailed is the error of a check that found violations; the report
// has been printed.
var errCheckFailed = errors.New("the database has problems (see above)")

func runCheck(ctx context.Context, e env, args []string) error {
	var (
		d     dataFlags
		pages bool
	)
	fs := newFlagSet("check", "kfa check [--pages] [--json] [--store postgres://...]",
		"Verify the database: bbolt's own consistency check (pages, freelist), then kfa's\n"+
			"invariants: every task is in each of its seven indexes exactly once and every index entry\n"+
			"points at its task; counters equal what they count; the message-id map, the discussion\n"+
			"members and the working-task list point at existing tasks; every completed task names a\n"+
			"qualifying reply on its discussion and no waiting task has one; inbox entries match their\n"+
			"replies and the unacked index; discussion status and reply counts match the replies.\n\n"+
			"It runs on a live server too, reading in short transactions that hold no one back; a\n"+
			"counter that seems off is counted again in one snapshot before it is reported. On a live\n"+
			"server bbolt's page check runs only with --pages, because it holds writes back while it\n"+
			"runs; without a server it always runs. Exit status 1 when anything is wrong, with one line\n"+
			"per problem naming the bucket, the key and the task.\n\n"+
			"With --store postgres://... it checks that PostgreSQL database instead, directly (no server\n"+
			"needed): the same invariants where they apply, as SQL in one snapshot, one line per problem\n"+
			"naming the table, the row's key and the task.", e,
		"kfa check",
		"kfa check --data /var/lib/kfa --json | jq '.violations[]'",
		"kfa check --store 'postgres://kfa:PASSWORD@db.internal:5432/kfa'")
	d.bind(fs)
	fs.BoolVar(&pages, "pages", false, "on a running server, run bbolt's page check too (holds writes back while it runs)")
	pos, err := parseArgs(fs, args, e)
	if err != nil {
		return err
	}
	if err := wantArgs(pos, 0, ""); err != nil {
		return err
	}
	var rep api.CheckReport
	if d.store != "" {
		rep, err = checkPostgres(ctx, d.store)
	} else {
		rep, err = checkData(ctx, d, pages)
	}
	if err != nil {
		return err
	}
	if d.json {
		if err := printJSON(e.stdout, rep); err != nil {
			return err
		}
	} else {
		printCheckReport(e.stdout, rep)
	}
	if !rep.OK {
		return errCheckFailed
	}
	return nil
}

// checkData checks the data directory's store, through its server or
// opening the file.
func checkData(ctx context.Context, d dataFlags, pages bool) (api.CheckReport, error) {
	c, done, err := connect(ctx, d, false)
	if err != nil {
		return api.CheckReport{}, err
	}
	defer done()
	rep, err := c.Check(ctx, pages)
	if err != nil {
		return api.CheckReport{}, plain(err)
	}
	return rep, nil
}

// checkPostgres checks a PostgreSQL database directly.
func checkPostgres(ctx context.Context, u string) (api.CheckReport, error) {
	if !server.IsPostgresURL(u) {
		return api.CheckReport{}, usagef("--store takes a postgres:// URL")
	}
	db, err := openPG(ctx, u)
	if err != nil {
		return api.CheckReport{}, err
	}
	defer db.Close()
	rep, err := db.Check(ctx)
	if err != nil {
		return api.CheckReport{}, err
	}
	return server.PostgresCheckReport(rep), nil
}

// printCheckReport writes a report for people.
func printCheckReport(w io.Writer, rep api.CheckReport) {
	n := 0
	for _, c := range rep.Examined {
		n += c
	}
	notes := func() {
		for _, note := range rep.Notes {
			fmt.Fprintf(w, "note: %s\n", note)
		}
	}
	entry, entries, bucket, buckets := "entry", "entries", "bucket", "buckets"
	if rep.Path == "postgresql" {
		entry, entries, bucket, buckets = "row", "rows", "table", "tables"
	}
	if rep.OK {
		passed := "bbolt's check and every kfa invariant"
		if rep.Path == "postgresql" {
			passed = "every kfa invariant"
		}
		if len(rep.Notes) > 0 {
			passed = "every check that ran (see the notes)"
		}
		fmt.Fprintf(w, "OK: %s (schema %d) passed %s; %s in %s examined.\n",
			rep.Path, rep.SchemaVersion, passed, plural(n, entry, entries), plural(len(rep.Examined), bucket, buckets))
		notes()
		return
	}
	total := len(rep.Violations) + rep.Truncated
	fmt.Fprintf(w, "FAILED: %s (schema %d) has %s; %s examined.\n", rep.Path, rep.SchemaVersion,
		plural(total, "problem", "problems"), plural(n, entry, entries))
	notes()
	fmt.Fprintln(w)
	t := newTable(w, "KIND", "BUCKET", "KEY", "TASK", "PROBLEM")
	for _, v := range rep.Violations {
		t.row(v.Kind, dash(v.Bucket), dash(v.Key), dash(v.TaskID), v.Detail)
	}
	_ = t.flush()
	if rep.Truncated > 0 {
		fmt.Fprintf(w, "... and %d more not listed.\n", rep.Truncated)
	}
	fmt.Fprintln(w, "\nRestore the latest good backup (kfa restore), or report the problems with this output.")
	if kinds := kindsOf(rep); len(kinds) > 0 {
		fmt.Fprintf(w, "Kinds found: %s.\n", strings.Join(kinds, ", "))
	}
}

func kindsOf(rep api.CheckReport) []string {
	var out []string
	for _, v := range rep.Violations {
		if !slices.Contains(out, v.Kind) {
			out = append(out, v.Kind)
		}
	}
	return out
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
