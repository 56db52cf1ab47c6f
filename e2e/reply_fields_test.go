package e2e

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestReplyUnknownFieldNamed: a reply body with a field other than body
// is refused with an error that names the field, and writes nothing.
func TestReplyUnknownFieldNamed(t *testing.T) {
	h := start(t, nil)
	_, ac := h.agent("alice")
	bob, _ := h.agent("bob")
	path := "/api/v1/discussions/" + discussionOf(t, h.ask(ac, "a1", "how do I rotate logs?")) + "/replies"
	before := h.digest()
	for _, tc := range []struct{ name, body, field string }{
		{"misspelt body", `{"bdy":"Use logrotate."}`, "bdy"},
		{"text instead of body", `{"text":"Use logrotate."}`, "text"},
		{"an extra field", `{"body":"Use logrotate.","authorId":"someone-else"}`, "authorId"},
		// Field names are matched exactly: encoding/json would take these
		// for body.
		{"body in another case", `{"Body":"Use logrotate."}`, "Body"},
		{"body in upper case", `{"BODY":"Use logrotate."}`, "BODY"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := h.raw("POST", path, a2aHeaders(bob.Token), tc.body)
			var e struct {
				Error struct {
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(body, &e); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != 400 || reason(body) != "INVALID_PARAMS" || !strings.HasPrefix(e.Error.Message, tc.field+": is not a field of a reply") {
				t.Fatalf("got %d %s: %s", resp.StatusCode, reason(body), body)
			}
			if strings.Contains(e.Error.Message, "Error:") || strings.Contains(e.Error.Message, "expected shape") {
				t.Fatalf("the message shows an internal error's text: %s", e.Error.Message)
			}
			if h.digest() != before {
				t.Fatal("the store changed")
			}
		})
	}
	if resp, body := h.raw("POST", path, a2aHeaders(bob.Token), `{"body":"Use logrotate."}`); resp.StatusCode != 201 {
		t.Fatalf("a reply with body: %d %s", resp.StatusCode, body)
	}
}
