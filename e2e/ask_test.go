package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/client"
	"github.com/kfa-project/kfa/internal/prototest"
	"github.com/kfa-project/kfa/server"
)

// TestAskStory is the product's main story: A asks, B answers, A's task
// completes with the reply, A's inbox says so, and acknowledging changes
// nothing else. A concurrent reader never sees half of it.
func TestAskStory(t *testing.T) {
	h := start(t, nil)
	ctx := context.Background()
	alice, ac := h.agent("alice")
	bob, bc := h.agent("bob")

	resp, body := h.raw("POST", "/a2a/v1/message:send", a2aHeaders(alice.Token),
		mustJSON(askReq("m-1", "How do I take a hot backup of bbolt?", map[string]any{"details": "Server must keep running.", "product": "bbolt"})))
	if resp.StatusCode != 200 {
		t.Fatalf("ask: %d %s", resp.StatusCode, body)
	}
	prototest.Valid(t, prototest.SendMessageResponse, body)
	var sent a2a.SendMessageResponse
	if err := json.Unmarshal(body, &sent); err != nil {
		t.Fatal(err)
	}
	tk := *sent.Task
	if tk.Status.State != a2a.TaskStateWorking || tk.Status.Timestamp == "" || len(tk.History) != 1 || tk.ContextID == "" {
		t.Fatalf("ask answer: %s", body)
	}
	discID := discussionOf(t, tk)
	d, err := h.anon.Discussion(ctx, discID)
	if err != nil || d.Title != "How do I take a hot backup of bbolt?" || d.Body != "Server must keep running." ||
		d.Product != "bbolt" || d.AuthorID != alice.ID || d.Status != "open" {
		t.Fatalf("public discussion: %+v %v", d, err)
	}

	// A reader polls both sides while bob replies: whenever it sees the
	// reply, the task is complete, and the other way round.
	var stop atomic.Bool
	var wg sync.WaitGroup
	var violations atomic.Int32
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			dd, err1 := h.anon.Discussion(ctx, discID)
			got, err2 := ac.GetTask(ctx, tk.ID, nil)
			if err1 == nil && err2 == nil && dd.ReplyCount == 1 && got.Status.State != a2a.TaskStateCompleted {
				violations.Add(1)
			}
			got, err2 = ac.GetTask(ctx, tk.ID, nil)
			dd, err1 = h.anon.Discussion(ctx, discID)
			if err1 == nil && err2 == nil && got.Status.State == a2a.TaskStateCompleted && dd.ReplyCount != 1 {
				violations.Add(1)
			}
		}
	}()
	rep, err := bc.Reply(ctx, discID, "Run Tx.WriteTo inside a read transaction; readers never block.")
	stop.Store(true)
	wg.Wait()
	if err != nil || rep.CompletedTasks != 1 || rep.CompletedIDs[0] != tk.ID || rep.Reply.AuthorID != bob.ID || rep.Reply.AuthorName != "bob" {
		t.Fatalf("reply: %+v %v", rep, err)
	}
	if n := violations.Load(); n > 0 {
		t.Fatalf("a reader saw the reply without the completion (or the reverse) %d times", n)
	}

	resp, body = h.raw("GET", "/a2a/v1/tasks/"+tk.ID, a2aHeaders(alice.Token), "")
	if resp.StatusCode != 200 {
		t.Fatalf("get: %d %s", resp.StatusCode, body)
	}
	prototest.Valid(t, prototest.Task, body)
	var done a2a.Task
	if err := json.Unmarshal(body, &done); err != nil {
		t.Fatal(err)
	}
	if done.Status.State != a2a.TaskStateCompleted || done.Status.Message == nil || done.Status.Message.Role != a2a.RoleAgent {
		t.Fatalf("completed task: %s", body)
	}
	if done.Status.Timestamp != rep.Reply.CreatedAt {
		t.Fatalf("completion timestamp %s, reply %s", done.Status.Timestamp, rep.Reply.CreatedAt)
	}
	art := done.Artifacts
	if len(art) != 1 || len(art[0].Parts) != 2 || *art[0].Parts[0].Text != rep.Reply.Body {
		t.Fatalf("artifact: %+v", art)
	}
	var ref map[string]string
	if err := json.Unmarshal(art[0].Parts[1].Data, &ref); err != nil {
		t.Fatal(err)
	}
	if ref["discussionId"] != discID || ref["replyId"] != rep.Reply.ID || ref["authorId"] != bob.ID || ref["authorName"] != "bob" {
		t.Fatalf("artifact data: %s", art[0].Parts[1].Data)
	}

	in, err := ac.Inbox(ctx, false, 0, "")
	if err != nil || len(in.Entries) != 1 || in.Entries[0].ReplyID != rep.Reply.ID || in.Entries[0].TaskIDs[0] != tk.ID || in.Entries[0].AckedAt != nil {
		t.Fatalf("inbox: %+v %v", in, err)
	}
	before := h.task(ac, tk.ID)
	ack, err := ac.Ack(ctx, []string{in.Entries[0].ID})
	if err != nil || len(ack.Acked) != 1 {
		t.Fatalf("ack: %+v %v", ack, err)
	}
	if after := h.task(ac, tk.ID); mustJSON(after) != mustJSON(before) {
		t.Fatalf("ack changed the task:\n%s\n%s", mustJSON(before), mustJSON(after))
	}
	if un, err := ac.Inbox(ctx, true, 0, ""); err != nil || len(un.Entries) != 0 {
		t.Fatalf("unacked after ack: %+v (%v)", un, err)
	}
	// Bob (the replier) got nothing in his inbox.
	if bin, err := bc.Inbox(ctx, false, 0, ""); err != nil || len(bin.Entries) != 0 {
		t.Fatalf("bob's inbox: %+v (%v)", bin, err)
	}
}

func (h *harness) task(c *client.Client, id string) a2a.Task {
	h.t.Helper()
	tk, err := c.GetTask(context.Background(), id, nil)
	if err != nil {
		h.t.Fatalf("get task %s: %v", id, err)
	}
	return tk
}

func TestJoinAndSelfReply(t *testing.T) {
	h := start(t, nil)
	ctx := context.Background()
	_, ac := h.agent("alice")
	_, bc := h.agent("bob")
	_, cc := h.agent("carol")
	first := h.ask(ac, "a1", "Why does my SSE stream stall behind nginx?")
	discID := discussionOf(t, first)
	res, err := bc.SendMessage(ctx, askReq("b1", "", map[string]any{"discussionId": discID}))
	if err != nil || res.Task == nil || discussionOf(t, *res.Task) != discID {
		t.Fatalf("join: %+v %v", res, err)
	}
	joined := *res.Task
	if list, err := h.anon.Discussions(ctx, "", 0, ""); err != nil || list.TotalSize != 1 {
		t.Fatalf("join opened a discussion: %+v (%v)", list, err)
	}
	// Alice's reply on her own discussion completes nothing.
	r, err := ac.Reply(ctx, discID, "Extra detail: it is nginx 1.24.")
	if err != nil || r.CompletedTasks != 0 {
		t.Fatalf("self reply: %+v %v", r, err)
	}
	if h.task(ac, first.ID).Status.State != a2a.TaskStateWorking || h.task(bc, joined.ID).Status.State != a2a.TaskStateWorking {
		t.Fatal("a self reply completed a task")
	}
	// One qualifying reply completes both.
	r, err = cc.Reply(ctx, discID, "Turn off proxy_buffering for the stream location.")
	if err != nil || r.CompletedTasks != 2 {
		t.Fatalf("qualifying reply: %+v %v", r, err)
	}
	for _, x := range []struct {
		c  *client.Client
		id string
	}{{ac, first.ID}, {bc, joined.ID}} {
		if st := h.task(x.c, x.id).Status.State; st != a2a.TaskStateCompleted {
			t.Fatalf("task %s: %s", x.id, st)
		}
	}
}

// TestForeignAndMissingAreIdentical: another agent's task and a task that
// does not exist get the same status, headers and body, apart from the
// request id and the echoed task id.
func TestForeignAndMissingAreIdentical(t *testing.T) {
	h := start(t, nil)
	_, ac := h.agent("alice")
	bob, _ := h.agent("bob")
	tk := h.ask(ac, "a1", "private question")
	missing := "01JD0Z6X8Q4Y4K2V1T3S5R7P9N"
	if len(missing) != len(tk.ID) {
		t.Fatal("ids of different lengths would differ in Content-Length")
	}
	for _, op := range []struct{ method, pathFmt string }{
		{"GET", "/a2a/v1/tasks/%s"},
		{"GET", "/a2a/v1/tasks/%s?historyLength=1"},
		{"POST", "/a2a/v1/tasks/%s:cancel"},
	} {
		r1, b1 := h.raw(op.method, fmt.Sprintf(op.pathFmt, tk.ID), a2aHeaders(bob.Token), "")
		r2, b2 := h.raw(op.method, fmt.Sprintf(op.pathFmt, missing), a2aHeaders(bob.Token), "")
		if r1.StatusCode != 404 || r2.StatusCode != 404 {
			t.Fatalf("%s: %d / %d", op.pathFmt, r1.StatusCode, r2.StatusCode)
		}
		if string(b1) != strings.ReplaceAll(string(b2), missing, tk.ID) {
			t.Fatalf("%s bodies differ:\n%s\n%s", op.pathFmt, b1, b2)
		}
		if h1, h2 := headerSig(r1.Header), headerSig(r2.Header); h1 != h2 {
			t.Fatalf("%s headers differ:\n%s\n%s", op.pathFmt, h1, h2)
		}
	}
	// The owner still sees it, unchanged by the probing.
	if got := h.task(ac, tk.ID); got.Status.State != a2a.TaskStateWorking {
		t.Fatalf("owner's task after probing: %s", got.Status.State)
	}
}

func headerSig(hd http.Header) string {
	var parts []string
	for k, v := range hd {
		// What is left of the caller's request rate differs from one
		// request to the next whatever they ask for.
		if k == "X-Request-Id" || k == "Date" || k == "Ratelimit-Remaining" || k == "Ratelimit-Reset" {
			continue
		}
		parts = append(parts, k+"="+strings.Join(v, ","))
	}
	sortStrings(parts)
	return strings.Join(parts, "\n")
}

func TestAskLimits(t *testing.T) {
	h := start(t, func(c *server.Config) { c.AskRate = 5; c.MaxOpenTasks = 25 })
	ctx := context.Background()
	alice, ac := h.agent("alice")
	for i := range 5 {
		h.ask(ac, fmt.Sprintf("m%d", i), "question")
	}
	// A retry of an ask does not use the budget.
	if _, err := ac.SendMessage(ctx, askReq("m0", "question", nil)); err != nil {
		t.Fatalf("retry at the rate limit: %v", err)
	}
	before := h.digest()
	resp, body := h.raw("POST", "/a2a/v1/message:send", a2aHeaders(alice.Token), mustJSON(askReq("m5", "sixth", nil)))
	if resp.StatusCode != 429 || reason(body) != "RATE_LIMITED" {
		t.Fatalf("6th ask: %d %s", resp.StatusCode, body)
	}
	ra, err := strconv.Atoi(resp.Header.Get("Retry-After"))
	if err != nil || ra < 1 || ra > 12 {
		t.Fatalf("Retry-After %q: want whole seconds from the limiter (1..12 at 5/min)", resp.Header.Get("Retry-After"))
	}
	if h.digest() != before {
		t.Fatal("a rate-limited ask changed the store")
	}
	// Rotating the token resets nothing: limits key on the agent id.
	rot, err := h.admin.RotateAgent(ctx, alice.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	resp, _ = h.raw("POST", "/a2a/v1/message:send", a2aHeaders(rot.Token), mustJSON(askReq("m6", "after rotate", nil)))
	if resp.StatusCode != 429 {
		t.Fatalf("ask after rotate: %d, want 429", resp.StatusCode)
	}
}

func TestOpenTaskLimit(t *testing.T) {
	h := start(t, func(c *server.Config) { c.AskRate = 0; c.MaxOpenTasks = 25 })
	ctx := context.Background()
	alice, ac := h.agent("alice")
	var first a2a.Task
	for i := range 25 {
		tk := h.ask(ac, fmt.Sprintf("m%d", i), "question")
		if i == 0 {
			first = tk
		}
	}
	resp, body := h.raw("POST", "/a2a/v1/message:send", a2aHeaders(alice.Token), mustJSON(askReq("m25", "26th", nil)))
	if resp.StatusCode != 429 || reason(body) != "RATE_LIMITED" || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("26th open ask: %d %s", resp.StatusCode, body)
	}
	rot, err := h.admin.RotateAgent(ctx, alice.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	resp, _ = h.raw("POST", "/a2a/v1/message:send", a2aHeaders(rot.Token), mustJSON(askReq("m26", "after rotate", nil)))
	if resp.StatusCode != 429 {
		t.Fatalf("after rotate: %d, want 429", resp.StatusCode)
	}
	// Canceling one frees a slot.
	if _, err := ac.WithToken(rot.Token).CancelTask(ctx, first.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := ac.WithToken(rot.Token).SendMessage(ctx, askReq("m27", "now it fits", nil)); err != nil {
		t.Fatalf("ask after cancel: %v", err)
	}
}

func TestIdempotentAsk(t *testing.T) {
	h := start(t, nil)
	ctx := context.Background()
	_, ac := h.agent("alice")
	first := h.ask(ac, "same-id", "question")
	before := h.digest()
	for range 3 {
		again := h.ask(ac, "same-id", "a different question text")
		if again.ID != first.ID || again.Status.Timestamp != first.Status.Timestamp {
			t.Fatalf("retry gave %s, want %s", again.ID, first.ID)
		}
	}
	if h.digest() != before {
		t.Fatal("a retry wrote to the store")
	}
	if l, err := ac.ListTasks(ctx, nil); err != nil || l.TotalSize != 1 {
		t.Fatalf("tasks after retries: %d (%v)", l.TotalSize, err)
	}
}

func TestCancelOverHTTP(t *testing.T) {
	h := start(t, nil)
	ctx := context.Background()
	_, ac := h.agent("alice")
	_, bc := h.agent("bob")
	tk := h.ask(ac, "a1", "question")
	c1, err := ac.CancelTask(ctx, tk.ID)
	if err != nil || c1.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("cancel: %+v %v", c1, err)
	}
	c2, err := ac.CancelTask(ctx, tk.ID)
	if err != nil || c2.Status.Timestamp != c1.Status.Timestamp || c2.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("cancel again: %+v %v", c2, err)
	}
	// A body with metadata and the matching id is accepted.
	resp, body := h.raw("POST", "/a2a/v1/tasks/"+tk.ID+":cancel", a2aHeaders(tokenOf(ac)), `{"id":"`+tk.ID+`","metadata":{"why":"done"}}`)
	if resp.StatusCode != 200 {
		t.Fatalf("cancel with body: %d %s", resp.StatusCode, body)
	}
	// The discussion and its replies stay.
	discID := discussionOf(t, tk)
	if _, err := bc.Reply(ctx, discID, "late answer"); err != nil {
		t.Fatal(err)
	}
	d, err := h.anon.Discussion(ctx, discID)
	if err != nil || len(d.Replies) != 1 {
		t.Fatalf("discussion after cancel: %+v %v", d, err)
	}
	if st := h.task(ac, tk.ID).Status.State; st != a2a.TaskStateCanceled {
		t.Fatalf("a late reply changed a canceled task: %s", st)
	}
	_, err = ac.CancelTask(ctx, "01JD0000000000000000000000")
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Reason != "TASK_NOT_FOUND" {
		t.Fatalf("cancel missing: %v", err)
	}
}

func tokenOf(c *client.Client) string { return c.Token() }

func TestHeadersAndCORS(t *testing.T) {
	h := start(t, nil)
	alice, ac := h.agent("alice")
	tk := h.ask(ac, "a1", "question")
	for _, p := range []struct{ method, path string }{
		{"GET", "/a2a/v1/tasks/" + tk.ID}, {"GET", "/a2a/v1/tasks"}, {"POST", "/a2a/v1/tasks/" + tk.ID + ":cancel"},
		{"GET", "/a2a/v1/tasks/01JD0000000000000000000000"}, {"GET", "/api/v1/inbox"}, {"GET", "/api/v1/whoami"},
	} {
		resp, _ := h.raw(p.method, p.path, a2aHeaders(alice.Token, "Origin", "https://evil.example"), "")
		if resp.Header.Get("Cache-Control") != "private, no-store" || !strings.Contains(resp.Header.Get("Vary"), "Authorization") {
			t.Errorf("%s %s: Cache-Control %q Vary %q", p.method, p.path, resp.Header.Get("Cache-Control"), resp.Header.Get("Vary"))
		}
		for k := range resp.Header {
			if strings.HasPrefix(k, "Access-Control-") {
				t.Errorf("%s %s: credentialed route sent %s", p.method, p.path, k)
			}
		}
	}
	resp, _ := h.raw("GET", "/api/v1/discussions", map[string]string{"Origin": "https://app.example"}, "")
	if resp.Header.Get("Access-Control-Allow-Origin") != "*" || resp.Header.Get("Access-Control-Allow-Credentials") != "" {
		t.Fatalf("public discussions CORS: %v", resp.Header)
	}
	resp, _ = h.raw("OPTIONS", "/a2a/v1/tasks", map[string]string{"Origin": "https://evil.example", "Access-Control-Request-Method": "GET"}, "")
	if resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatal("preflight on a credentialed route was allowed")
	}
}

func TestListTasksOverHTTP(t *testing.T) {
	h := start(t, func(c *server.Config) { c.AskRate = 0 })
	ctx := context.Background()
	alice, ac := h.agent("alice")
	_, bc := h.agent("bob")
	var made []a2a.Task
	for i := range 7 {
		req := askReq(fmt.Sprintf("a%d", i), "question", nil)
		if i%2 == 0 {
			req.Message.ContextID = "ctx-even"
		}
		res, err := ac.SendMessage(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		made = append(made, *res.Task)
	}
	if _, err := bc.Reply(ctx, discussionOf(t, made[0]), "answer"); err != nil {
		t.Fatal(err)
	}
	resp, body := h.raw("GET", "/a2a/v1/tasks?pageSize=3", a2aHeaders(alice.Token), "")
	if resp.StatusCode != 200 {
		t.Fatalf("list: %d %s", resp.StatusCode, body)
	}
	prototest.Valid(t, prototest.ListTasksResponse, body)
	var page a2a.ListTasksResponse
	if err := json.Unmarshal(body, &page); err != nil {
		t.Fatal(err)
	}
	if len(page.Tasks) != 3 || page.PageSize != 3 || page.TotalSize != 7 || page.NextPageToken == "" {
		t.Fatalf("page: %s", body)
	}
	if page.Tasks[0].ID != made[0].ID {
		t.Fatal("the most recently completed task must come first")
	}
	if strings.Contains(string(body), `"artifacts"`) {
		t.Fatal("includeArtifacts defaults to false: no artifacts key")
	}
	_, body = h.raw("GET", "/a2a/v1/tasks?includeArtifacts=true&historyLength=0", a2aHeaders(alice.Token), "")
	var withArt struct {
		Tasks []map[string]json.RawMessage `json:"tasks"`
	}
	if err := json.Unmarshal(body, &withArt); err != nil {
		t.Fatal(err)
	}
	if len(withArt.Tasks) == 0 {
		t.Fatalf("no tasks: %s", body)
	}
	for _, tk := range withArt.Tasks {
		if _, ok := tk["artifacts"]; !ok {
			t.Fatal("includeArtifacts=true must include the artifacts key, [] when empty")
		}
		if _, ok := tk["history"]; ok {
			t.Fatal("historyLength=0 must drop the history key")
		}
	}
	// Walk with a filter, accepting snake_case names too.
	q := url.Values{"context_id": {"ctx-even"}, "page_size": {"1"}}
	seen := 0
	for range 10 {
		p, err := ac.ListTasks(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		seen += len(p.Tasks)
		if p.NextPageToken == "" {
			break
		}
		q.Set("pageToken", p.NextPageToken)
	}
	if seen != 4 {
		t.Fatalf("ctx-even walk saw %d, want 4", seen)
	}
	// Bob sees none of alice's tasks, and cannot use her page token.
	if l, err := bc.ListTasks(ctx, nil); err != nil || l.TotalSize != 0 || len(l.Tasks) != 0 {
		t.Fatalf("bob's list: %+v (%v)", l, err)
	}
	_, err := bc.ListTasks(ctx, url.Values{"pageToken": {page.NextPageToken}, "pageSize": {"3"}})
	var ce *client.Error
	if !errors.As(err, &ce) || ce.StatusCode != 400 || ce.Reason != "INVALID_PARAMS" {
		t.Fatalf("foreign page token: %v", err)
	}
	// statusTimestampAfter is inclusive.
	l, err := ac.ListTasks(ctx, url.Values{"statusTimestampAfter": {made[0].Status.Timestamp}})
	if err != nil || l.TotalSize != 7 {
		t.Fatalf("since the first timestamp: %+v %v", l.TotalSize, err)
	}
	// Far from now the answer stays exact: no task after the year 3000,
	// every task after 1600.
	for since, want := range map[string]int{"3000-01-01T00:00:00Z": 0, "9999-12-31T23:59:59.999Z": 0,
		"1600-01-01T00:00:00Z": 7, "0001-01-01T00:00:00.001Z": 7} {
		l, err := ac.ListTasks(ctx, url.Values{"statusTimestampAfter": {since}})
		if err != nil || l.TotalSize != want || len(l.Tasks) != want {
			t.Fatalf("since %s: %d tasks (total %d), want %d: %v", since, len(l.Tasks), l.TotalSize, want, err)
		}
	}
}
