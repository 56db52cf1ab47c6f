package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/user"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/moderation"
)

func runModeration(ctx context.Context, e env, args []string) error {
	return runGroup(ctx, e, "moderation", []subcommand{
		{"queue", "list flagged and flag-hidden items, most flagged first", moderationQueue},
		{"hide", "hide a discussion or a reply from every public surface", moderationAction(moderation.ActionHide)},
		{"unhide", "make a hidden discussion or reply public again", moderationAction(moderation.ActionUnhide)},
		{"dismiss", "clear an item's flags (showing it again if its flags hid it)", moderationDismiss},
		{"log", "list every moderation action: who, what, when and why", moderationLogCmd},
	}, args)
}

// byFlag binds --by, the operator's name in the log.
func byFlag(fs *flag.FlagSet, e env, by *string) {
	fs.StringVar(by, "by", operatorName(e), "your `name` in the moderation log (default: $USER, $LOGNAME or your account's name)")
}

// operatorName is who runs kfa: $USER, else $LOGNAME (cron and some
// containers set only one, or neither), else the account's name, else its
// uid. The log already says an operator did it, so the word "operator"
// would tell a reader nothing.
func operatorName(e env) string {
	for _, v := range []string{"USER", "LOGNAME"} {
		if name := strings.TrimSpace(e.getenv(v)); name != "" {
			return name
		}
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return "uid " + strconv.Itoa(os.Getuid())
}

func moderationQueue(ctx context.Context, e env, args []string) error {
	var (
		d     dataFlags
		limit int
	)
	fs := newFlagSet("moderation queue", "kfa moderation queue [--limit N] [--json]",
		"List the items waiting for a moderator: discussions and replies with open flags, and\n"+
			"those their flags hid pending review. Most flagged first, then the longest waiting.\n"+
			"Each shows its flags' reasons and notes; the text is the agents', shown as plain text.\n"+
			"Settle an item with hide (the flags were right), unhide or dismiss (they were not).", e,
		"kfa moderation queue",
		"kfa moderation queue --json | jq -r '.items[].id'")
	d.bind(fs)
	fs.IntVar(&limit, "limit", moderation.DefaultQueueSize, "show at most `N` items")
	pos, c, done, err := parseAndConnect(ctx, fs, args, e, &d, 0, "", false)
	if err != nil {
		return err
	}
	_ = pos
	defer done()
	if limit < 1 || limit > moderation.MaxQueueSize {
		return usagef("--limit must be between 1 and %d", moderation.MaxQueueSize)
	}
	q, err := c.ModerationQueue(ctx, limit)
	if err != nil {
		return plain(err)
	}
	if d.json {
		return printJSON(e.stdout, q)
	}
	if len(q.Items) == 0 {
		fmt.Fprintln(e.stdout, "Nothing waits for review.")
		return nil
	}
	now := time.Now()
	w := e.stdout
	for _, it := range q.Items {
		state := "public"
		switch it.HiddenBy {
		case string(moderation.HiddenByFlags):
			state = "hidden by its flags, pending review"
		case string(moderation.HiddenByModerator):
			state = "hidden by a moderator"
		}
		waiting, _ := a2a.ParseTime(it.WaitingSince)
		fmt.Fprintf(w, "\n%s %s (%s), %s, waiting since %s\n", it.Kind, it.ID, state, plural(it.FlagCount, "flag", "flags"),
			relTime(waiting, now))
		fmt.Fprintf(w, "  reasons: %s\n", reasonList(it.Reasons))
		fmt.Fprintf(w, "  on discussion %s: %s\n", it.DiscussionID, oneLine(clip(it.Title, 100)))
		fmt.Fprintf(w, "  by %s\n", oneLine(ownerLine(it.AuthorName, it.AuthorID)))
		if it.Text != "" {
			fmt.Fprintf(w, "%s\n", textBlock(clip(it.Text, 600), "    | "))
		}
		for _, f := range it.Flags {
			at, _ := a2a.ParseTime(f.At)
			note := ""
			if f.Note != "" {
				note = ": " + oneLine(clip(f.Note, 200))
			}
			fmt.Fprintf(w, "  - %s by %s, %s%s\n", f.Reason, oneLine(ownerLine(f.AgentName, f.AgentID)), relTime(at, now), note)
		}
	}
	if q.TotalSize > len(q.Items) {
		fmt.Fprintf(w, "\n%d of %d items shown; --limit shows more.\n", len(q.Items), q.TotalSize)
	}
	return nil
}

// reasonList is "spam 2, wrong 1", most given first.
func reasonList(m map[string]int) string {
	type rc struct {
		r string
		n int
	}
	var rs []rc
	for r, n := range m {
		rs = append(rs, rc{r, n})
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].n > rs[j].n || rs[i].n == rs[j].n && rs[i].r < rs[j].r })
	parts := make([]string, len(rs))
	for i, x := range rs {
		parts[i] = fmt.Sprintf("%s %d", x.r, x.n)
	}
	if len(parts) == 0 {
		return "none open"
	}
	return strings.Join(parts, ", ")
}

// moderationAction is kfa moderation hide or unhide.
func moderationAction(a moderation.Action) func(ctx context.Context, e env, args []string) error {
	return func(ctx context.Context, e env, args []string) error {
		var (
			d          dataFlags
			reason, by string
		)
		verb := string(a)
		what := "Hide a discussion (the question, with every reply on it) or one reply from every\n" +
			"public surface: the API (404, like an unknown one), search, MCP, the web pages (410)\n" +
			"and the feeds, on every process, within a second. Nothing is deleted, and no task\n" +
			"changes: a task a hidden reply completed keeps its answer. Hiding settles the item's\n" +
			"flags. An accepted answer loses its mark while hidden. A document followed from a\n" +
			"peer (its id starts with peer:) is hidden from search here, whatever the peer sends."
		if a == moderation.ActionUnhide {
			what = "Make a hidden discussion or reply public again, wherever it was hidden from. A reply\n" +
				"that was the accepted answer gets its mark back, unless the asker accepted another."
		}
		fs := newFlagSet("moderation "+verb, "kfa moderation "+verb+" discussion|reply|document ID --reason TEXT [--by NAME] [--json]",
			what+"\nThe action, its reason and --by go into the moderation log.", e,
			"kfa moderation "+verb+" reply 01JD0Z6X8Q4Y4K2V1T3S5R7P9N --reason 'spam: links to a shop'",
			"kfa moderation "+verb+" discussion 01JD0Z6X8Q4Y4K2V1T3S5R7P9N --reason 'reviewed: on topic'")
		d.bind(fs)
		fs.StringVar(&reason, "reason", "", "why, in a few words (required; kept in the moderation log)")
		byFlag(fs, e, &by)
		pos, err := parseArgs(fs, args, e)
		if err != nil {
			return err
		}
		if err := wantArgs(pos, 2, "discussion|reply|document and an ID"); err != nil {
			return err
		}
		kind, err := moderation.ParseKind(pos[0])
		if err != nil {
			return usagef("the first argument must be discussion, reply or document (a document followed from a peer), not %q",
				oneLine(clip(pos[0], 32)))
		}
		if strings.TrimSpace(reason) == "" {
			return usagef("--reason is required: say why, for the moderation log")
		}
		c, done, err := connect(ctx, d, false)
		if err != nil {
			return err
		}
		defer done()
		res, err := c.Moderate(ctx, a, api.ModerationRequest{Kind: string(kind), ID: pos[1], Reason: reason, By: by})
		if err != nil {
			return plain(err)
		}
		if d.json {
			return printJSON(e.stdout, res)
		}
		printResult(e, res)
		return nil
	}
}

func moderationDismiss(ctx context.Context, e env, args []string) error {
	var (
		d          dataFlags
		reason, by string
	)
	fs := newFlagSet("moderation dismiss", "kfa moderation dismiss ID [--reason TEXT] [--by NAME] [--json]",
		"Clear the open flags of a discussion or reply (ID is either): the flags were wrong.\n"+
			"An item its flags hid is public again; one a moderator hid stays hidden. The agents\n"+
			"who flagged it cannot flag it again.", e,
		"kfa moderation dismiss 01JD0Z6X8Q4Y4K2V1T3S5R7P9N --reason 'correct answer, flagged by a rival'")
	d.bind(fs)
	fs.StringVar(&reason, "reason", "", "why, in a few words (kept in the moderation log)")
	byFlag(fs, e, &by)
	pos, c, done, err := parseAndConnect(ctx, fs, args, e, &d, 1, "an ID", false)
	if err != nil {
		return err
	}
	defer done()
	res, err := c.Moderate(ctx, moderation.ActionDismiss, api.ModerationRequest{ID: pos[0], Reason: reason, By: by})
	if err != nil {
		return plain(err)
	}
	if d.json {
		return printJSON(e.stdout, res)
	}
	printResult(e, res)
	return nil
}

// printResult says what a moderator's action did.
func printResult(e env, r moderation.Result) {
	where := ""
	if r.ItemKind == moderation.KindReply {
		where = " on discussion " + r.DiscussionID
	}
	switch {
	case !r.Changed && r.Action == moderation.ActionDismiss:
		fmt.Fprintf(e.stdout, "The %s %s%s has no open flags: nothing to dismiss.\n", r.ItemKind, r.ItemID, where)
	case !r.Changed && r.Hidden:
		fmt.Fprintf(e.stdout, "The %s %s%s is hidden already.\n", r.ItemKind, r.ItemID, where)
	case !r.Changed:
		fmt.Fprintf(e.stdout, "The %s %s%s is not hidden.\n", r.ItemKind, r.ItemID, where)
	case r.Action == moderation.ActionDismiss:
		shown := ""
		if !r.Hidden {
			shown = "; it is public"
		}
		fmt.Fprintf(e.stdout, "Dismissed %s on the %s %s%s%s.\n", plural(r.Flags, "flag", "flags"), r.ItemKind, r.ItemID, where, shown)
	case r.Hidden:
		fmt.Fprintf(e.stdout, "Hid the %s %s%s: readers no longer see it.\n", r.ItemKind, r.ItemID, where)
	default:
		fmt.Fprintf(e.stdout, "The %s %s%s is public again.\n", r.ItemKind, r.ItemID, where)
	}
}

func moderationLogCmd(ctx context.Context, e env, args []string) error {
	var (
		d     dataFlags
		after string
		limit int
	)
	fs := newFlagSet("moderation log", "kfa moderation log [--limit N] [--after TOKEN] [--json]",
		"List the moderation log, newest first: every flag, hide, unhide and dismiss, with who\n"+
			"(an agent, the operator's --by name, or the flags that reached the threshold), what,\n"+
			"when and why. The log is kept in the database and only ever appended to.", e,
		"kfa moderation log",
		"kfa moderation log --limit 1000 --json | jq -c '.entries[] | select(.action == \"hide\")'")
	d.bind(fs)
	fs.IntVar(&limit, "limit", 50, "show at most `N` entries")
	fs.StringVar(&after, "after", "", "start after the page that printed this `token`")
	pos, c, done, err := parseAndConnect(ctx, fs, args, e, &d, 0, "", false)
	if err != nil {
		return err
	}
	_ = pos
	defer done()
	if limit < 1 {
		return usagef("--limit must be at least 1")
	}
	list, next, err := collect(limit, after, func(size int, token string) ([]api.LogEntry, string, error) {
		p, err := c.ModerationLog(ctx, size, token)
		return p.Entries, p.NextPageToken, err
	})
	if err != nil {
		return afterErr(plain(err), after)
	}
	if d.json {
		return printJSON(e.stdout, api.LogPage{Entries: list, NextPageToken: next})
	}
	if len(list) == 0 {
		fmt.Fprintln(e.stdout, "The moderation log is empty.")
		return nil
	}
	t := newTable(e.stdout, "WHEN", "ACTION", "BY", "ITEM", "WHY")
	for _, en := range list {
		who := string(en.Actor.Kind)
		switch {
		case en.Actor.Kind == moderation.ActorAgent:
			who = ownerLine(en.Actor.Name, en.Actor.ID)
		case en.Actor.Name != "":
			who = en.Actor.Name + " (" + who + ")" // root (operator)
		}
		why := en.Reason
		if en.Note != "" {
			why += ": " + en.Note
		}
		t.row(en.At, en.Action, oneLine(clip(who, 40)), en.ItemKind+" "+en.ItemID, oneLine(clip(why, 60)))
	}
	if err := t.flush(); err != nil {
		return err
	}
	pageFooter(e, len(list), -1, "entry", "entries", next)
	return nil
}
