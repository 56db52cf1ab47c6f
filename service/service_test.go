package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/input"
	"github.com/kfa-project/kfa/knowledge"
	"github.com/kfa-project/kfa/ratelimit"
	"github.com/kfa-project/kfa/search"
	"github.com/kfa-project/kfa/store"
	"github.com/kfa-project/kfa/tasks"
	"github.com/kfa-project/kfa/trust"
)

// env is a Service over a real store and search index, with a writer and
// a reader agent.
type env struct {
	svc            *Service
	writer, reader *agents.Agent
}

func setup(t *testing.T, contributorWrites bool) env {
	t.Helper()
	dir := t.TempDir()
	db, err := store.Open(filepath.Join(dir, store.FileName), store.Options{BatchDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	now := time.Now
	records := knowledge.NewService(db, now)
	line := `{"id":"bbolt-timeout","kind":"fix","product":"bbolt","title":"bbolt Open times out: another process holds the lock","body":"Open blocks while another process holds the file lock; pass a Timeout."}`
	if _, err := records.Import(context.Background(), strings.NewReader(line+"\n"), knowledge.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	idx, err := search.Open(context.Background(), search.Options{Dir: filepath.Join(dir, "index"), Changes: db, Records: db, Discussions: db, PublicURL: "http://kfa.test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = idx.Close() })
	ag := agents.NewService(db, now)
	mk := func(name string, scopes ...agents.Scope) *agents.Agent {
		c, err := ag.Create(context.Background(), name, scopes)
		if err != nil {
			t.Fatal(err)
		}
		return &c.Agent
	}
	svc, err := New(Config{PublicURL: "http://kfa.test", Version: "test", ContributorWrites: contributorWrites}, Deps{
		Tasks:       tasks.NewService(db, tasks.Limits{}, db.Secret(), now),
		Discussions: discussions.NewService(db, discussions.Limits{}, db.Secret(), now),
		Trust:       trust.NewService(db, db, trust.Limits{}, now),
		Search:      idx,
	})
	if err != nil {
		t.Fatal(err)
	}
	return env{svc: svc, writer: mk("writer", agents.ScopeRead, agents.ScopePost), reader: mk("reader", agents.ScopeRead)}
}

func dataMessage(id string, data map[string]any) *a2a.SendMessageRequest {
	b, _ := json.Marshal(data)
	yes := true
	return &a2a.SendMessageRequest{
		Message:       &a2a.Message{MessageID: id, Role: a2a.RoleUser, Parts: []a2a.Part{a2a.DataPart(b)}},
		Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: &yes},
	}
}

// kindOf names what an answer or error is: "message", "task" or the error reason.
func kindOf(res a2a.SendMessageResponse, err error) string {
	switch {
	case err != nil:
		return ToError(err).Kind.Reason
	case res.Task != nil:
		return "task"
	case res.Message != nil:
		return "message"
	}
	return "nothing"
}

// The card lists exactly the skills that run, and every action of every
// listed skill runs that skill; a skill that is off is neither listed nor
// run, and says why.
func TestCardIsWhatDispatches(t *testing.T) {
	for _, writes := range []bool{true, false} {
		t.Run(fmt.Sprint("contributorWrites=", writes), func(t *testing.T) {
			e := setup(t, writes)
			card := map[string]bool{}
			for _, s := range e.svc.Card().Card.Skills {
				card[s.ID] = true
			}
			n := 0
			for _, sk := range e.svc.skills.all {
				if card[sk.card.ID] != (sk.off == "") {
					t.Fatalf("%s: on the card %v, off %q", sk.card.ID, card[sk.card.ID], sk.off)
				}
				for _, action := range sk.actions {
					n++
					data := map[string]any{"action": action, "query": "bbolt timeout", "question": "Why does Open hang?"}
					if sk.card.ID == SkillFeedback {
						data = map[string]any{"action": action, "recordId": "bbolt-timeout", "value": 1, "outcome": "worked"}
					}
					res, err := e.svc.SendMessage(context.Background(), Caller{Agent: e.writer}, dataMessage(fmt.Sprint("m", n), data))
					want := map[string]string{SkillSearch: "message", SkillAsk: "task", SkillFeedback: "message"}[sk.card.ID]
					if sk.off != "" {
						want = a2a.UnsupportedOperation.Reason
						if err == nil || !strings.Contains(err.Error(), "disabled") {
							t.Errorf("action %s of an off skill: %v", action, err)
						}
					}
					if got := kindOf(res, err); got != want {
						t.Errorf("action %s: %s (%v), want %s", action, got, err, want)
					}
				}
			}
			if len(card) != len(e.svc.skills.enabled()) {
				t.Fatalf("card %v, enabled %d", card, len(e.svc.skills.enabled()))
			}
		})
	}
}

// Who may run a skill comes from its registry entry.
func TestScopeComesFromTheRegistry(t *testing.T) {
	e := setup(t, true)
	ask := map[string]any{"action": "ask", "question": "Why does Open hang?"}
	for _, tc := range []struct {
		name   string
		caller Caller
		data   map[string]any
		want   string
	}{
		{"anonymous search", Caller{Addr: "127.0.0.1"}, map[string]any{"action": "search", "query": "bbolt"}, "message"},
		{"reader search", Caller{Agent: e.reader}, map[string]any{"action": "research", "query": "bbolt"}, "message"},
		{"anonymous ask", Caller{Addr: "127.0.0.1"}, ask, a2a.Unauthenticated.Reason},
		{"reader ask", Caller{Agent: e.reader}, ask, a2a.PermissionDenied.Reason},
		{"writer ask", Caller{Agent: e.writer}, ask, "task"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := e.svc.SendMessage(context.Background(), tc.caller, dataMessage("m-"+strings.ReplaceAll(tc.name, " ", "-"), tc.data))
			if got := kindOf(res, err); got != tc.want {
				t.Fatalf("%s (%v), want %s", got, err, tc.want)
			}
			if tc.want == a2a.PermissionDenied.Reason && !strings.Contains(err.Error(), "post scope") {
				t.Fatalf("the refusal does not name the scope: %v", err)
			}
		})
	}
}

// readInput picks the skill and action from a data part, metadata or
// text, and refuses what names no skill that runs.
func TestReadInput(t *testing.T) {
	e := setup(t, true)
	text := func(ts ...string) []a2a.Part {
		var out []a2a.Part
		for _, s := range ts {
			out = append(out, a2a.TextPart(s))
		}
		return out
	}
	data := func(s string) []a2a.Part { return []a2a.Part{a2a.DataPart(json.RawMessage(s))} }
	for _, tc := range []struct {
		name   string
		parts  []a2a.Part
		meta   string
		skill  string
		action string
		err    string // a substring of the error, when one is expected
	}{
		{"plain text searches", text("bbolt timeout"), "", SkillSearch, "search", ""},
		{"research action", data(`{"action":"research","query":"q"}`), "", SkillSearch, "research", ""},
		{"ask action", data(`{"action":"ask","question":"q"}`), "", SkillAsk, "ask", ""},
		{"skill id as a text part", text("ask-network", "Why?"), "", SkillAsk, "ask", ""},
		{"metadata skill", text("Why?"), `{"skill":"ask-network"}`, SkillAsk, "ask", ""},
		{"data skill defaults its action", data(`{"skill":"knowledge-search","query":"q"}`), "", SkillSearch, "search", ""},
		{"unknown action lists the actions", data(`{"action":"dance"}`), "", "", "", "use search, research, ask, verify or vote"},
		{"action of another skill", data(`{"skill":"knowledge-search","action":"ask"}`), "", "", "", "belongs to ask-network"},
		{"unknown skill", text("x"), `{"skill":"weather"}`, "", "", "available skills: knowledge-search - Search curated records"},
		{"data query without action searches", data(`{"query":"q"}`), "", SkillSearch, "search", ""},
		{"data part naming no skill", data(`{"topic":"q"}`), "", "", "", "cannot tell which skill"},
		{"empty data part", data(`{}`), "", "", "", "; ask-network - Ask the community"},
		{"data part naming no skill, with text", append(data(`{"topic":"q"}`), text("bbolt")...), "", SkillSearch, "search", ""},
		{"data part naming no skill, with metadata", data(`{"question":"q"}`), `{"skill":"ask-network"}`, SkillAsk, "ask", ""},
		{"action not a string", data(`{"action":3}`), "", "", "", "data.action"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := &a2a.SendMessageRequest{Message: &a2a.Message{MessageID: "m", Role: a2a.RoleUser, Parts: tc.parts}}
			if tc.meta != "" {
				req.Message.Metadata = json.RawMessage(tc.meta)
			}
			in, err := e.svc.readInput(req)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil || in.skill != tc.skill || in.action != tc.action {
				t.Fatalf("skill %q action %q (%v), want %q %q", in.skill, in.action, err, tc.skill, tc.action)
			}
		})
	}
}

// ToError is the one mapping of domain errors to A2A errors.
func TestToError(t *testing.T) {
	for _, tc := range []struct {
		name    string
		err     error
		kind    a2a.Kind
		message string
	}{
		{"discussion not found", fmt.Errorf("get: %w", &discussions.NotFoundError{ID: "01JD0000000000000000000000"}),
			a2a.NotFound, "discussion 01JD0000000000000000000000 not found"},
		{"discussion full", &discussions.TooManyRepliesError{ID: "d1", Max: 3}, a2a.UnsupportedOperation, "holds 3 replies"},
		{"rate", fmt.Errorf("reply: %w", &ratelimit.Exceeded{Msg: "too many replies", RetryAfter: time.Second}), a2a.RateLimited, "too many replies"},
		{"not cancelable", tasks.ErrNotCancelable, a2a.TaskNotCancelable, "cannot be canceled"},
		{"input", input.Errorf("body", "is empty"), a2a.InvalidParams, "is empty"},
		{"answered", discussions.ErrAnswered, a2a.UnsupportedOperation, "already answered"},
		// A command decided after a revoke that committed once its request
		// was authenticated: what a request a moment later gets (401).
		{"revoked in flight", fmt.Errorf("reply on d1: %w", agents.ErrRevoked), a2a.Unauthenticated, "invalid, expired or revoked bearer token"},
		{"canceled request", context.Canceled, a2a.Unavailable, "canceled"},
		{"store unreachable", fmt.Errorf("ask: %w", unreachable{}), a2a.Unavailable, "database is not answering"},
		{"commit unknown", fmt.Errorf("ask: %w", commitUnknown{}), a2a.Unavailable, "may or may not have been stored"},
		{"commit unknown as the request ended", fmt.Errorf("ask: %w", commitUnknown{context.DeadlineExceeded}), a2a.Unavailable, "same messageId"},
		{"writes refused", fmt.Errorf("reply: %w", refused{}), a2a.Unavailable, "until a synchronous standby is back (no standby streams)"},
		{"anything else", errors.New("disk on fire"), a2a.Internal, "server log"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := ToError(tc.err)
			if e.Kind != tc.kind || !strings.Contains(e.Message, tc.message) {
				t.Fatalf("%s %q, want %s saying %q", e.Kind.Reason, e.Message, tc.kind.Reason, tc.message)
			}
			if tc.kind == a2a.Internal && strings.Contains(e.Message, "fire") {
				t.Fatal("an internal error reached the client")
			}
		})
	}
}

// unreachable is an error a store marks as unavailable for now.
type unreachable struct{}

func (unreachable) Error() string     { return "connection refused" }
func (unreachable) Unavailable() bool { return true }

// commitUnknown is a write a store could not tell committed or not.
type commitUnknown struct{ err error }

func (c commitUnknown) Error() string     { return "connection reset while committing" }
func (c commitUnknown) Unwrap() error     { return c.err }
func (commitUnknown) Unavailable() bool   { return true }
func (commitUnknown) CommitUnknown() bool { return true }

// refused is a write a store refuses for now, saying why.
type refused struct{}

func (refused) Error() string         { return "writes refused: host db1:5432 has no synchronous standby" }
func (refused) Unavailable() bool     { return true }
func (refused) WritesRefused() string { return "no standby streams" }

// ListTasksJSON answers, byte for byte, the JSON of the tasks it lists.
func TestListTasksJSON(t *testing.T) {
	e := setup(t, true)
	ctx := context.Background()
	c := Caller{Agent: e.writer}
	for i := range 3 {
		if _, err := e.svc.SendMessage(ctx, c, dataMessage(fmt.Sprint("ask-", i), map[string]any{"action": "ask", "question": fmt.Sprint("q", i)})); err != nil {
			t.Fatal(err)
		}
	}
	size := 2
	b, err := e.svc.ListTasksJSON(ctx, c, ListTasksRequest{PageSize: &size}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var page a2a.ListTasksResponse
	if err := json.Unmarshal(b, &page); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	if len(page.Tasks) != 2 || page.TotalSize != 3 || page.PageSize != 2 || page.NextPageToken == "" {
		t.Fatalf("page: %+v", page)
	}
	again, _ := json.Marshal(page)
	if string(again) != string(b) {
		t.Fatalf("not the encoding of its own response:\n%s\n%s", b, again)
	}
	if _, err := e.svc.ListTasksJSON(ctx, Caller{}, ListTasksRequest{}, nil); ToError(err).Kind != a2a.Unauthenticated {
		t.Fatalf("anonymous list: %v", err)
	}
}

// TestHintsNameRealPaths: a path an answer or the card tells an agent to
// call is one that answers (GET /a2a/v1/tasks/{id}, not GET /tasks/{id}).
func TestHintsNameRealPaths(t *testing.T) {
	e := setup(t, true)
	req := dataMessage("m-hint", map[string]any{"action": "ask", "question": "Why does Open hang?"})
	req.Configuration = nil
	_, err := e.svc.SendMessage(context.Background(), Caller{Agent: e.writer}, req)
	texts := []string{fmt.Sprint(err)}
	for _, s := range e.svc.Card().Card.Skills {
		texts = append(texts, s.Description)
	}
	bare := regexp.MustCompile(`(GET|POST) /tasks`)
	for _, text := range texts {
		if bare.MatchString(text) {
			t.Errorf("a hint names a path that does not answer: %s", text)
		}
	}
	if !strings.Contains(texts[0], "poll GET /a2a/v1/tasks/{id}") {
		t.Errorf("the returnImmediately refusal does not say where to poll: %v", err)
	}
}
