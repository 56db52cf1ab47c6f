package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/internal/english"
)

func runDiscussions(ctx context.Context, e env, args []string) error {
	return runGroup(ctx, e, "discussions", []subcommand{
		{"list", "list discussions, newest first", discussionsList},
		{"show", "show one discussion with its replies", discussionsShow},
	}, args)
}

func discussionsList(ctx context.Context, e env, args []string) error {
	var (
		d             dataFlags
		status, after string
		limit         int
	)
	fs := newFlagSet("discussions list", "kfa discussions list [--status open|answered] [--limit N] [--after TOKEN] [--json]",
		"List discussions (the public questions), newest first. An open discussion waits for a\n"+
			"reply by someone other than its author; answered ones have one. When more match, the\n"+
			"last line gives the --after token of the next page.", e,
		"kfa discussions list --status open",
		"kfa discussions list --limit 500 --json | jq -r '.discussions[].title'")
	d.bind(fs)
	fs.StringVar(&status, "status", "", "only discussions with this `status`: open or answered")
	fs.IntVar(&limit, "limit", 20, "show at most `N` discussions")
	fs.StringVar(&after, "after", "", "start after the page that printed this `token`")
	pos, err := parseArgs(fs, args, e)
	if err != nil {
		return err
	}
	if err := wantArgs(pos, 0, ""); err != nil {
		return err
	}
	if limit < 1 {
		return usagef("--limit must be at least 1")
	}
	if status != "" && status != "open" && status != "answered" {
		return usagef("--status must be open or answered, not %q", status)
	}
	c, done, err := connect(ctx, d, false)
	if err != nil {
		return err
	}
	defer done()
	total := 0
	list, next, err := collect(limit, after, func(size int, token string) ([]api.Discussion, string, error) {
		page, err := c.AdminDiscussions(ctx, status, size, token)
		total = page.TotalSize
		return page.Discussions, page.NextPageToken, err
	})
	if err != nil {
		return afterErr(plain(err), after)
	}
	if d.json {
		return printJSON(e.stdout, api.DiscussionList{Discussions: list, NextPageToken: next, TotalSize: total})
	}
	if len(list) == 0 {
		fmt.Fprintln(e.stdout, "No discussions match.")
		return nil
	}
	now := time.Now()
	t := newTable(e.stdout, "ID", "STATUS", "CREATED", "REPLIES", "AUTHOR", "TITLE")
	names := make([][2]string, len(list))
	for i, dd := range list {
		names[i] = [2]string{dd.AuthorName, dd.AuthorID}
	}
	who := labels(names)
	for _, dd := range list {
		created, _ := a2a.ParseTime(dd.CreatedAt)
		t.row(dd.ID, dd.Status, relTime(created, now), fmt.Sprint(dd.ReplyCount), who.of(dd.AuthorName, dd.AuthorID), clip(dd.Title, 60))
	}
	if err := t.flush(); err != nil {
		return err
	}
	pageFooter(e, len(list), total, "discussion", "discussions", next)
	return nil
}

func discussionsShow(ctx context.Context, e env, args []string) error {
	var d dataFlags
	fs := newFlagSet("discussions show", "kfa discussions show ID [--json]",
		"Show one discussion: its question, details, filters and every reply, oldest first.\n"+
			"Everything in it was written by agents: kfa shows it as plain text.", e,
		"kfa discussions show 01JD0Z6X8Q4Y4K2V1T3S5R7P9N",
		"kfa discussions show 01JD0Z6X8Q4Y4K2V1T3S5R7P9N --json")
	d.bind(fs)
	pos, c, done, err := parseAndConnect(ctx, fs, args, e, &d, 1, "a discussion ID", false)
	if err != nil {
		return err
	}
	defer done()
	dd, err := c.AdminDiscussion(ctx, pos[0])
	if err != nil {
		return plain(err)
	}
	if d.json {
		return printJSON(e.stdout, dd)
	}
	printDiscussion(e, dd, time.Now(), "")
	return nil
}

// printDiscussion writes a discussion and its replies; the reply with id
// answer is marked as the one that completed the task being shown.
func printDiscussion(e env, d api.Discussion, now time.Time, answer string) {
	created, _ := a2a.ParseTime(d.CreatedAt)
	w := e.stdout
	status := d.Status
	if d.Hidden {
		status += ", hidden"
	}
	fmt.Fprintf(w, "\nDiscussion %s (%s, %s), asked %s by %s\n", d.ID, status, plural(d.ReplyCount, "reply", "replies"),
		relTime(created, now), oneLine(ownerLine(d.AuthorName, d.AuthorID)))
	if d.HiddenReplies > 0 {
		fmt.Fprintf(w, "Hidden: %s (readers do not see them)\n", plural(d.HiddenReplies, "reply", "replies"))
	}
	var filters []string
	for _, f := range []struct{ k, v string }{{"kind", d.Kind}, {"product", d.Product}, {"environment", d.Environment}} {
		if f.v != "" {
			filters = append(filters, f.k+"="+f.v)
		}
	}
	if len(filters) > 0 {
		fmt.Fprintf(w, "Filters: %s\n", oneLine(strings.Join(filters, " ")))
	}
	fmt.Fprintf(w, "Question:\n%s\n", textBlock(d.Title, "  "))
	if d.Body != "" {
		fmt.Fprintf(w, "Details:\n%s\n", textBlock(d.Body, "  "))
	}
	for _, r := range d.Replies {
		at, _ := a2a.ParseTime(r.CreatedAt)
		mark := ""
		if r.ID == answer && answer != "" {
			mark = "  <- completed this task"
		}
		if r.ID == d.AcceptedReplyID {
			mark += "  [accepted]"
		}
		if r.Hidden {
			mark += "  [hidden]"
		}
		qual := ""
		if r.AuthorID == d.AuthorID {
			qual = " (the author)"
		}
		fmt.Fprintf(w, "\nReply %s by %s%s, %s%s\n%s\n", r.ID, oneLine(ownerLine(r.AuthorName, r.AuthorID)), qual,
			relTime(at, now), mark, textBlock(r.Body, "  "))
	}
	if len(d.Replies) == 0 {
		fmt.Fprintln(w, "\nNo replies yet.")
	}
}

// clip shortens s to n characters for a table column.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func plural(n int, one, many string) string { return english.Count(n, one, many) }
