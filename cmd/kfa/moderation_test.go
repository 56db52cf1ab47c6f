package main

import (
	"context"
	"os"
	"os/user"
	"strconv"
	"strings"
	"testing"

	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/client"
	"github.com/kfa-project/kfa/moderation"
)

// TestModerationCommands: the operator hides and unhides a reply and a
// discussion, and reads the log, with the server running and stopped;
// readers stop and start seeing them; every action is in the log with
// the operator's name and reason.
func TestModerationCommands(t *testing.T) {
	for _, mode := range []string{"live", "stopped"} {
		t.Run(mode, func(t *testing.T) {
			f := newFixture(t)
			disc := discussionOf(t, f.done)
			d := decode[api.Discussion](t, "discussions", "show", disc, "--data", f.dir)
			replyID := d.Replies[0].ID
			if mode == "stopped" {
				f.srv.stop()
			}
			res := decode[moderation.Result](t, "moderation", "hide", "reply", replyID, "--reason", "wrong", "--by", "root", "--data", f.dir)
			if !res.Changed || !res.Hidden || res.DiscussionID != disc {
				t.Fatalf("hide: %+v", res)
			}
			if out := ok(t, "moderation", "hide", "reply", replyID, "--reason", "again", "--data", f.dir); !strings.Contains(out, "is hidden already") {
				t.Fatalf("hide again: %s", out)
			}
			show := ok(t, "discussions", "show", disc, "--data", f.dir)
			if !strings.Contains(show, "[hidden]") || !strings.Contains(show, "Hidden: 1 reply") {
				t.Fatalf("the operator's view marks the hidden reply:\n%s", show)
			}
			if mode == "live" {
				pub, err := client.New(f.srv.url).Discussion(context.Background(), disc)
				if err != nil || len(pub.Replies) != 0 || pub.ReplyCount != 0 {
					t.Fatalf("readers still see the hidden reply: %+v %v", pub, err)
				}
			}
			out := ok(t, "moderation", "hide", "discussion", disc, "--reason", "spam wave", "--by", "root", "--data", f.dir)
			if !strings.Contains(out, "Hid the discussion "+disc) {
				t.Fatalf("hide the discussion: %s", out)
			}
			if mode == "live" {
				if _, err := client.New(f.srv.url).Discussion(context.Background(), disc); err == nil {
					t.Fatal("readers still see the hidden discussion")
				}
			}
			if out := ok(t, "moderation", "unhide", "discussion", disc, "--reason", "reviewed", "--data", f.dir); !strings.Contains(out, "is public again") {
				t.Fatalf("unhide the discussion: %s", out)
			}
			r := kfa(t, "moderation", "unhide", "reply", replyID, "--reason", "reviewed", "--data", f.dir)
			if r.code != 0 || !strings.Contains(r.stdout, "is public again") {
				t.Fatalf("unhide the reply: %s", r)
			}
			log := decode[api.LogPage](t, "moderation", "log", "--data", f.dir)
			if len(log.Entries) != 4 {
				t.Fatalf("log: %+v", log)
			}
			want := []struct{ action, id, reason string }{
				{"unhide", replyID, "reviewed"}, {"unhide", disc, "reviewed"}, {"hide", disc, "spam wave"}, {"hide", replyID, "wrong"}}
			for i, w := range want {
				e := log.Entries[i]
				if e.Action != w.action || e.ItemID != w.id || e.Reason != w.reason || e.Actor.Kind != moderation.ActorOperator {
					t.Errorf("log entry %d: %+v, want %+v", i, e, w)
				}
			}
			// Without --by and without $USER (kfa runs here with no
			// environment), the name is the account's, not "operator".
			me := defaultOperator(t)
			if log.Entries[0].Actor.Name != me || log.Entries[3].Actor.Name != "root" {
				t.Errorf("names in the log: %q without --by (want %q), %q with --by root", log.Entries[0].Actor.Name, me, log.Entries[3].Actor.Name)
			}
			human := ok(t, "moderation", "log", "--data", f.dir)
			if !strings.Contains(human, "root (operator)") || !strings.Contains(human, me+" (operator)") ||
				strings.Contains(human, "operator operator") || !strings.Contains(human, "spam wave") {
				t.Fatalf("human log:\n%s", human)
			}
			if out := ok(t, "moderation", "queue", "--data", f.dir); !strings.Contains(out, "Nothing waits for review.") {
				t.Fatalf("queue: %s", out)
			}
			if out := ok(t, "moderation", "dismiss", replyID, "--data", f.dir); !strings.Contains(out, "has no open flags") {
				t.Fatalf("dismiss without flags: %s", out)
			}
			// Bad input.
			for _, tc := range []struct {
				args []string
				code int
				want string
			}{
				{[]string{"moderation", "hide", "reply", replyID}, 2, "--reason is required"},
				{[]string{"moderation", "hide", "thread", replyID, "--reason", "x"}, 2, "must be discussion, reply or document"},
				{[]string{"moderation", "hide", "reply", "01JD0Z6X8Q4Y4K2V1T3S5R7P9N", "--reason", "x"}, 1, "no reply has the id 01JD0Z6X8Q4Y4K2V1T3S5R7P9N"},
				{[]string{"moderation", "dismiss", "nope"}, 1, "no discussion or reply has the id nope"},
			} {
				r := kfa(t, append(tc.args, "--data", f.dir)...)
				if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
					t.Errorf("kfa %v: %s, want exit %d and %q", tc.args, r, tc.code, tc.want)
				}
			}
		})
	}
}

// TestRevokeHidesContent: kfa agent revoke --hide-content hides every
// discussion and reply the agent wrote, and logs each.
func TestRevokeHidesContent(t *testing.T) {
	f := newFixture(t)
	out := ok(t, "agent", "revoke", f.bob.ID, "--hide-content", "--reason", "spam bot", "--data", f.dir)
	if !strings.Contains(out, "Revoked agent "+f.bob.ID) || !strings.Contains(out, "Hid 2 discussions and replies it posted") {
		t.Fatalf("revoke --hide-content: %s", out)
	}
	pub := client.New(f.srv.url)
	if _, err := pub.Discussion(context.Background(), discussionOf(t, f.bobs)); err == nil {
		t.Fatal("bob's question is still public")
	}
	d, err := pub.Discussion(context.Background(), discussionOf(t, f.done))
	if err != nil || len(d.Replies) != 0 {
		t.Fatalf("bob's reply is still public: %+v %v", d, err)
	}
	log := decode[api.LogPage](t, "moderation", "log", "--data", f.dir)
	if len(log.Entries) != 2 || log.Entries[0].Reason != "spam bot" || log.Entries[0].AuthorID != f.bob.ID {
		t.Fatalf("log: %+v", log)
	}
	// Again: the agent is revoked already, and nothing is left to hide.
	out = ok(t, "agent", "revoke", f.bob.ID, "--hide-content", "--data", f.dir)
	if !strings.Contains(out, "Hid 0 discussions and replies it posted (2 hidden before)") {
		t.Fatalf("revoke --hide-content again: %s", out)
	}
}

// defaultOperator is the name --by defaults to when neither USER nor
// LOGNAME is set: the account's name, or its uid.
func defaultOperator(t *testing.T) string {
	t.Helper()
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return "uid " + strconv.Itoa(os.Getuid())
}

// TestOperatorName: --by defaults to $USER, then $LOGNAME, then the
// account's name; never to the word "operator", which the log already
// says.
func TestOperatorName(t *testing.T) {
	for _, tc := range []struct {
		name string
		vars map[string]string
		want string
	}{
		{"USER", map[string]string{"USER": "ann", "LOGNAME": "bea"}, "ann"},
		{"LOGNAME", map[string]string{"LOGNAME": "bea"}, "bea"},
		{"neither", nil, defaultOperator(t)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := env{getenv: func(k string) string { return tc.vars[k] }}
			if got := operatorName(e); got != tc.want {
				t.Fatalf("operatorName: %q, want %q", got, tc.want)
			}
		})
	}
}
