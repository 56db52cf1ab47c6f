package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/api"
)

func runStats(ctx context.Context, e env, args []string) error {
	var d dataFlags
	fs := newFlagSet("stats", "kfa stats [--json]",
		"Show what the database holds: tasks by state and the longest waiting one, discussions,\n"+
			"agents, knowledge records, the record feed sequence and the search index lag, and the\n"+
			"file's size and free pages (on PostgreSQL, the database's size). Counts come from counters\n"+
			"kept with every write, so this is cheap on a live server.", e,
		"kfa stats",
		"kfa stats --json | jq .tasks.byState")
	d.bind(fs)
	_, c, done, err := parseAndConnect(ctx, fs, args, e, &d, 0, "", false)
	if err != nil {
		return err
	}
	defer done()
	st, err := c.Stats(ctx)
	if err != nil {
		return plain(err)
	}
	if d.json {
		return printJSON(e.stdout, st)
	}
	now := time.Now()
	var states []string
	for _, s := range slices.Sorted(maps.Keys(st.Tasks.ByState)) {
		states = append(states, fmt.Sprintf("%s %d", shortState(s), st.Tasks.ByState[s]))
	}
	oldest := "none waiting"
	if o := st.Tasks.OldestWaiting; o != nil {
		since, _ := a2a.ParseTime(o.Since)
		oldest = fmt.Sprintf("%s, waiting since %s (%s), owner %s", o.ID, o.Since, relTime(since, now), o.OwnerID)
	}
	lag := "unknown (this server does not report it)"
	if st.IndexLag != nil {
		lag = plural(int(*st.IndexLag), "change", "changes")
	}
	db := st.Database
	t := newTable(e.stdout, "Database", db.Path)
	switch {
	case db.Backend == api.BackendPostgres && db.SizeBytes > 0:
		t.row("Size", humanBytes(db.SizeBytes)+" (pg_database_size)")
	case db.Backend == api.BackendPostgres:
		t.row("Size", "unknown (pg_database_size could not be read)")
	default:
		t.row("Size", fmt.Sprintf("%s (%d pages of %d bytes, %d free, %d pending)", humanBytes(db.SizeBytes),
			db.SizeBytes/int64(max(db.PageSize, 1)), db.PageSize, db.FreePages, db.PendingPages))
	}
	t.row("Schema", fmt.Sprint(db.SchemaVersion))
	t.row("Tasks", fmt.Sprintf("%d (%s)", st.Tasks.Total, strings.Join(states, ", ")))
	t.row("Oldest waiting", oldest)
	t.row("Discussions", fmt.Sprintf("%d (open %d, answered %d)", st.Discussions.Total, st.Discussions.Open, st.Discussions.Answered))
	t.row("Agents", fmt.Sprint(st.Agents))
	t.row("Records", fmt.Sprint(st.Records))
	t.row("Log position", st.LogPosition)
	t.row("Index lag", lag)
	for _, p := range st.Peers {
		state := p.State
		if p.Purging {
			state = "removed, purging"
		}
		t.row("Peer "+p.Name, fmt.Sprintf("%s, lag %ds, %s", state, p.LagSeconds, plural(p.Documents, "document", "documents")))
	}
	return t.flush()
}
