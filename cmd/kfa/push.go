package main

import (
	"context"
	"fmt"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/client"
)

func runPush(ctx context.Context, e env, args []string) error {
	return runGroup(ctx, e, "push", []subcommand{
		{"list", "list push notification deliveries, newest first", pushList},
		{"retry", "send a failed delivery again", pushRetry},
		{"rotate-key", "make a new signing key; the old one stays in the JWKS for a while", pushRotateKey},
		{"keys", "list the signing keys", pushKeys},
	}, args)
}

func pushList(ctx context.Context, e env, args []string) error {
	var (
		d             dataFlags
		failed        bool
		state, taskID string
		after         string
		limit         int
	)
	fs := newFlagSet("push list", "kfa push list [--failed] [--state STATE] [--task ID] [--limit N] [--after TOKEN] [--json]",
		"List the push notification outbox, newest first: one delivery per config of a task\n"+
			"whose state changed. STATE is pending (waiting for its first or next attempt, with\n"+
			"the last attempt's error), delivered or failed (a permanent error, or the retry period\n"+
			"used up, with the reason). Destinations\n"+
			"show scheme, host and port only; tokens and credentials are never shown.", e,
		"kfa push list",
		"kfa push list --failed",
		"kfa push list --task 01JD0Z6X8Q4Y4K2V1T3S5R7P9N --json")
	d.bind(fs)
	fs.BoolVar(&failed, "failed", false, "only failed deliveries (--state failed)")
	fs.StringVar(&state, "state", "", "only deliveries in this `state`: pending, delivered or failed")
	fs.StringVar(&taskID, "task", "", "only deliveries of the task with this `id`")
	fs.IntVar(&limit, "limit", 50, "show at most `N` deliveries")
	fs.StringVar(&after, "after", "", "start after the page that printed this `token`")
	pos, err := parseArgs(fs, args, e)
	if err != nil {
		return err
	}
	if err := wantArgs(pos, 0, ""); err != nil {
		return err
	}
	if failed {
		if state != "" && state != "failed" {
			return usagef("--failed and --state %s contradict each other", state)
		}
		state = "failed"
	}
	switch state {
	case "", "pending", "delivered", "failed":
	default:
		return usagef("--state: %q is not pending, delivered or failed", state)
	}
	if limit < 1 {
		return usagef("--limit must be at least 1")
	}
	c, done, err := connect(ctx, d, false)
	if err != nil {
		return err
	}
	defer done()
	list, next, err := collect(limit, after, func(size int, token string) ([]api.Delivery, string, error) {
		page, err := c.Deliveries(ctx, client.DeliveryQuery{State: state, TaskID: taskID, PageSize: size, PageToken: token})
		return page.Deliveries, page.NextPageToken, err
	})
	if err != nil {
		return afterErr(plain(err), after)
	}
	if d.json {
		return printJSON(e.stdout, api.DeliveryList{Deliveries: list, NextPageToken: next})
	}
	if len(list) == 0 {
		fmt.Fprintln(e.stdout, "No deliveries match.")
		return nil
	}
	now := time.Now()
	t := newTable(e.stdout, "ID", "STATE", "TASK", "DESTINATION", "ATTEMPTS", "SINCE", "NEXT / REASON")
	for _, dl := range list {
		created, _ := a2a.ParseTime(dl.CreatedAt)
		note := dl.Reason
		if dl.State == "pending" {
			next, _ := a2a.ParseTime(dl.NextAttemptAt)
			note = "next attempt " + untilTime(next, now)
			if n := len(dl.RecentAttempts); n > 0 && dl.RecentAttempts[n-1].Error != "" {
				// Why it is waiting: a receiver that is down, or refusing.
				note += "; last attempt: " + oneLine(dl.RecentAttempts[n-1].Error)
			}
		}
		t.row(dl.ID, dl.State, dl.TaskID, dl.Destination, fmt.Sprint(dl.Attempts), relTime(created, now), note)
	}
	if err := t.flush(); err != nil {
		return err
	}
	pageFooter(e, len(list), -1, "delivery", "deliveries", next)
	return nil
}

// untilTime is a short human form of how far off t is.
func untilTime(t, now time.Time) string {
	d := t.Sub(now)
	if d <= 0 {
		return "now"
	}
	return "in " + d.Round(time.Second).String()
}

func pushRetry(ctx context.Context, e env, args []string) error {
	var d dataFlags
	fs := newFlagSet("push retry", "kfa push retry DELIVERY_ID [--json]",
		"Send a failed delivery again: it becomes pending, due now, with a new retry period\n"+
			"(--push-retry-for of the server). Its id, the jti of its signed requests, stays the\n"+
			"same. Only failed deliveries whose config still exists can be retried.", e,
		"kfa push retry 01JD0Z6X8Q4Y4K2V1T3S5R7P9N")
	d.bind(fs)
	pos, c, done, err := parseAndConnect(ctx, fs, args, e, &d, 1, "a delivery ID", false)
	if err != nil {
		return err
	}
	defer done()
	dl, err := c.RetryDelivery(ctx, pos[0])
	if err != nil {
		return plain(err)
	}
	if d.json {
		return printJSON(e.stdout, dl)
	}
	fmt.Fprintf(e.stdout, "Delivery %s to %s is pending again; it is sent now (a running server sends it at once,\n"+
		"otherwise the next kfa serve does).\n", dl.ID, dl.Destination)
	return nil
}

func pushRotateKey(ctx context.Context, e env, args []string) error {
	var d dataFlags
	fs := newFlagSet("push rotate-key", "kfa push rotate-key [--json]",
		"Make a new signing key: push notifications are signed with it from now on. The old key\n"+
			"stays in /.well-known/jwks.json for the server's --signing-key-grace (default 7 days),\n"+
			"so receivers that cached the JWKS keep verifying; keys retired longer ago are deleted.", e,
		"kfa push rotate-key")
	d.bind(fs)
	_, c, done, err := parseAndConnect(ctx, fs, args, e, &d, 0, "", false)
	if err != nil {
		return err
	}
	defer done()
	k, err := c.RotateSigningKey(ctx)
	if err != nil {
		return plain(err)
	}
	if d.json {
		return printJSON(e.stdout, k)
	}
	fmt.Fprintf(e.stdout, "New signing key %s (%s), current from %s.\n", k.ID, k.Algorithm, k.CreatedAt)
	return nil
}

func pushKeys(ctx context.Context, e env, args []string) error {
	var d dataFlags
	fs := newFlagSet("push keys", "kfa push keys [--json]",
		"List the signing keys, newest first: the current one, and retired ones with the time\n"+
			"they leave /.well-known/jwks.json. Private keys are never shown.", e,
		"kfa push keys")
	d.bind(fs)
	_, c, done, err := parseAndConnect(ctx, fs, args, e, &d, 0, "", false)
	if err != nil {
		return err
	}
	defer done()
	list, err := c.SigningKeys(ctx)
	if err != nil {
		return plain(err)
	}
	if d.json {
		return printJSON(e.stdout, list)
	}
	if len(list.Keys) == 0 {
		fmt.Fprintln(e.stdout, "No signing keys yet: kfa serve makes the first one.")
		return nil
	}
	t := newTable(e.stdout, "KID", "ALG", "CREATED", "STATUS")
	for _, k := range list.Keys {
		status := "current"
		if !k.Current {
			status = "retired " + k.RetiredAt + ", in the JWKS until " + k.ExpiresAt
		}
		t.row(k.ID, k.Algorithm, k.CreatedAt, status)
	}
	return t.flush()
}
