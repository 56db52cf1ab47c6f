package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestErrorHeadersAlikeOnEveryBinding: an authentication failure and a
// limit carry the same WWW-Authenticate and Retry-After headers whichever
// binding refused them, because one function builds them.
func TestErrorHeadersAlikeOnEveryBinding(t *testing.T) {
	h := start(t, func(c *serverConfig) { c.AskRate = 1 })
	alice, _ := h.agent("alice")
	rest := func(token string, body string) http.Header {
		resp, _ := h.raw("POST", "/a2a/v1/message:send", a2aHeaders(token), body)
		return resp.Header
	}
	rpc := func(token, method string, params string) http.Header {
		resp, _ := h.raw("POST", "/a2a/jsonrpc", a2aHeaders(token),
			`{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":`+params+`}`)
		return resp.Header
	}
	ask := func(id string) string {
		return mustJSON(askReq(id, "Why does bbolt Open hang?", nil))
	}
	ask03 := func(id string) string {
		return `{"message":{"kind":"message","role":"user","messageId":"` + id +
			`","parts":[{"kind":"data","data":{"action":"ask","question":"Why does it hang?"}}]},"configuration":{"blocking":false}}`
	}
	// Unauthenticated: the same challenge, error_description included.
	want := rest("kfa_bad", ask("m0")).Get("WWW-Authenticate")
	if !strings.Contains(want, `error_description="`) {
		t.Fatalf("HTTP+JSON challenge: %q", want)
	}
	for name, got := range map[string]string{
		"JSON-RPC 1.0": rpc("kfa_bad", "SendMessage", ask("m0")).Get("WWW-Authenticate"),
		"JSON-RPC 0.3": rpc("kfa_bad", "message/send", ask03("m0")).Get("WWW-Authenticate"),
	} {
		if got != want {
			t.Errorf("%s challenge %q, HTTP+JSON sends %q", name, got, want)
		}
	}
	// Rate limited: one ask per minute, then each binding says when to retry.
	h.ask(h.anon.WithToken(alice.Token), "m1", "first")
	for name, hd := range map[string]http.Header{
		"HTTP+JSON":    rest(alice.Token, ask("m2")),
		"JSON-RPC 1.0": rpc(alice.Token, "SendMessage", ask("m3")),
		"JSON-RPC 0.3": rpc(alice.Token, "message/send", ask03("m4")),
	} {
		if hd.Get("Retry-After") == "" {
			t.Errorf("%s: a refused ask without Retry-After", name)
		}
	}
}

// TestDiscussionNotFoundAlike: the public API and the operator's API say
// "not found" about a discussion in the same words.
func TestDiscussionNotFoundAlike(t *testing.T) {
	h := start(t, nil)
	const id = "01JD0000000000000000000000"
	_, pub := h.raw("GET", "/api/v1/discussions/"+id, nil, "")
	_, err := h.admin.AdminDiscussion(bg(), id)
	var body struct {
		Error struct{ Message string } `json:"error"`
	}
	if e := json.Unmarshal(pub, &body); e != nil || err == nil {
		t.Fatalf("public %s, admin %v", pub, err)
	}
	if want := "discussion " + id + " not found"; body.Error.Message != want || !strings.Contains(err.Error(), want) {
		t.Fatalf("public says %q, admin says %q; both should say %q", body.Error.Message, err, want)
	}
}
