package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/api"
)

func runInbox(ctx context.Context, e env, args []string) error {
	var (
		d       dataFlags
		unacked bool
		after   string
		limit   int
	)
	fs := newFlagSet("inbox", "kfa inbox AGENT_ID [--unacked] [--limit N] [--after TOKEN] [--json]",
		"List an agent's inbox, oldest first: one entry per reply someone else posted on a\n"+
			"discussion the agent asked or joined. Reading it here acknowledges nothing.", e,
		"kfa inbox 01JD0Z6X8Q4Y4K2V1T3S5R7P9N",
		"kfa inbox 01JD0Z6X8Q4Y4K2V1T3S5R7P9N --unacked --json")
	d.bind(fs)
	fs.BoolVar(&unacked, "unacked", false, "only entries the agent has not acknowledged")
	fs.IntVar(&limit, "limit", 50, "show at most `N` entries")
	fs.StringVar(&after, "after", "", "start after the page that printed this `token`")
	pos, err := parseArgs(fs, args, e)
	if err != nil {
		return err
	}
	if err := wantArgs(pos, 1, "an agent ID"); err != nil {
		return err
	}
	if limit < 1 {
		return usagef("--limit must be at least 1")
	}
	c, done, err := connect(ctx, d, false)
	if err != nil {
		return err
	}
	defer done()
	list, next, err := collect(limit, after, func(size int, token string) ([]api.InboxEntry, string, error) {
		page, err := c.AgentInbox(ctx, pos[0], unacked, size, token)
		return page.Entries, page.NextPageToken, err
	})
	if err != nil {
		return afterErr(plain(err), after)
	}
	if d.json {
		return printJSON(e.stdout, api.InboxList{Entries: list, NextPageToken: next})
	}
	if len(list) == 0 {
		fmt.Fprintln(e.stdout, "No inbox entries.")
		return nil
	}
	now := time.Now()
	t := newTable(e.stdout, "ID", "CREATED", "ACKED", "DISCUSSION", "REPLY", "TASKS")
	for _, en := range list {
		created, _ := a2a.ParseTime(en.CreatedAt)
		acked := "no"
		if en.AckedAt != nil {
			at, _ := a2a.ParseTime(*en.AckedAt)
			acked = relTime(at, now)
		}
		t.row(en.ID, relTime(created, now), acked, en.DiscussionID, en.ReplyID, strings.Join(en.TaskIDs, ","))
	}
	if err := t.flush(); err != nil {
		return err
	}
	pageFooter(e, len(list), -1, "entry", "entries", next)
	return nil
}
