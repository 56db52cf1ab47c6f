package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kfa-project/kfa/api"
)

// TestCommandsLiveAndStopped runs every inspection and action command
// against a running server (through its admin socket) and against the same
// data stopped (kfa opens the file itself). Both print the same JSON: one
// golden file serves both.
func TestCommandsLiveAndStopped(t *testing.T) {
	t.Parallel() // seconds of waiting on processes and I/O: overlap it with the other slow tests
	for _, mode := range []string{"live", "stopped"} {
		t.Run(mode, func(t *testing.T) {
			f := newFixture(t)
			if mode == "stopped" {
				f.srv.stop()
				if _, err := os.Stat(filepath.Join(f.dir, "kfa.sock")); !os.IsNotExist(err) {
					t.Fatalf("the stopped server left its socket: %v", err)
				}
			}
			doneDisc := discussionOf(t, f.done)

			// Inspection.
			f.golden(t, "tasks_list", "tasks", "list")
			f.golden(t, "tasks_list_working", "tasks", "list", "--state", "working")
			f.golden(t, "tasks_list_owner_context", "tasks", "list", "--owner", f.alice.ID, "--context", "ctx-a")
			f.golden(t, "tasks_show", "tasks", "show", f.done.ID)
			f.golden(t, "discussions_list", "discussions", "list")
			f.golden(t, "discussions_list_open", "discussions", "list", "--status", "open")
			f.golden(t, "discussions_show", "discussions", "show", doneDisc)
			f.golden(t, "inbox", "inbox", f.alice.ID)
			f.golden(t, "agent_list", "agent", "list")
			f.golden(t, "stats", "stats")
			f.golden(t, "check", "check", "--pages")

			// Filters agree with what was written.
			st := decode[api.Stats](t, "stats", "--data", f.dir)
			// The live index follows the change log: right after the
			// fixture's writes it may not have applied them yet.
			for deadline := time.Now().Add(10 * time.Second); st.IndexLag != nil && *st.IndexLag != 0; {
				if time.Now().After(deadline) {
					t.Fatalf("the index still lags %d events behind the log after 10s", *st.IndexLag)
				}
				time.Sleep(20 * time.Millisecond)
				st = decode[api.Stats](t, "stats", "--data", f.dir)
			}
			if st.Tasks.Total != 4 || st.Tasks.ByState["TASK_STATE_WORKING"] != 2 || st.Tasks.ByState["TASK_STATE_COMPLETED"] != 1 ||
				st.Tasks.ByState["TASK_STATE_CANCELED"] != 1 || st.Discussions.Open != 3 || st.Discussions.Answered != 1 ||
				st.Agents != 4 || st.Tasks.OldestWaiting == nil || st.Tasks.OldestWaiting.ID != f.waiting.ID ||
				(mode == "live") != (st.IndexLag != nil) || (st.IndexLag != nil && *st.IndexLag != 0) {
				t.Fatalf("stats: %+v (oldest %+v, lag %v, want waiting %s)", st, st.Tasks.OldestWaiting, lagOf(st), f.waiting.ID)
			}
			for _, tc := range []struct {
				args []string
				want []string
			}{
				{[]string{"--state", "TASK_STATE_COMPLETED"}, []string{f.done.ID}},
				{[]string{"--state", "Canceled"}, []string{f.canceled.ID}},
				{[]string{"--state", "working", "--owner", f.bob.ID}, []string{f.bobs.ID}},
				{[]string{"--context", "ctx-b"}, []string{f.waiting.ID}},
				{[]string{"--since", f.bobs.Status.Timestamp}, nil}, // filled below: tasks whose status changed at or after bob's ask
				{[]string{"--since", "3000-01-01T00:00:00Z"}, []string{}},
				{[]string{"--since", "1600-01-01T00:00:00Z", "--state", "working"}, []string{f.bobs.ID, f.waiting.ID}},
			} {
				got := decode[api.TaskList](t, append([]string{"tasks", "list", "--data", f.dir}, tc.args...)...)
				var ids []string
				for _, tk := range got.Tasks {
					ids = append(ids, tk.ID)
				}
				if tc.want == nil {
					tc.want = []string{f.canceled.ID, f.done.ID, f.bobs.ID} // newest first
				}
				if !slices.Equal(ids, tc.want) || got.TotalSize != len(tc.want) {
					t.Errorf("tasks list %v: %v (total %d), want %v", tc.args, ids, got.TotalSize, tc.want)
				}
			}

			// Pages: --limit and the --after token printed with them.
			all := decode[api.TaskList](t, "tasks", "list", "--data", f.dir)
			p1 := decode[api.TaskList](t, "tasks", "list", "--data", f.dir, "--limit", "3")
			if len(p1.Tasks) != 3 || p1.NextPageToken == "" || p1.TotalSize != 4 {
				t.Fatalf("page 1: %+v", p1)
			}
			human := ok(t, "tasks", "list", "--data", f.dir, "--limit", "3")
			if !strings.Contains(human, "Next page: --after "+p1.NextPageToken) || !strings.Contains(human, "3 of 4 tasks shown.") {
				t.Fatalf("human page 1 does not print the next token:\n%s", human)
			}
			p2 := decode[api.TaskList](t, "tasks", "list", "--data", f.dir, "--limit", "3", "--after", p1.NextPageToken)
			if len(p2.Tasks) != 1 || p2.NextPageToken != "" || p2.Tasks[0].ID != all.Tasks[3].ID {
				t.Fatalf("page 2: %+v, want the last of %+v", p2, all)
			}
			r := kfa(t, "tasks", "list", "--data", f.dir, "--owner", "01JD0Z6X8Q4Y4K2V1T3S5R7P9N")
			if r.code != 1 || !strings.Contains(r.stderr, "agent 01JD0Z6X8Q4Y4K2V1T3S5R7P9N not found") {
				t.Fatalf("an unknown --owner: %s", r)
			}
			r = kfa(t, "tasks", "list", "--data", f.dir, "--state", "working", "--after", p1.NextPageToken)
			if r.code != 1 || !strings.Contains(r.stderr, "--after: the token does not belong to this listing") {
				t.Fatalf("a token used with other filters: %s", r)
			}

			// Human forms show the untrusted text as plain, indented text.
			show := ok(t, "tasks", "show", f.done.ID, "--data", f.dir)
			for _, want := range []string{"completed since", "alice (" + f.alice.ID + ")", "Message id  m-1",
				"  How do I take a hot backup of bbolt?", "  Details of m-1.\n  Second line.", "<- completed this task",
				"  Run Tx.WriteTo inside a read transaction."} {
				if !strings.Contains(show, want) {
					t.Errorf("tasks show lacks %q:\n%s", want, show)
				}
			}
			list := ok(t, "tasks", "list", "--data", f.dir)
			if !strings.Contains(list, "completed") || !strings.Contains(list, "ago") || !strings.HasPrefix(list, "ID ") {
				t.Errorf("tasks list:\n%s", list)
			}
			if out := ok(t, "stats", "--data", f.dir); !strings.Contains(out, "Tasks           4 (canceled 1, completed 1, working 2)") {
				t.Errorf("stats:\n%s", out)
			}
			if out := ok(t, "check", "--data", f.dir); !strings.HasPrefix(out, "OK: ") {
				t.Errorf("check:\n%s", out)
			}

			// Acting: a reply as bob completes alice's waiting task in the
			// same write; cancel follows the owner's rules.
			f.golden(t, "reply", "reply", discussionOf(t, f.waiting), "--as", f.bob.ID, "--body", "Not yet; bbolt only.")
			after := decode[api.TaskDetail](t, "tasks", "show", f.waiting.ID, "--data", f.dir)
			if after.Task.State != "TASK_STATE_COMPLETED" || after.Discussion.Status != "answered" || len(after.A2A.Artifacts) != 1 {
				t.Fatalf("the operator's reply did not complete the task: %+v", after)
			}
			f.golden(t, "inbox_unacked", "inbox", f.alice.ID, "--unacked")
			f.golden(t, "tasks_cancel", "tasks", "cancel", f.bobs.ID)
			again := decode[api.CancelResult](t, "tasks", "cancel", f.bobs.ID, "--data", f.dir)
			if again.Changed || again.Task.State != "TASK_STATE_CANCELED" {
				t.Fatalf("second cancel: %+v", again)
			}
			if out := ok(t, "tasks", "cancel", f.bobs.ID, "--data", f.dir); !strings.Contains(out, "was already canceled") {
				t.Fatalf("second cancel, human: %s", out)
			}
			r = kfa(t, "tasks", "cancel", f.done.ID, "--data", f.dir)
			if r.code != 1 || !strings.Contains(r.stderr, "task "+f.done.ID+" is completed; a completed task cannot be canceled") {
				t.Fatalf("cancel a completed task: %s", r)
			}
			if out := ok(t, "check", "--data", f.dir); !strings.HasPrefix(out, "OK: ") {
				t.Errorf("check after acting:\n%s", out)
			}
		})
	}
}

// TestReplyRules: the operator replies as an agent under that agent's
// rules.
func TestReplyRules(t *testing.T) {
	f := newFixture(t)
	disc := discussionOf(t, f.waiting)
	for _, tc := range []struct {
		name  string
		stdin string
		args  []string
		code  int
		want  string
	}{
		{"read-only agent", "", []string{"--as", "RITA", "--body", "x"}, 1, "replying needs the post scope"},
		{"revoked agent", "", []string{"--as", "GONE", "--body", "x"}, 1, "is revoked; a reply cannot be posted as a revoked agent"},
		{"unknown agent", "", []string{"--as", "01JD0Z6X8Q4Y4K2V1T3S5R7P9N", "--body", "x"}, 1, "agent 01JD0Z6X8Q4Y4K2V1T3S5R7P9N not found"},
		{"unknown discussion", "", []string{"--as", "BOB", "--body", "x", "--disc", "01JD0Z6X8Q4Y4K2V1T3S5R7P9N"}, 1, "discussion 01JD0Z6X8Q4Y4K2V1T3S5R7P9N not found"},
		{"no --as", "", []string{"--body", "x"}, 2, "--as is required"},
		{"empty body", "", []string{"--as", "BOB"}, 2, "--body is required"},
		{"body with a control character", "", []string{"--as", "BOB", "--body", "bell\a"}, 1, "body: contains the control character U+0007"},
		{"body from stdin", "First line.\nSecond line.\n", []string{"--as", "BOB", "--body", "-"}, 0, "It completed 1 task: " + f.waiting.ID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := disc
			var args []string
			for i := 0; i < len(tc.args); i++ {
				a := strings.NewReplacer("RITA", f.rita.ID, "GONE", f.gone.ID, "BOB", f.bob.ID).Replace(tc.args[i])
				if a == "--disc" {
					d = tc.args[i+1]
					i++
					continue
				}
				args = append(args, a)
			}
			r := kfaIn(t, tc.stdin, append([]string{"reply", d, "--data", f.dir}, args...)...)
			out := r.stdout + r.stderr
			if r.code != tc.code || !strings.Contains(out, tc.want) {
				t.Fatalf("want exit %d with %q: %s", tc.code, tc.want, r)
			}
		})
	}
	got := decode[api.Discussion](t, "discussions", "show", disc, "--data", f.dir)
	if len(got.Replies) != 1 || got.Replies[0].Body != "First line.\nSecond line." || got.Replies[0].AuthorID != f.bob.ID {
		t.Fatalf("replies after the refusals: %+v", got.Replies)
	}
}

// TestHelpAndUsage: every command has help with examples; mistakes in
// how kfa is called exit 2 with a pointer to the help.
func TestHelpAndUsage(t *testing.T) {
	cmds := [][]string{
		{"serve"}, {"agent", "create"}, {"agent", "rotate"}, {"agent", "revoke"}, {"agent", "list"}, {"agent", "link"},
		{"tasks", "list"}, {"tasks", "show"}, {"tasks", "cancel"}, {"discussions", "list"}, {"discussions", "show"},
		{"inbox"}, {"reply"}, {"stats"}, {"check"}, {"backup"}, {"restore"}, {"completion"}, {"mcp"},
	}
	for _, c := range cmds {
		name := strings.Join(c, " ")
		t.Run(name, func(t *testing.T) {
			r := kfa(t, append(c, "-h")...)
			if r.code != 0 || !strings.Contains(r.stderr, "Usage: kfa "+name) || !strings.Contains(r.stderr, "Examples:\n  kfa "+c[0]) {
				t.Fatalf("-h: %s", r)
			}
			if name != "serve" && name != "completion" && !strings.Contains(r.stderr, "\n  --data directory\n") {
				t.Fatalf("-h does not list --data: %s", r)
			}
			if strings.Contains(r.stderr, "\n  -data") {
				t.Fatalf("-h shows a flag with one dash: %s", r)
			}
			// The error once, then where the help is: two lines, no usage dump.
			r = kfa(t, append(c, "--no-such-flag")...)
			want := "kfa " + name + ": unknown flag --no-such-flag\nRun 'kfa " + name + " -h' for usage.\n"
			if r.code != 2 || r.stderr != want || r.stdout != "" {
				t.Fatalf("unknown flag: %s\nwant stderr %q", r, want)
			}
		})
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"nope"}, 2, `kfa: unknown command "nope"; run 'kfa help' for the list`},
		{[]string{}, 2, "Commands:"},
		{[]string{"help"}, 0, "restore"},
		{[]string{"help", "tasks"}, 0, "Usage: kfa tasks list|show|cancel"},
		{[]string{"tasks"}, 2, "missing subcommand"},
		{[]string{"tasks", "nope"}, 2, `unknown subcommand "nope" (want list, show, cancel)`},
		{[]string{"tasks", "lst"}, 2, `unknown subcommand "lst" (did you mean "list"?) (want list, show, cancel)`},
		{[]string{"discussions", "-h"}, 0, "Usage: kfa discussions list|show"},
		{[]string{"tasks", "show"}, 2, "want a task ID, got 0 argument(s)"},
		{[]string{"tasks", "list", "--state", "sleeping"}, 2, `--state: unknown task state "sleeping"`},
		{[]string{"tasks", "list", "--since", "yesterday"}, 2, `--since: "yesterday" is not an RFC 3339 time`},
		{[]string{"tasks", "list", "--limit", "0"}, 2, "--limit must be at least 1"},
		{[]string{"discussions", "list", "--status", "closed"}, 2, `--status must be open or answered, not "closed"`},
		{[]string{"inbox"}, 2, "want an agent ID"},
		{[]string{"stats", "extra"}, 2, "unexpected arguments: extra"},
		{[]string{"completion", "tcsh"}, 2, `unknown shell "tcsh" (want bash, zsh or fish)`},
	} {
		r := kfa(t, tc.args...)
		if r.code != tc.code || !strings.Contains(r.stdout+r.stderr, tc.want) {
			t.Errorf("kfa %v: want exit %d and %q: %s", tc.args, tc.code, tc.want, r)
		}
	}
}

// TestNoDatabase: a command pointed at a directory without a database
// says so in one line that names it and how to start one, and creates
// nothing: only serve and init make a database, so a mistyped --data
// cannot quietly start an empty one beside the real one.
func TestNoDatabase(t *testing.T) {
	dir := filepath.Join(shortTempDir(t), "nothing-here")
	for _, c := range [][]string{
		{"stats"}, {"tasks", "list"}, {"check"}, {"discussions", "list"}, {"backup", filepath.Join(shortTempDir(t), "b.db")},
		{"agent", "create", "--name", "alice"}, {"agent", "list"}, {"records", "import", "-"}, {"records", "list"},
		{"reply", "01JD0000000000000000000000", "--as", "01JD0000000000000000000000", "--body", "x"}, {"mcp"},
	} {
		r := kfa(t, append(c, "--data", dir)...)
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		want := fmt.Sprintf("no kfa database at %s: check --data (or KFA_DATA); to start one there, run 'kfa serve --data %s' (or 'kfa init --data %s')",
			filepath.Join(dir, "kfa.db"), dir, dir)
		if r.code != 1 || len(lines) != 1 || !strings.Contains(r.stderr, want) || r.stdout != "" {
			t.Errorf("kfa %v on an empty directory: %s", c, r)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Fatalf("kfa %v created %s", c, dir)
		}
	}
}

// TestCompletion: the scripts know every command, subcommand and flag.
func TestCompletion(t *testing.T) {
	bash := ok(t, "completion", "bash")
	for _, want := range []string{"complete -o filenames -F _kfa kfa", `"help agent backup check completion discussions inbox init mcp migrate moderation peer push records reply restore serve stats tasks version"`,
		`compgen -W "list show cancel"`, "--owner", "--state", "--unacked", "--keep-old", "--metrics-addr", "--as --body"} {
		if !strings.Contains(bash, want) {
			t.Errorf("bash completion lacks %q", want)
		}
	}
	fish := ok(t, "completion", "fish")
	for _, want := range []string{
		"complete -c kfa -f\n",
		"complete -c kfa -n 'not __fish_seen_subcommand_from agent backup check completion discussions inbox init mcp migrate moderation peer push records reply restore serve stats tasks version' -a tasks -d 'list, show and cancel tasks of every agent'",
		"complete -c kfa -n '__fish_seen_subcommand_from tasks; and not __fish_seen_subcommand_from list show cancel' -a list",
		"complete -c kfa -n '__fish_seen_subcommand_from tasks; and __fish_seen_subcommand_from list' -l owner -x -d 'only tasks of the agent with this id'",
		"complete -c kfa -n '__fish_seen_subcommand_from stats' -l data -x -a '(__fish_complete_directories)'",
		"complete -c kfa -n '__fish_seen_subcommand_from stats' -l json -d 'print machine-readable JSON'",
		"-a inbox -d 'list an agent\\'s inbox'",
	} {
		if !strings.Contains(fish, want) {
			t.Errorf("fish completion lacks %q", want)
		}
	}
	zsh := ok(t, "completion", "zsh")
	if !strings.HasPrefix(zsh, "#compdef kfa\n") || !strings.Contains(zsh, "bashcompinit") || !strings.Contains(zsh, "_kfa()") {
		t.Errorf("zsh completion:\n%s", zsh)
	}
}

// Goldens must never hold a token.
func TestGoldensHoldNoToken(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.golden"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files in testdata (%v)", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "kfa_") && strings.Contains(string(b), `"token"`) {
			t.Errorf("%s holds a token", f)
		}
		var v any
		if json.Unmarshal(b, &v) != nil {
			t.Errorf("%s is not JSON", f)
		}
	}
}

func lagOf(st api.Stats) any {
	if st.IndexLag == nil {
		return nil
	}
	return *st.IndexLag
}
