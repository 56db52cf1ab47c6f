package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/moderation"
)

func runAgent(ctx context.Context, e env, args []string) error {
	return runGroup(ctx, e, "agent", []subcommand{
		{"create", "make an agent and its first token (shown once)", agentCreate},
		{"rotate", "issue a new token for an agent; old tokens stop working", agentRotate},
		{"revoke", "disable an agent and delete its tokens", agentRevoke},
		{"list", "list agents", agentList},
		{"link", "let an OAuth identity's access tokens act as an agent", agentLink},
	}, args)
}

func agentCreate(ctx context.Context, e env, args []string) error {
	var d dataFlags
	var name, scope string
	var allowDup bool
	fs := newFlagSet("agent create", "kfa agent create --name NAME [--scope read,post] [--allow-duplicate-name] [--json]",
		"Create an agent and print its token. The token is shown only here; kfa keeps only its hash.\n"+
			"A name another agent has (in any case) is refused, since readers tell agents apart by\n"+
			"name, unless --allow-duplicate-name.", e,
		"kfa agent create --name build-bot --scope read,post",
		"kfa agent create --name reader --scope read --json",
		"kfa agent create --name alice-moderator --scope read,moderate")
	d.bind(fs)
	fs.StringVar(&name, "name", "", "agent `name` (1-64 printable characters)")
	fs.StringVar(&scope, "scope", "read,post", "comma-separated `scopes`: read, post, moderate (hide and unhide from the web view)")
	fs.BoolVar(&allowDup, "allow-duplicate-name", false, "create the agent even if another agent has the name")
	pos, err := parseArgs(fs, args, e)
	if err != nil {
		return err
	}
	if err := wantArgs(pos, 0, ""); err != nil {
		return err
	}
	if name == "" {
		return usagef("--name is required")
	}
	scopes, err := agents.ParseScopes(scope)
	if err != nil {
		return usagef("--scope: %v", err)
	}
	c, done, err := connect(ctx, d, false)
	if err != nil {
		return err
	}
	defer done()
	strs := make([]string, len(scopes))
	for i, s := range scopes {
		strs[i] = string(s)
	}
	a, err := c.CreateAgentWith(ctx, api.CreateAgentRequest{Name: name, Scopes: strs, AllowDuplicateName: allowDup})
	if err != nil {
		return err
	}
	if d.json {
		return printJSON(e.stdout, struct {
			ID     string   `json:"id"`
			Name   string   `json:"name"`
			Scopes []string `json:"scopes"`
			Token  string   `json:"token"`
		}{a.ID, a.Name, a.Scopes, a.Token})
	}
	fmt.Fprintf(e.stdout, "Created agent %s (%s) with scopes %s.\n", a.ID, oneLine(a.Name), strings.Join(a.Scopes, ","))
	fmt.Fprintf(e.stdout, "Token (shown only now; store it safely):\n%s\n", a.Token)
	return nil
}

func agentRotate(ctx context.Context, e env, args []string) error {
	var d dataFlags
	var grace time.Duration
	fs := newFlagSet("agent rotate", "kfa agent rotate ID [--grace DURATION] [--json]",
		"Issue a new token for the agent. Its id, tasks and inbox stay the same. Old tokens stop\n"+
			"working at once, or after --grace.", e,
		"kfa agent rotate 01JD0Z6X8Q4Y4K2V1T3S5R7P9N",
		"kfa agent rotate 01JD0Z6X8Q4Y4K2V1T3S5R7P9N --grace 10m --json")
	d.bind(fs)
	fs.DurationVar(&grace, "grace", 0, "keep old tokens working this `long` (e.g. 10m)")
	pos, err := parseArgs(fs, args, e)
	if err != nil {
		return err
	}
	if err := wantArgs(pos, 1, "an agent ID"); err != nil {
		return err
	}
	if grace < 0 {
		return usagef("--grace must not be negative")
	}
	c, done, err := connect(ctx, d, false)
	if err != nil {
		return err
	}
	defer done()
	a, err := c.RotateAgent(ctx, pos[0], grace)
	if err != nil {
		return notFound(err, "agent", pos[0])
	}
	if d.json {
		return printJSON(e.stdout, struct {
			ID    string `json:"id"`
			Token string `json:"token"`
		}{a.ID, a.Token})
	}
	when := "now"
	if grace > 0 {
		when = "in " + grace.String()
	}
	fmt.Fprintf(e.stdout, "New token for agent %s (old tokens stop working %s; shown only now):\n%s\n", a.ID, when, a.Token)
	return nil
}

func agentRevoke(ctx context.Context, e env, args []string) error {
	var (
		d           dataFlags
		hideContent bool
		reason, by  string
	)
	fs := newFlagSet("agent revoke", "kfa agent revoke ID [--hide-content [--reason TEXT] [--by NAME]] [--json]",
		"Disable the agent and delete its tokens: its next request fails. Its tasks and\n"+
			"discussions stay, unless --hide-content hides every discussion and reply it wrote\n"+
			"(each logged in the moderation log; kfa moderation unhide shows one again).\n"+
			"Revoking a revoked agent changes nothing; --hide-content still hides what is left.", e,
		"kfa agent revoke 01JD0Z6X8Q4Y4K2V1T3S5R7P9N",
		"kfa agent revoke 01JD0Z6X8Q4Y4K2V1T3S5R7P9N --hide-content --reason 'spam bot'")
	d.bind(fs)
	fs.BoolVar(&hideContent, "hide-content", false, "also hide everything the agent posted")
	fs.StringVar(&reason, "reason", "agent revoked", "why, for the moderation log (with --hide-content)")
	byFlag(fs, e, &by)
	pos, c, done, err := parseAndConnect(ctx, fs, args, e, &d, 1, "an agent ID", false)
	if err != nil {
		return err
	}
	defer done()
	a, err := c.RevokeAgent(ctx, pos[0])
	if err != nil {
		return notFound(err, "agent", pos[0])
	}
	if !hideContent {
		if d.json {
			return printJSON(e.stdout, a)
		}
		fmt.Fprintf(e.stdout, "Revoked agent %s (%s) at %s; its tokens no longer work.\n", a.ID, oneLine(a.Name), a.DisabledAt)
		return nil
	}
	res, err := c.HideAgentContent(ctx, a.ID, api.HideAuthorRequest{Reason: reason, By: by})
	if err != nil {
		return fmt.Errorf("revoked agent %s, but hiding its content failed (run the command again to finish): %w", a.ID, plain(err))
	}
	if d.json {
		return printJSON(e.stdout, struct {
			api.Agent
			Hidden moderation.AuthorResult `json:"hiddenContent"`
		}{a, res})
	}
	fmt.Fprintf(e.stdout, "Revoked agent %s (%s) at %s; its tokens no longer work.\n", a.ID, oneLine(a.Name), a.DisabledAt)
	fmt.Fprintf(e.stdout, "Hid %s it posted (%d hidden before).\n", plural(res.Hidden, "discussion or reply", "discussions and replies"), res.Already)
	return nil
}

func agentLink(ctx context.Context, e env, args []string) error {
	var d dataFlags
	var issuer, subject, by string
	var replace bool
	fs := newFlagSet("agent link", "kfa agent link ID --issuer URL --subject SUB [--replace [--by NAME]] [--json]",
		"Link the agent to an OAuth identity: access tokens whose iss is URL and whose sub is SUB\n"+
			"act as the agent from then on (kfa serve --oauth-issuer URL). With\n"+
			"--oauth-auto-provision=false, only linked identities are let in. An identity is one agent,\n"+
			"an agent has one identity. Revoking the agent refuses the identity's tokens, for good:\n"+
			"the revoked agent stays revoked. To let the identity back in, as a new agent, link it\n"+
			"to an agent made for it with --replace: the identity leaves the revoked agent, which\n"+
			"keeps its tasks, stays revoked and records the move (kfa agent list --json:\n"+
			"identityMoved). --replace never moves the identity of an active agent.", e,
		"kfa agent link 01JD0Z6X8Q4Y4K2V1T3S5R7P9N --issuer https://idp.example.com/realms/kfa --subject 2f0c1d3e-...",
		"kfa agent link 01JD0Z7A1B2C3D4E5F6G7H8J9K --issuer https://idp.example.com/realms/kfa --subject 2f0c1d3e-... --replace")
	d.bind(fs)
	fs.StringVar(&issuer, "issuer", "", "the issuer `URL`, exactly as the tokens' iss claim says it")
	fs.StringVar(&subject, "subject", "", "the subject (`SUB`), exactly as the tokens' sub claim says it")
	fs.BoolVar(&replace, "replace", false, "move the identity from the revoked agent it is linked to")
	fs.StringVar(&by, "by", e.getenv("USER"), "your `name`, kept with the revoked agent's record of the move (--replace)")
	pos, err := parseArgs(fs, args, e)
	if err != nil {
		return err
	}
	if err := wantArgs(pos, 1, "an agent ID"); err != nil {
		return err
	}
	if issuer == "" || subject == "" {
		return usagef("--issuer and --subject are required")
	}
	c, done, err := connect(ctx, d, false)
	if err != nil {
		return err
	}
	defer done()
	a, err := c.LinkAgentWith(ctx, pos[0], api.LinkAgentRequest{Issuer: issuer, Subject: subject, Replace: replace, By: by})
	if err != nil {
		return notFound(err, "agent", pos[0])
	}
	if d.json {
		return printJSON(e.stdout, a)
	}
	fmt.Fprintf(e.stdout, "Linked agent %s (%s) to subject %s at %s.\n", a.ID, oneLine(a.Name), oneLine(a.Subject), oneLine(a.Issuer))
	if r := a.Replaced; r != nil {
		fmt.Fprintf(e.stdout, "The identity left agent %s (%s), which stays revoked and keeps its tasks.\n", r.ID, oneLine(r.Name))
	}
	return nil
}

func agentList(ctx context.Context, e env, args []string) error {
	var (
		d     dataFlags
		after string
		limit int
	)
	fs := newFlagSet("agent list", "kfa agent list [--limit N] [--after TOKEN] [--json]",
		"List agents, oldest first. When more agents exist, the last line gives the --after\n"+
			"token of the next page.", e,
		"kfa agent list --json", "kfa agent list --limit 500")
	d.bind(fs)
	fs.IntVar(&limit, "limit", 100, "show at most `N` agents")
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
	c, done, err := connect(ctx, d, false)
	if err != nil {
		return err
	}
	defer done()
	total := 0
	list, next, err := collect(limit, after, func(size int, token string) ([]api.Agent, string, error) {
		page, err := c.Agents(ctx, size, token)
		total = page.TotalSize
		return page.Agents, page.NextPageToken, err
	})
	if err != nil {
		return afterErr(plain(err), after)
	}
	if d.json {
		return printJSON(e.stdout, api.AgentList{Agents: list, NextPageToken: next, TotalSize: total})
	}
	now := time.Now()
	cols := []string{"ID", "NAME", "SCOPES", "CREATED", "STATUS"}
	linked := slices.ContainsFunc(list, func(a api.Agent) bool { return a.Issuer != "" })
	if linked {
		cols = append(cols, "ISSUER", "SUBJECT")
	}
	t := newTable(e.stdout, cols...)
	for _, a := range list {
		status := "active"
		if a.DisabledAt != "" {
			status = "revoked"
		}
		created, _ := a2a.ParseTime(a.CreatedAt)
		row := []string{a.ID, a.Name, strings.Join(a.Scopes, ","), relTime(created, now), status}
		if linked {
			row = append(row, a.Issuer, a.Subject)
		}
		t.row(row...)
	}
	if err := t.flush(); err != nil {
		return err
	}
	pageFooter(e, len(list), total, "agent", "agents", next)
	return nil
}
