package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/client"
)

func runTasks(ctx context.Context, e env, args []string) error {
	return runGroup(ctx, e, "tasks", []subcommand{
		{"list", "list tasks of every agent, newest first", tasksList},
		{"show", "show one task with its discussion and replies", tasksShow},
		{"cancel", "cancel a waiting task (operator cancel)", tasksCancel},
	}, args)
}

func tasksList(ctx context.Context, e env, args []string) error {
	var (
		d                          dataFlags
		owner, state, ctxID, since string
		after                      string
		limit                      int
	)
	fs := newFlagSet("tasks list", "kfa tasks list [--owner AGENT_ID] [--state STATE] [--context ID] [--since TIME] [--limit N] [--after TOKEN] [--json]",
		"List the tasks of every agent, newest status timestamp first (the order of A2A ListTasks).\n"+
			"STATE is working, completed or canceled, or a TASK_STATE_* name. --since is inclusive.\n"+
			"When more tasks match, the last line gives the --after token of the next page; use it\n"+
			"with the same filters.", e,
		"kfa tasks list",
		"kfa tasks list --state working --limit 200",
		"kfa tasks list --owner 01JD0Z6X8Q4Y4K2V1T3S5R7P9N --since 2026-12-01T00:00:00Z --json",
		"kfa tasks list --state working --after AZ3x...  # the next page")
	d.bind(fs)
	fs.StringVar(&owner, "owner", "", "only tasks of the agent with this `id`")
	fs.StringVar(&state, "state", "", "only tasks in this `state`")
	fs.StringVar(&ctxID, "context", "", "only tasks with this context `id`")
	fs.StringVar(&since, "since", "", "only tasks whose status changed at or after this RFC 3339 `time`")
	fs.IntVar(&limit, "limit", 50, "show at most `N` tasks")
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
	q := client.TaskQuery{Owner: owner, ContextID: ctxID, Since: since}
	if state != "" {
		st, err := parseState(state)
		if err != nil {
			return usagef("--state: %v", err)
		}
		q.State = string(st)
	}
	if since != "" {
		if _, err := a2a.ParseTime(since); err != nil {
			return usagef("--since: %q is not an RFC 3339 time such as 2026-12-02T10:30:00Z", since)
		}
	}
	c, done, err := connect(ctx, d, false)
	if err != nil {
		return err
	}
	defer done()
	total := 0
	list, next, err := collect(limit, after, func(size int, token string) ([]api.Task, string, error) {
		q.PageSize, q.PageToken = size, token
		page, err := c.AdminTasks(ctx, q)
		total = page.TotalSize
		return page.Tasks, page.NextPageToken, err
	})
	if err != nil {
		return afterErr(plain(err), after)
	}
	if d.json {
		return printJSON(e.stdout, api.TaskList{Tasks: list, NextPageToken: next, TotalSize: total})
	}
	if len(list) == 0 {
		fmt.Fprintln(e.stdout, "No tasks match.")
		return nil
	}
	now := time.Now()
	t := newTable(e.stdout, "ID", "STATE", "SINCE", "OWNER", "DISCUSSION", "CONTEXT")
	names := make([][2]string, len(list))
	for i, tk := range list {
		names[i] = [2]string{tk.OwnerName, tk.OwnerID}
	}
	who := labels(names)
	for _, tk := range list {
		at, _ := a2a.ParseTime(tk.StatusTimestamp)
		t.row(tk.ID, shortState(tk.State), relTime(at, now), who.of(tk.OwnerName, tk.OwnerID), tk.DiscussionID, tk.ContextID)
	}
	if err := t.flush(); err != nil {
		return err
	}
	pageFooter(e, len(list), total, "task", "tasks", next)
	return nil
}

// afterErr explains a refused --after token.
func afterErr(err error, after string) error {
	if after != "" && strings.Contains(err.Error(), "pageToken") {
		return fmt.Errorf("--after: the token does not belong to this listing; use it with the filters of the page that printed it")
	}
	return err
}

// pageFooter says how much was shown (total < 0: unknown) and how to get
// the next page.
func pageFooter(e env, shown, total int, one, many, next string) {
	if total >= 0 {
		fmt.Fprintf(e.stdout, "%d of %s shown.\n", shown, plural(total, one, many))
	}
	if next != "" {
		fmt.Fprintf(e.stdout, "Next page: --after %s\n", next)
	}
}

func nameOrID(name, id string) string {
	if name == "" {
		return id
	}
	return name
}

func tasksShow(ctx context.Context, e env, args []string) error {
	var d dataFlags
	fs := newFlagSet("tasks show", "kfa tasks show ID [--json]",
		"Show one task of any agent: its state and times, its owner, the question it asked, the\n"+
			"discussion's replies and, for a completed task, the reply that answered it. --json prints\n"+
			"the operator summary, the task exactly as its owner reads it over A2A, and the discussion.", e,
		"kfa tasks show 01JD0Z6X8Q4Y4K2V1T3S5R7P9N",
		"kfa tasks show 01JD0Z6X8Q4Y4K2V1T3S5R7P9N --json | jq .a2a.status")
	d.bind(fs)
	pos, c, done, err := parseAndConnect(ctx, fs, args, e, &d, 1, "a task ID", false)
	if err != nil {
		return err
	}
	defer done()
	td, err := c.AdminTask(ctx, pos[0])
	if err != nil {
		return plain(err)
	}
	if d.json {
		return printJSON(e.stdout, td)
	}
	now := time.Now()
	tk := td.Task
	at, _ := a2a.ParseTime(tk.StatusTimestamp)
	created, _ := a2a.ParseTime(tk.CreatedAt)
	kv := newTable(e.stdout, "Task", tk.ID)
	kv.row("State", fmt.Sprintf("%s since %s (%s)", shortState(tk.State), tk.StatusTimestamp, relTime(at, now)))
	kv.row("Created", fmt.Sprintf("%s (%s)", tk.CreatedAt, relTime(created, now)))
	kv.row("Owner", ownerLine(tk.OwnerName, tk.OwnerID))
	kv.row("Context", tk.ContextID)
	kv.row("Message id", tk.MessageID)
	kv.row("Discussion", tk.DiscussionID)
	if err := kv.flush(); err != nil {
		return err
	}
	if td.Discussion == nil {
		fmt.Fprintf(e.stdout, "\nThe discussion %s is missing; run '%s check'.\n", tk.DiscussionID, e.name())
		return nil
	}
	printDiscussion(e, *td.Discussion, now, tk.ReplyID)
	return nil
}

func ownerLine(name, id string) string {
	if name == "" {
		return id + " (unknown agent)"
	}
	return name + " (" + id + ")"
}

func tasksCancel(ctx context.Context, e env, args []string) error {
	var d dataFlags
	fs := newFlagSet("tasks cancel", "kfa tasks cancel ID [--json]",
		"Cancel a waiting task of any agent, as its owner could: a canceled task stays canceled\n"+
			"(canceling it again changes nothing); a completed task cannot be canceled. The\n"+
			"discussion and its replies stay.", e,
		"kfa tasks cancel 01JD0Z6X8Q4Y4K2V1T3S5R7P9N")
	d.bind(fs)
	pos, c, done, err := parseAndConnect(ctx, fs, args, e, &d, 1, "a task ID", false)
	if err != nil {
		return err
	}
	defer done()
	res, err := c.AdminCancelTask(ctx, pos[0])
	if err != nil {
		return plain(err)
	}
	if d.json {
		return printJSON(e.stdout, res)
	}
	if res.Changed {
		fmt.Fprintf(e.stdout, "Canceled task %s of %s.\n", res.Task.ID, oneLine(nameOrID(res.Task.OwnerName, res.Task.OwnerID)))
	} else {
		fmt.Fprintf(e.stdout, "Task %s was already canceled (at %s); nothing changed.\n", res.Task.ID, res.Task.StatusTimestamp)
	}
	return nil
}
