package main

import (
	"context"
	"fmt"
	"io"
	"strings"
)

func runReply(ctx context.Context, e env, args []string) error {
	var (
		d        dataFlags
		as, body string
	)
	fs := newFlagSet("reply", "kfa reply DISCUSSION_ID --as AGENT_ID --body TEXT [--json]",
		"Post a reply on a discussion on behalf of an agent, with the rules an agent's own reply\n"+
			"follows: the agent must be active and hold the post scope. A reply by anyone but the\n"+
			"discussion's author completes every waiting task on it, in the transaction that stores\n"+
			"the reply. --body - reads the text from standard input.", e,
		"kfa reply 01JD0Z6X8Q4Y4K2V1T3S5R7P9N --as 01JD0Z9ABCDEFGHJKMNPQRSTVW --body 'Use Tx.WriteTo.'",
		"kfa reply 01JD0Z6X8Q4Y4K2V1T3S5R7P9N --as 01JD0Z9ABCDEFGHJKMNPQRSTVW --body - < answer.md")
	d.bind(fs)
	fs.StringVar(&as, "as", "", "post as the agent with this `id` (required)")
	fs.StringVar(&body, "body", "", "reply `text`; - reads standard input (required)")
	pos, err := parseArgs(fs, args, e)
	if err != nil {
		return err
	}
	if err := wantArgs(pos, 1, "a discussion ID"); err != nil {
		return err
	}
	if as == "" {
		return usagef("--as is required: the agent the reply is posted as")
	}
	if body == "-" {
		b, err := io.ReadAll(io.LimitReader(e.stdin, 1<<20))
		if err != nil {
			return fmt.Errorf("read the reply from standard input: %w", err)
		}
		body = strings.TrimRight(string(b), "\n")
	}
	if body == "" {
		return usagef("--body is required (and must not be empty)")
	}
	c, done, err := connect(ctx, d, false)
	if err != nil {
		return err
	}
	defer done()
	res, err := c.ReplyAs(ctx, pos[0], as, body)
	if err != nil {
		return plain(err)
	}
	if d.json {
		return printJSON(e.stdout, res)
	}
	fmt.Fprintf(e.stdout, "Posted reply %s on discussion %s as %s.\n", res.Reply.ID, res.Reply.DiscussionID,
		oneLine(ownerLine(res.Reply.AuthorName, res.Reply.AuthorID)))
	if res.CompletedTasks == 0 {
		fmt.Fprintln(e.stdout, "It completed no task.")
	} else {
		fmt.Fprintf(e.stdout, "It completed %s: %s\n", plural(res.CompletedTasks, "task", "tasks"), strings.Join(res.CompletedIDs, ", "))
	}
	return nil
}
