package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/client"
	"github.com/kfa-project/kfa/internal/prototest"
	"github.com/kfa-project/kfa/server"
)

func TestAgentCard(t *testing.T) {
	h := start(t, nil)
	resp, body := h.raw("GET", "/.well-known/agent-card.json", nil, "")
	if resp.StatusCode != 200 {
		t.Fatalf("card: %d %s", resp.StatusCode, body)
	}
	for k, want := range map[string]string{
		"Content-Type":                "application/json",
		"Cache-Control":               "public, max-age=300",
		"Access-Control-Allow-Origin": "*",
	} {
		if got := resp.Header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	etag := resp.Header.Get("ETag")
	if !strings.HasPrefix(etag, `"`) || !strings.HasSuffix(etag, `"`) {
		t.Fatalf("ETag %q is not a quoted strong tag", etag)
	}
	prototest.Valid(t, prototest.AgentCard, body)
	var card a2a.AgentCard
	if err := json.Unmarshal(body, &card); err != nil {
		t.Fatal(err)
	}
	wantIfaces := []a2a.AgentInterface{
		{URL: "http://kfa.test/a2a/v1", ProtocolBinding: "HTTP+JSON", ProtocolVersion: "1.0"},
		{URL: "http://kfa.test/a2a/jsonrpc", ProtocolBinding: "JSONRPC", ProtocolVersion: "1.0"},
		{URL: "http://kfa.test/a2a/jsonrpc", ProtocolBinding: "JSONRPC", ProtocolVersion: "0.3"},
	}
	if mustJSON(card.SupportedInterfaces) != mustJSON(wantIfaces) {
		t.Fatalf("interfaces: %+v", card.SupportedInterfaces)
	}
	// Streaming, push and the extended card work, and the card says so.
	if !card.Capabilities.Streaming || !card.Capabilities.PushNotifications || !card.Capabilities.ExtendedAgentCard {
		t.Fatalf("capabilities: %+v", card.Capabilities)
	}
	if got := skillIDs(card); got != "knowledge-search,ask-network,answer-feedback" {
		t.Fatalf("skills %s", got)
	}
	if card.SecuritySchemes["bearer"].HTTPAuth == nil || card.SecuritySchemes["bearer"].HTTPAuth.Scheme != "Bearer" {
		t.Fatalf("bearer scheme: %+v", card.SecuritySchemes)
	}
	if !strings.Contains(card.Skills[1].Description, `"post"`) {
		t.Fatal("ask-network must name the post scope")
	}

	// Conditional requests: 304 on a matching tag, in a list, weak or *.
	for _, inm := range []string{etag, `"nope", ` + etag, "W/" + etag, "*"} {
		resp, body = h.raw("GET", "/.well-known/agent-card.json", map[string]string{"If-None-Match": inm}, "")
		if resp.StatusCode != http.StatusNotModified || len(body) != 0 || resp.Header.Get("ETag") != etag {
			t.Fatalf("If-None-Match %s: %d %q", inm, resp.StatusCode, body)
		}
	}
	resp, _ = h.raw("GET", "/.well-known/agent-card.json", map[string]string{"If-None-Match": `"other"`}, "")
	if resp.StatusCode != 200 {
		t.Fatalf("non-matching tag: %d", resp.StatusCode)
	}
	// Last-Modified, and If-Modified-Since answered as If-None-Match is
	// (TCK CARD-CACHE-003); If-None-Match, when sent, decides alone.
	lm := resp.Header.Get("Last-Modified")
	modified, err := http.ParseTime(lm)
	if err != nil || modified.After(time.Now()) {
		t.Fatalf("Last-Modified %q: %v", lm, err)
	}
	for _, tc := range []struct {
		name    string
		headers map[string]string
		want    int
	}{
		{"the same date", map[string]string{"If-Modified-Since": lm}, http.StatusNotModified},
		{"a later date", map[string]string{"If-Modified-Since": modified.Add(time.Hour).Format(http.TimeFormat)}, http.StatusNotModified},
		{"an earlier date", map[string]string{"If-Modified-Since": modified.Add(-time.Second).Format(http.TimeFormat)}, http.StatusOK},
		{"no date", map[string]string{"If-Modified-Since": "yesterday"}, http.StatusOK},
		{"a tag that does not match", map[string]string{"If-Modified-Since": lm, "If-None-Match": `"other"`}, http.StatusOK},
	} {
		resp, body = h.raw("GET", "/.well-known/agent-card.json", tc.headers, "")
		if resp.StatusCode != tc.want || resp.Header.Get("Last-Modified") != lm || resp.Header.Get("ETag") != etag ||
			(tc.want == http.StatusNotModified) != (len(body) == 0) {
			t.Fatalf("If-Modified-Since, %s: %d, Last-Modified %q, %d bytes", tc.name, resp.StatusCode,
				resp.Header.Get("Last-Modified"), len(body))
		}
	}
	resp, body = h.raw("HEAD", "/.well-known/agent-card.json", nil, "")
	if resp.StatusCode != 200 || len(body) != 0 || resp.Header.Get("ETag") != etag {
		t.Fatalf("HEAD: %d", resp.StatusCode)
	}
	// No version header or credential is needed; a bad credential is ignored.
	resp, _ = h.raw("GET", "/.well-known/agent-card.json", map[string]string{"Authorization": "Bearer junk", "A2A-Version": "9.9"}, "")
	if resp.StatusCode != 200 {
		t.Fatalf("card with junk headers: %d", resp.StatusCode)
	}
}

func skillIDs(c a2a.AgentCard) string {
	var ids []string
	for _, s := range c.Skills {
		ids = append(ids, s.ID)
	}
	return strings.Join(ids, ",")
}

func TestContributorWritesOff(t *testing.T) {
	h := start(t, func(c *server.Config) { c.ContributorWrites = false })
	card, etag, err := h.anon.Card(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := skillIDs(card); got != "knowledge-search" {
		t.Fatalf("skills with writes off: %s", got)
	}
	on := start(t, nil)
	_, etagOn, _ := on.anon.Card(context.Background())
	if etag == etagOn {
		t.Fatal("the two cards share an ETag")
	}
	_, c := h.agent("alice")
	before := h.digest()
	_, err = c.SendMessage(context.Background(), askReq("m1", "anyone?", nil))
	var ce *client.Error
	if !errors.As(err, &ce) || ce.StatusCode != 400 || ce.Reason != "UNSUPPORTED_OPERATION" || !strings.Contains(ce.Message, "disabled") {
		t.Fatalf("ask with writes off: %v", err)
	}
	if h.digest() != before {
		t.Fatal("a refused ask changed the store")
	}
}

func TestTokenLifecycle(t *testing.T) {
	h := start(t, nil)
	ctx := context.Background()
	a, c := h.agent("alice")
	me, err := c.Whoami(ctx)
	if err != nil || me.ID != a.ID || me.Name != "alice" || strings.Join(me.Scopes, ",") != "read,post" {
		t.Fatalf("whoami: %+v %v", me, err)
	}
	rot, err := h.admin.RotateAgent(ctx, a.ID, 0)
	if err != nil || rot.ID != a.ID || rot.Token == a.Token {
		t.Fatalf("rotate: %+v %v", rot, err)
	}
	me, err = c.WithToken(rot.Token).Whoami(ctx)
	if err != nil || me.ID != a.ID {
		t.Fatalf("whoami with the new token: %+v %v", me, err)
	}
	resp, body := h.raw("GET", "/api/v1/whoami", map[string]string{"Authorization": "Bearer " + a.Token}, "")
	if resp.StatusCode != 401 || reason(body) != "UNAUTHENTICATED" {
		t.Fatalf("old token: %d %s", resp.StatusCode, body)
	}
	if got := resp.Header.Get("WWW-Authenticate"); !strings.HasPrefix(got, `Bearer realm="kfa", error="invalid_token"`) {
		t.Fatalf("challenge: %q", got)
	}
	if _, err := h.admin.RevokeAgent(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	resp, body = h.raw("GET", "/api/v1/whoami", map[string]string{"Authorization": "Bearer " + rot.Token}, "")
	if resp.StatusCode != 401 || reason(body) != "UNAUTHENTICATED" {
		t.Fatalf("revoked token: %d %s", resp.StatusCode, body)
	}
	page, err := h.admin.Agents(ctx, 0, "")
	if err != nil || len(page.Agents) != 1 || page.Agents[0].DisabledAt == "" {
		t.Fatalf("agents after revoke: %+v %v", page, err)
	}
	// Tokens never reach the log.
	for _, tok := range []string{a.Token, rot.Token} {
		if strings.Contains(h.logBuf.String(), tok) {
			t.Fatal("a token was logged")
		}
	}
}

func TestInsufficientScope(t *testing.T) {
	h := start(t, nil)
	_, reader := h.agent("reader", "read")
	_, err := reader.SendMessage(context.Background(), askReq("m1", "can I ask?", nil))
	var ce *client.Error
	if !errors.As(err, &ce) || ce.StatusCode != 403 || ce.Reason != "INSUFFICIENT_SCOPE" {
		t.Fatalf("ask with read scope: %v", err)
	}
	resp, _ := h.raw("POST", "/a2a/v1/message:send", a2aHeaders(readerToken(t, h)), mustJSON(askReq("m2", "q", nil)))
	if got := resp.Header.Get("WWW-Authenticate"); got != `Bearer realm="kfa", error="insufficient_scope", scope="post"` {
		t.Fatalf("challenge: %q", got)
	}
}

func readerToken(t *testing.T, h *harness) string {
	a, _ := h.agent("reader2", "read")
	return a.Token
}

func TestHealth(t *testing.T) {
	h := start(t, nil)
	for _, p := range []string{"/healthz", "/readyz"} {
		resp, body := h.raw("GET", p, nil, "")
		if resp.StatusCode != 200 || !strings.Contains(string(body), `"status"`) {
			t.Fatalf("%s: %d %s", p, resp.StatusCode, body)
		}
	}
	if resp, _ := h.raw("GET", "/healthz", nil, ""); resp.Header.Get("X-Request-Id") == "" {
		t.Fatal("no X-Request-Id")
	}
	resp, _ := h.raw("GET", "/healthz", map[string]string{"X-Request-Id": "trace-abc.123"}, "")
	if resp.Header.Get("X-Request-Id") != "trace-abc.123" {
		t.Fatal("a plain client request id is kept")
	}
	resp, _ = h.raw("GET", "/healthz", map[string]string{"X-Request-Id": "bad id\"<script>"}, "")
	if got := resp.Header.Get("X-Request-Id"); got == "" || strings.ContainsAny(got, " \"<") {
		t.Fatalf("an unsafe request id was echoed: %q", got)
	}
}
