package e2e

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kfa-project/kfa/api"
)

// surfaceCall is one request through one surface, answered with its
// status and, for the JSON surfaces, its ErrorInfo reason.
type surfaceCall struct {
	surface string
	do      func(t *testing.T) (status int, reason string)
}

// TestSurfacesAgree runs one table of requests through every surface that
// offers them: /api/v1, the A2A binding, the web view and the admin API.
// The rule each case meets lives once (in the service or the domain) and
// the surfaces only translate it, so every surface answers a case with
// the same status, and the JSON ones with the same reason; a refused
// request changes nothing.
func TestSurfacesAgree(t *testing.T) {
	h := start(t, func(c *serverConfig) { c.MaxReplies = 1 })
	alice, ac := h.agent("alice")
	bob, _ := h.agent("bob")
	rita, _ := h.agent("rita", "read")
	disc := discussionOf(t, h.ask(ac, "m1", "do the surfaces agree?"))
	full := discussionOf(t, h.ask(ac, "m2", "a discussion at its bound"))
	if _, err := h.admin.ReplyAs(bg(), full, bob.ID, "the one reply it takes"); err != nil {
		t.Fatal(err)
	}
	const nowhere = "01JD0000000000000000000000"

	admin := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", filepath.Join(h.cfg.DataDir, "kfa.sock"))
	}}}
	send := func(t *testing.T, c *http.Client, req *http.Request) (int, string) {
		t.Helper()
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, reason(b)
	}
	request := func(t *testing.T, method, u, body string) *http.Request {
		t.Helper()
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req, err := http.NewRequest(method, u, rd)
		if err != nil {
			t.Fatal(err)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		return req
	}
	// apiCall goes through /api/v1 (and A2A, for paths under /a2a/v1) with
	// an agent's token.
	apiCall := func(method, path, token, body string) surfaceCall {
		name := "api"
		if strings.HasPrefix(path, "/a2a/") {
			name = "a2a"
		}
		return surfaceCall{name, func(t *testing.T) (int, string) {
			req := request(t, method, h.url+path, body)
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			req.Header.Set("A2A-Version", "1.0")
			return send(t, http.DefaultClient, req)
		}}
	}
	adminCall := func(method, path, body string) surfaceCall {
		return surfaceCall{"admin", func(t *testing.T) (int, string) {
			return send(t, admin, request(t, method, "http://kfa"+path, body))
		}}
	}
	// The web view, signed in as each agent before the table (a sign-in
	// writes its session).
	browsers := map[string]*browser{}
	for _, a := range []api.Agent{alice, bob, rita} {
		browsers[a.ID] = h.browser()
		browsers[a.ID].signIn(a.Token, "/")
	}
	webReply := func(a api.Agent, discussion string, form url.Values) surfaceCall {
		return surfaceCall{"web", func(t *testing.T) (int, string) {
			b := browsers[a.ID]
			form.Set("csrf", b.get("/discussions/"+disc).csrf(t)) // the session's token, on every page
			return b.post("/discussions/"+discussion+"/replies", form).status, ""
		}}
	}
	webGet := func(path string) surfaceCall {
		return surfaceCall{"web", func(t *testing.T) (int, string) { return h.browser().get(path).status, "" }}
	}
	body := func(s string) url.Values { return url.Values{"body": {s}} }
	long := strings.Repeat("x", 20_001)

	for _, tc := range []struct {
		name   string
		status int
		reason string
		calls  []surfaceCall
	}{
		{"reply without the post scope", 403, "INSUFFICIENT_SCOPE", []surfaceCall{
			apiCall("POST", "/api/v1/discussions/"+disc+"/replies", rita.Token, `{"body":"x"}`),
			adminCall("POST", "/admin/v1/discussions/"+disc+"/replies", `{"agentId":"`+rita.ID+`","body":"x"}`),
			webReply(rita, disc, body("x")),
		}},
		{"reply with a blank body", 400, "INVALID_PARAMS", []surfaceCall{
			apiCall("POST", "/api/v1/discussions/"+disc+"/replies", bob.Token, `{"body":"   "}`),
			adminCall("POST", "/admin/v1/discussions/"+disc+"/replies", `{"agentId":"`+bob.ID+`","body":"   "}`),
			webReply(bob, disc, body("   ")),
		}},
		{"reply too long", 400, "INVALID_PARAMS", []surfaceCall{
			apiCall("POST", "/api/v1/discussions/"+disc+"/replies", bob.Token, `{"body":"`+long+`"}`),
			adminCall("POST", "/admin/v1/discussions/"+disc+"/replies", `{"agentId":"`+bob.ID+`","body":"`+long+`"}`),
			webReply(bob, disc, body(long)),
		}},
		{"reply without a body", 400, "INVALID_PARAMS", []surfaceCall{
			apiCall("POST", "/api/v1/discussions/"+disc+"/replies", bob.Token, `{}`),
			adminCall("POST", "/admin/v1/discussions/"+disc+"/replies", `{"agentId":"`+bob.ID+`"}`),
		}},
		{"reply to no discussion", 404, "NOT_FOUND", []surfaceCall{
			apiCall("POST", "/api/v1/discussions/"+nowhere+"/replies", bob.Token, `{"body":"x"}`),
			adminCall("POST", "/admin/v1/discussions/"+nowhere+"/replies", `{"agentId":"`+bob.ID+`","body":"x"}`),
			webReply(bob, nowhere, body("x")),
		}},
		{"reply over the discussion's bound", 400, "UNSUPPORTED_OPERATION", []surfaceCall{
			apiCall("POST", "/api/v1/discussions/"+full+"/replies", alice.Token, `{"body":"x"}`),
			adminCall("POST", "/admin/v1/discussions/"+full+"/replies", `{"agentId":"`+alice.ID+`","body":"x"}`),
			webReply(alice, full, body("x")),
		}},
		{"no such discussion", 404, "NOT_FOUND", []surfaceCall{
			apiCall("GET", "/api/v1/discussions/"+nowhere, "", ""),
			adminCall("GET", "/admin/v1/discussions/"+nowhere, ""),
			webGet("/discussions/" + nowhere),
		}},
		{"discussions of an unknown status", 400, "INVALID_PARAMS", []surfaceCall{
			apiCall("GET", "/api/v1/discussions?status=closed", "", ""),
			adminCall("GET", "/admin/v1/discussions?status=closed", ""),
			webGet("/discussions?status=closed"),
		}},
		{"discussions, pageSize 0", 400, "INVALID_PARAMS", []surfaceCall{
			apiCall("GET", "/api/v1/discussions?pageSize=0", "", ""),
			adminCall("GET", "/admin/v1/discussions?pageSize=0", ""),
		}},
		{"discussions, pageSize 101", 400, "INVALID_PARAMS", []surfaceCall{
			apiCall("GET", "/api/v1/discussions?pageSize=101", "", ""),
			adminCall("GET", "/admin/v1/discussions?pageSize=101", ""),
		}},
		{"discussions, pageSize given twice", 400, "INVALID_PARAMS", []surfaceCall{
			apiCall("GET", "/api/v1/discussions?pageSize=2&pageSize=3", "", ""),
			adminCall("GET", "/admin/v1/discussions?pageSize=2&pageSize=3", ""),
		}},
		{"replies, pageSize 0", 400, "INVALID_PARAMS", []surfaceCall{
			apiCall("GET", "/api/v1/discussions/"+disc+"?pageSize=0", "", ""),
			adminCall("GET", "/admin/v1/discussions/"+disc+"?pageSize=0", ""),
		}},
		{"inbox, pageSize 0", 400, "INVALID_PARAMS", []surfaceCall{
			apiCall("GET", "/api/v1/inbox?pageSize=0", alice.Token, ""),
			adminCall("GET", "/admin/v1/agents/"+alice.ID+"/inbox?pageSize=0", ""),
		}},
		{"inbox, unacked not a boolean", 400, "INVALID_PARAMS", []surfaceCall{
			apiCall("GET", "/api/v1/inbox?unacked=yes", alice.Token, ""),
			adminCall("GET", "/admin/v1/agents/"+alice.ID+"/inbox?unacked=yes", ""),
		}},
		{"tasks, pageSize 0", 400, "INVALID_PARAMS", []surfaceCall{
			apiCall("GET", "/a2a/v1/tasks?pageSize=0", alice.Token, ""),
			adminCall("GET", "/admin/v1/tasks?pageSize=0", ""),
		}},
		{"tasks, pageSize 101", 400, "INVALID_PARAMS", []surfaceCall{
			apiCall("GET", "/a2a/v1/tasks?pageSize=101", alice.Token, ""),
			adminCall("GET", "/admin/v1/tasks?pageSize=101", ""),
		}},
		{"tasks in an unknown state", 400, "INVALID_PARAMS", []surfaceCall{
			apiCall("GET", "/a2a/v1/tasks?status=TASK_STATE_SLEEPING", alice.Token, ""),
			adminCall("GET", "/admin/v1/tasks?state=TASK_STATE_SLEEPING", ""),
		}},
		{"tasks since a time that is not one", 400, "INVALID_PARAMS", []surfaceCall{
			apiCall("GET", "/a2a/v1/tasks?statusTimestampAfter=yesterday", alice.Token, ""),
			adminCall("GET", "/admin/v1/tasks?since=yesterday", ""),
		}},
		{"tasks of a context id too long", 400, "INVALID_PARAMS", []surfaceCall{
			apiCall("GET", "/a2a/v1/tasks?contextId="+strings.Repeat("c", 129), alice.Token, ""),
			adminCall("GET", "/admin/v1/tasks?contextId="+strings.Repeat("c", 129), ""),
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := h.digest()
			for _, c := range tc.calls {
				status, reason := c.do(t)
				if status != tc.status {
					t.Errorf("%s: status %d, want %d", c.surface, status, tc.status)
				}
				if c.surface != "web" && reason != tc.reason {
					t.Errorf("%s: reason %q, want %q", c.surface, reason, tc.reason)
				}
			}
			if h.digest() != before {
				t.Error("a refused request changed the store")
			}
		})
	}
}
