package e2e

import (
	"fmt"
	"strings"
	"testing"
)

// badCase is one refused request: the exact status and ErrorInfo reason it
// must get.
type badCase struct {
	name    string
	method  string
	path    string
	headers map[string]string
	body    string
	status  int
	reason  string
}

// TestBadInputLeavesStoreUnchanged sends malformed, oversized, mistyped and
// unauthorized requests; each must get its exact A2A error, never a 5xx,
// and leave the store byte for byte as it was.
func TestBadInputLeavesStoreUnchanged(t *testing.T) {
	h := start(t, func(c *serverConfig) { c.MaxBodyBytes = 8 << 10 })
	alice, ac := h.agent("alice")
	reader, _ := h.agent("reader", "read")
	_, bc := h.agent("bob")
	mine := h.ask(ac, "a1", "how do I rotate logs?")
	theirs := h.ask(bc, "b1", "bob's question")
	done := h.ask(ac, "a2", "answered question")
	if _, err := bc.Reply(bg(), discussionOf(t, done), "answer"); err != nil {
		t.Fatal(err)
	}

	tok := alice.Token
	send := "/a2a/v1/message:send"
	ok := a2aHeaders(tok)
	search := func(data string) string {
		return `{"message":{"role":"ROLE_USER","messageId":"s1","parts":[{"data":` + data + `}]}}`
	}
	askBody := func(data string) string {
		return `{"message":{"role":"ROLE_USER","messageId":"x1","parts":[{"data":` + data + `}]},"configuration":{"returnImmediately":true}}`
	}
	cases := []badCase{
		// Protocol version.
		{"no version header", "POST", send, a2aHeaders(tok, "A2A-Version", ""), askBody(`{"action":"ask","question":"q"}`), 400, "VERSION_NOT_SUPPORTED"},
		{"version 0.3", "POST", send, a2aHeaders(tok, "A2A-Version", "0.3"), askBody(`{"action":"ask","question":"q"}`), 400, "VERSION_NOT_SUPPORTED"},
		{"version 2.0", "GET", "/a2a/v1/tasks", a2aHeaders(tok, "A2A-Version", "2.0"), "", 400, "VERSION_NOT_SUPPORTED"},
		{"version garbage", "GET", "/a2a/v1/tasks/" + mine.ID, a2aHeaders(tok, "A2A-Version", "latest"), "", 400, "VERSION_NOT_SUPPORTED"},
		// Content type and body.
		{"text/plain body", "POST", send, a2aHeaders(tok, "Content-Type", "text/plain"), askBody(`{"action":"ask","question":"q"}`), 400, "CONTENT_TYPE_NOT_SUPPORTED"},
		{"no content type", "POST", send, a2aHeaders(tok, "Content-Type", ""), askBody(`{"action":"ask","question":"q"}`), 400, "CONTENT_TYPE_NOT_SUPPORTED"},
		{"form body", "POST", send, a2aHeaders(tok, "Content-Type", "application/x-www-form-urlencoded"), "a=b", 400, "CONTENT_TYPE_NOT_SUPPORTED"},
		{"malformed JSON", "POST", send, ok, `{"message":`, 400, "PARSE_ERROR"},
		{"not JSON", "POST", send, ok, `hello`, 400, "PARSE_ERROR"},
		{"empty body", "POST", send, ok, ``, 400, "PARSE_ERROR"},
		{"invalid UTF-8", "POST", send, ok, "{\"message\":{\"role\":\"ROLE_USER\",\"messageId\":\"\xff\"}}", 400, "PARSE_ERROR"},
		{"duplicate keys", "POST", send, ok, `{"message":{"role":"ROLE_USER","role":"ROLE_AGENT"}}`, 400, "INVALID_PARAMS"},
		{"too deep", "POST", send, ok, strings.Repeat(`{"a":`, 70) + "1" + strings.Repeat("}", 70), 400, "INVALID_PARAMS"},
		{"array body", "POST", send, ok, `[1,2]`, 400, "INVALID_PARAMS"},
		{"oversized body", "POST", send, ok, askBody(`{"action":"ask","question":"` + strings.Repeat("x", 9000) + `"}`), 413, "PAYLOAD_TOO_LARGE"},
		{"wrong type for message", "POST", send, ok, `{"message":"hi"}`, 400, "INVALID_PARAMS"},
		{"wrong type for parts", "POST", send, ok, `{"message":{"role":"ROLE_USER","messageId":"m","parts":{}}}`, 400, "INVALID_PARAMS"},
		// Message shape.
		{"no message", "POST", send, ok, `{}`, 400, "INVALID_PARAMS"},
		{"agent role", "POST", send, ok, `{"message":{"role":"ROLE_AGENT","messageId":"m","parts":[{"text":"x"}]}}`, 400, "INVALID_PARAMS"},
		{"no role", "POST", send, ok, `{"message":{"messageId":"m","parts":[{"text":"x"}]}}`, 400, "INVALID_PARAMS"},
		{"no message id", "POST", send, ok, `{"message":{"role":"ROLE_USER","parts":[{"text":"x"}]}}`, 400, "INVALID_PARAMS"},
		{"no parts", "POST", send, ok, `{"message":{"role":"ROLE_USER","messageId":"m","parts":[]}}`, 400, "INVALID_PARAMS"},
		{"part with two contents", "POST", send, ok, `{"message":{"role":"ROLE_USER","messageId":"m","parts":[{"text":"x","url":"http://a"}]}}`, 400, "INVALID_PARAMS"},
		{"empty part", "POST", send, ok, `{"message":{"role":"ROLE_USER","messageId":"m","parts":[{}]}}`, 400, "INVALID_PARAMS"},
		{"url part", "POST", send, ok, `{"message":{"role":"ROLE_USER","messageId":"m","parts":[{"url":"http://example.com/x"}]}}`, 400, "CONTENT_TYPE_NOT_SUPPORTED"},
		{"raw part", "POST", send, ok, `{"message":{"role":"ROLE_USER","messageId":"m","parts":[{"raw":"aGk="}]}}`, 400, "CONTENT_TYPE_NOT_SUPPORTED"},
		{"csv data part", "POST", send, ok, `{"message":{"role":"ROLE_USER","messageId":"m","parts":[{"data":{"action":"search"},"mediaType":"text/csv"}]}}`, 400, "CONTENT_TYPE_NOT_SUPPORTED"},
		{"data not an object", "POST", send, ok, search(`[1,2]`), 400, "INVALID_PARAMS"},
		{"unknown action", "POST", send, ok, search(`{"action":"delete"}`), 400, "INVALID_PARAMS"},
		{"action not a string", "POST", send, ok, search(`{"action":7}`), 400, "INVALID_PARAMS"},
		{"metadata not an object", "POST", send, ok, `{"message":{"role":"ROLE_USER","messageId":"m","parts":[{"text":"x"}],"metadata":[1]}}`, 400, "INVALID_PARAMS"},
		// Search parameters.
		{"empty query", "POST", send, ok, search(`{"action":"search","query":"  "}`), 400, "INVALID_PARAMS"},
		{"limit zero", "POST", send, ok, search(`{"action":"search","query":"x","limit":0}`), 400, "INVALID_PARAMS"},
		{"limit six", "POST", send, ok, search(`{"action":"search","query":"x","limit":6}`), 400, "INVALID_PARAMS"},
		{"limit fraction", "POST", send, ok, search(`{"action":"search","query":"x","limit":2.5}`), 400, "INVALID_PARAMS"},
		{"limit string", "POST", send, ok, search(`{"action":"search","query":"x","limit":"3"}`), 400, "INVALID_PARAMS"},
		{"query too long", "POST", send, ok, search(`{"action":"search","query":"` + strings.Repeat("q", 1001) + `"}`), 400, "INVALID_PARAMS"},
		{"filter with control char", "POST", send, ok, search(`{"action":"search","query":"x","kind":"a\u0007b"}`), 400, "INVALID_PARAMS"},
		// Ask.
		{"ask anonymous", "POST", send, a2aHeaders(""), askBody(`{"action":"ask","question":"q"}`), 401, "UNAUTHENTICATED"},
		{"ask with read scope", "POST", send, a2aHeaders(reader.Token), askBody(`{"action":"ask","question":"q"}`), 403, "INSUFFICIENT_SCOPE"},
		{"ask without returnImmediately", "POST", send, ok, `{"message":{"role":"ROLE_USER","messageId":"x1","parts":[{"data":{"action":"ask","question":"q"}}]}}`, 400, "UNSUPPORTED_OPERATION"},
		{"ask with returnImmediately false", "POST", send, ok, `{"message":{"role":"ROLE_USER","messageId":"x1","parts":[{"data":{"action":"ask","question":"q"}}]},"configuration":{"returnImmediately":false}}`, 400, "UNSUPPORTED_OPERATION"},
		{"ask without question", "POST", send, ok, askBody(`{"action":"ask"}`), 400, "INVALID_PARAMS"},
		{"ask question too long", "POST", send, ok, askBody(`{"action":"ask","question":"` + strings.Repeat("q", 501) + `"}`), 400, "INVALID_PARAMS"},
		{"ask question with NUL", "POST", send, ok, askBody(`{"action":"ask","question":"a\u0000b"}`), 400, "INVALID_PARAMS"},
		{"ask details not a string", "POST", send, ok, askBody(`{"action":"ask","question":"q","details":{}}`), 400, "INVALID_PARAMS"},
		{"ask filter too long", "POST", send, ok, askBody(`{"action":"ask","question":"q","product":"` + strings.Repeat("p", 65) + `"}`), 400, "INVALID_PARAMS"},
		{"ask join unknown discussion", "POST", send, ok, askBody(`{"action":"ask","discussionId":"01JD0000000000000000000000"}`), 404, "NOT_FOUND"},
		{"ask join answered discussion", "POST", send, ok, askBody(`{"action":"ask","discussionId":"` + discussionOf(t, done) + `"}`), 400, "UNSUPPORTED_OPERATION"},
		{"message id with spaces", "POST", send, ok, `{"message":{"role":"ROLE_USER","messageId":"a b","parts":[{"data":{"action":"ask","question":"q"}}]},"configuration":{"returnImmediately":true}}`, 400, "INVALID_PARAMS"},
		{"negative historyLength in ask", "POST", send, ok, `{"message":{"role":"ROLE_USER","messageId":"x9","parts":[{"data":{"action":"ask","question":"q"}}]},"configuration":{"returnImmediately":true,"historyLength":-1}}`, 400, "INVALID_PARAMS"},
		// Messages to tasks.
		{"message to missing task", "POST", send, ok, `{"message":{"role":"ROLE_USER","messageId":"m","taskId":"01JD0000000000000000000000","parts":[{"text":"more"}]}}`, 404, "TASK_NOT_FOUND"},
		{"message to foreign task", "POST", send, ok, `{"message":{"role":"ROLE_USER","messageId":"m","taskId":"` + theirs.ID + `","parts":[{"text":"more"}]}}`, 404, "TASK_NOT_FOUND"},
		{"message to own working task", "POST", send, ok, `{"message":{"role":"ROLE_USER","messageId":"m","taskId":"` + mine.ID + `","parts":[{"text":"more"}]}}`, 400, "UNSUPPORTED_OPERATION"},
		{"message to completed task", "POST", send, ok, `{"message":{"role":"ROLE_USER","messageId":"m","taskId":"` + done.ID + `","parts":[{"text":"more"}]}}`, 400, "UNSUPPORTED_OPERATION"},
		// Credentials.
		{"garbage bearer", "GET", "/a2a/v1/tasks", a2aHeaders("garbage"), "", 401, "UNAUTHENTICATED"},
		{"unknown kfa token", "GET", "/a2a/v1/tasks", a2aHeaders("kfa_" + strings.Repeat("a", 52)), "", 401, "UNAUTHENTICATED"},
		{"basic auth", "GET", "/a2a/v1/tasks", a2aHeaders("", "Authorization", "Basic YTpi"), "", 401, "UNAUTHENTICATED"},
		{"empty bearer", "GET", "/a2a/v1/tasks", a2aHeaders("", "Authorization", "Bearer "), "", 401, "UNAUTHENTICATED"},
		{"no credential on get", "GET", "/a2a/v1/tasks/" + mine.ID, a2aHeaders(""), "", 401, "UNAUTHENTICATED"},
		{"no credential on list", "GET", "/a2a/v1/tasks", a2aHeaders(""), "", 401, "UNAUTHENTICATED"},
		{"no credential on cancel", "POST", "/a2a/v1/tasks/" + mine.ID + ":cancel", a2aHeaders(""), "", 401, "UNAUTHENTICATED"},
		{"garbage bearer on search", "POST", send, a2aHeaders("nope"), search(`{"action":"search","query":"x"}`), 401, "UNAUTHENTICATED"},
		// Tasks.
		{"get missing task", "GET", "/a2a/v1/tasks/01JD0000000000000000000000", ok, "", 404, "TASK_NOT_FOUND"},
		{"get foreign task", "GET", "/a2a/v1/tasks/" + theirs.ID, ok, "", 404, "TASK_NOT_FOUND"},
		{"get malformed id", "GET", "/a2a/v1/tasks/not-a-task", ok, "", 404, "TASK_NOT_FOUND"},
		{"negative historyLength", "GET", "/a2a/v1/tasks/" + mine.ID + "?historyLength=-5", ok, "", 400, "INVALID_PARAMS"},
		{"historyLength not a number", "GET", "/a2a/v1/tasks/" + mine.ID + "?historyLength=all", ok, "", 400, "INVALID_PARAMS"},
		{"cancel missing task", "POST", "/a2a/v1/tasks/01JD0000000000000000000000:cancel", ok, "", 404, "TASK_NOT_FOUND"},
		{"cancel foreign task", "POST", "/a2a/v1/tasks/" + theirs.ID + ":cancel", ok, "", 404, "TASK_NOT_FOUND"},
		{"cancel completed task", "POST", "/a2a/v1/tasks/" + done.ID + ":cancel", ok, "", 400, "TASK_NOT_CANCELABLE"},
		{"cancel with mismatched body id", "POST", "/a2a/v1/tasks/" + mine.ID + ":cancel", ok, `{"id":"other"}`, 400, "INVALID_PARAMS"},
		{"cancel with bad body", "POST", "/a2a/v1/tasks/" + mine.ID + ":cancel", ok, `{"id":`, 400, "PARSE_ERROR"},
		{"pageSize 150", "GET", "/a2a/v1/tasks?pageSize=150", ok, "", 400, "INVALID_PARAMS"},
		{"pageSize 0", "GET", "/a2a/v1/tasks?pageSize=0", ok, "", 400, "INVALID_PARAMS"},
		{"unknown status", "GET", "/a2a/v1/tasks?status=TASK_STATE_BOGUS", ok, "", 400, "INVALID_PARAMS"},
		{"bad timestamp", "GET", "/a2a/v1/tasks?statusTimestampAfter=yesterday", ok, "", 400, "INVALID_PARAMS"},
		{"bad includeArtifacts", "GET", "/a2a/v1/tasks?includeArtifacts=maybe", ok, "", 400, "INVALID_PARAMS"},
		{"forged page token", "GET", "/a2a/v1/tasks?pageToken=AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA", ok, "", 400, "INVALID_PARAMS"},
		{"repeated status", "GET", "/a2a/v1/tasks?status=TASK_STATE_WORKING&status=TASK_STATE_CANCELED", ok, "", 400, "INVALID_PARAMS"},
		{"extended card with a bad token", "GET", "/a2a/v1/extendedAgentCard", a2aHeaders("kfa_bad"), "", 401, "UNAUTHENTICATED"},
		// Routes and methods.
		{"unknown route", "GET", "/a2a/v1/nope", ok, "", 404, "NOT_FOUND"},
		{"unknown top-level route", "GET", "/admin/v1/agents", nil, "", 404, "NOT_FOUND"},
		{"delete a task", "DELETE", "/a2a/v1/tasks/" + mine.ID, ok, "", 405, "METHOD_NOT_ALLOWED"},
		{"get message:send", "GET", send, ok, "", 405, "METHOD_NOT_ALLOWED"},
		{"put the card", "PUT", "/.well-known/agent-card.json", nil, "{}", 405, "METHOD_NOT_ALLOWED"},
		{"post discussions", "POST", "/api/v1/discussions", map[string]string{"Content-Type": "application/json"}, "{}", 405, "METHOD_NOT_ALLOWED"},
		// Public API.
		{"unknown discussion", "GET", "/api/v1/discussions/01JD0000000000000000000000", nil, "", 404, "NOT_FOUND"},
		{"discussion status bogus", "GET", "/api/v1/discussions?status=closed", nil, "", 400, "INVALID_PARAMS"},
		{"discussions pageSize 101", "GET", "/api/v1/discussions?pageSize=101", nil, "", 400, "INVALID_PARAMS"},
		{"discussions bad token", "GET", "/api/v1/discussions?pageToken=xyz", nil, "", 400, "INVALID_PARAMS"},
		{"reply anonymous", "POST", "/api/v1/discussions/" + discussionOf(t, mine) + "/replies", map[string]string{"Content-Type": "application/json"}, `{"body":"x"}`, 401, "UNAUTHENTICATED"},
		{"reply with read scope", "POST", "/api/v1/discussions/" + discussionOf(t, mine) + "/replies", a2aHeaders(reader.Token), `{"body":"x"}`, 403, "INSUFFICIENT_SCOPE"},
		{"reply without body", "POST", "/api/v1/discussions/" + discussionOf(t, mine) + "/replies", ok, `{}`, 400, "INVALID_PARAMS"},
		{"reply empty body", "POST", "/api/v1/discussions/" + discussionOf(t, mine) + "/replies", ok, `{"body":"   "}`, 400, "INVALID_PARAMS"},
		{"reply body not a string", "POST", "/api/v1/discussions/" + discussionOf(t, mine) + "/replies", ok, `{"body":42}`, 400, "INVALID_PARAMS"},
		{"reply to unknown discussion", "POST", "/api/v1/discussions/01JD0000000000000000000000/replies", ok, `{"body":"x"}`, 404, "NOT_FOUND"},
		{"reply with escape codes", "POST", "/api/v1/discussions/" + discussionOf(t, mine) + "/replies", ok, `{"body":"\u001b[2J"}`, 400, "INVALID_PARAMS"},
		{"inbox anonymous", "GET", "/api/v1/inbox", nil, "", 401, "UNAUTHENTICATED"},
		{"inbox bad unacked", "GET", "/api/v1/inbox?unacked=yes", ok, "", 400, "INVALID_PARAMS"},
		{"ack no ids", "POST", "/api/v1/inbox:ack", ok, `{"ids":[]}`, 400, "INVALID_PARAMS"},
		{"ack too many ids", "POST", "/api/v1/inbox:ack", ok, `{"ids":[` + strings.TrimSuffix(strings.Repeat(`"x",`, 101), ",") + `]}`, 400, "INVALID_PARAMS"},
		{"ack ids not strings", "POST", "/api/v1/inbox:ack", ok, `{"ids":[1]}`, 400, "INVALID_PARAMS"},
		{"whoami anonymous", "GET", "/api/v1/whoami", nil, "", 401, "UNAUTHENTICATED"},
	}
	runBadCases(t, h, cases)
}

func runBadCases(t *testing.T, h *harness, cases []badCase) {
	t.Helper()
	before := h.digest()
	seen := map[string]bool{}
	for _, tc := range cases {
		if seen[tc.name] {
			t.Fatalf("duplicate case name %q", tc.name)
		}
		seen[tc.name] = true
		t.Run(tc.name, func(t *testing.T) {
			resp, body := h.raw(tc.method, tc.path, tc.headers, tc.body)
			if resp.StatusCode >= 500 {
				t.Fatalf("5xx: %d %s", resp.StatusCode, body)
			}
			if resp.StatusCode != tc.status || reason(body) != tc.reason {
				t.Fatalf("got %d %s, want %d %s: %s", resp.StatusCode, reason(body), tc.status, tc.reason, body)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Fatalf("error Content-Type %q", ct)
			}
			if resp.StatusCode == 401 && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer ") {
				t.Fatal("401 without a Bearer challenge")
			}
			if resp.StatusCode == 405 && resp.Header.Get("Allow") == "" {
				t.Fatal("405 without Allow")
			}
			if after := h.digest(); after != before {
				t.Fatalf("the store changed")
			}
		})
	}
	t.Logf("%d bad requests, each refused exactly, store unchanged", len(cases))
	_ = fmt.Sprint()
}
