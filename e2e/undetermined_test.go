package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/kfa-project/kfa/a2a"
)

// skillError is what a refused SendMessage says about the skills, in
// terms every binding shares.
type skillError struct {
	reason  string
	message string
	meta    map[string]string
}

// sendRaw sends req over one binding ("rest", "rpc" or "rpc03") and reads
// the error's reason, message and ErrorInfo metadata.
func sendRaw(t *testing.T, h *harness, binding string, req a2a.SendMessageRequest) skillError {
	t.Helper()
	var (
		resp *http.Response
		body []byte
	)
	switch binding {
	case "rest":
		resp, body = h.raw("POST", "/a2a/v1/message:send", a2aHeaders(""), mustJSON(req))
		var s struct {
			Error struct {
				Message string            `json:"message"`
				Details []json.RawMessage `json:"details"`
			} `json:"error"`
		}
		if err := json.Unmarshal(body, &s); err != nil || resp.StatusCode != 400 {
			t.Fatalf("rest: %d %s", resp.StatusCode, body)
		}
		return skillError{reason: reason(body), message: s.Error.Message, meta: errorInfoMeta(t, s.Error.Details)}
	case "rpc", "rpc03":
		method, params, hdr := "SendMessage", any(req), a2aHeaders("")
		if binding == "rpc03" {
			method, params = "message/send", toV03Params(req)
			delete(hdr, "A2A-Version")
		}
		resp, body = h.raw("POST", "/a2a/jsonrpc", hdr, mustJSON(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params}))
		var env struct {
			Error struct {
				Message string          `json:"message"`
				Data    json.RawMessage `json:"data"`
			} `json:"error"`
		}
		if err := json.Unmarshal(body, &env); err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", binding, resp.StatusCode, body)
		}
		if binding == "rpc03" {
			var d struct {
				Reason   string            `json:"reason"`
				Metadata map[string]string `json:"metadata"`
			}
			if err := json.Unmarshal(env.Error.Data, &d); err != nil {
				t.Fatalf("0.3 error data: %s", body)
			}
			return skillError{reason: d.Reason, message: env.Error.Message, meta: d.Metadata}
		}
		var details []json.RawMessage
		if err := json.Unmarshal(env.Error.Data, &details); err != nil {
			t.Fatalf("1.0 error data: %s", body)
		}
		var info struct {
			Reason string `json:"reason"`
		}
		if err := json.Unmarshal(details[0], &info); err != nil {
			t.Fatal(err)
		}
		return skillError{reason: info.Reason, message: env.Error.Message, meta: errorInfoMeta(t, details)}
	}
	t.Fatalf("unknown binding %s", binding)
	return skillError{}
}

func errorInfoMeta(t *testing.T, details []json.RawMessage) map[string]string {
	t.Helper()
	for _, d := range details {
		var info struct {
			Type     string            `json:"@type"`
			Metadata map[string]string `json:"metadata"`
		}
		if json.Unmarshal(d, &info) == nil && info.Type == a2a.TypeErrorInfo {
			return info.Metadata
		}
	}
	t.Fatal("no ErrorInfo detail")
	return nil
}

// TestUndeterminedSkill: a message that names no skill, or an unknown
// one, is refused alike on HTTP+JSON, JSON-RPC 1.0 and 0.3: the same
// reason, the same skill ids, and a one-line summary of each, in the
// message and in the ErrorInfo metadata.
func TestUndeterminedSkill(t *testing.T) {
	h := start(t, nil)
	card, _, err := h.anon.Card(bg())
	if err != nil {
		t.Fatal(err)
	}
	meta := func(s string) a2a.SendMessageRequest {
		r := textReq("u-2", "x")
		r.Message.Metadata = json.RawMessage(s)
		return r
	}
	for _, sc := range []struct {
		name string
		req  a2a.SendMessageRequest
		want string // a substring of the message
	}{
		{"data part naming no skill", dataReq("u-1", `{"topic":"bbolt"}`, false), "cannot tell which skill"},
		{"empty data part", dataReq("u-1", `{}`, false), "cannot tell which skill"},
		{"unknown skill", meta(`{"skill":"weather"}`), `unknown skill "weather"`},
	} {
		var first skillError
		for _, b := range []string{"rest", "rpc", "rpc03"} {
			got := sendRaw(t, h, b, sc.req)
			if got.reason != "INVALID_PARAMS" || !strings.Contains(got.message, sc.want) {
				t.Fatalf("%s over %s: %+v", sc.name, b, got)
			}
			if got.meta["availableSkills"] != skillIDs(card) {
				t.Fatalf("%s over %s: availableSkills %q, card has %s", sc.name, b, got.meta["availableSkills"], skillIDs(card))
			}
			for _, s := range card.Skills {
				line := got.meta["skill."+s.ID]
				if line == "" || strings.Contains(line, "\n") || !strings.Contains(got.message, s.ID+" - "+line) {
					t.Fatalf("%s over %s: skill %s has summary %q; message %q", sc.name, b, s.ID, line, got.message)
				}
			}
			if b == "rest" {
				first = got
			} else if mustJSON(got.meta) != mustJSON(first.meta) || got.message != first.message {
				t.Fatalf("%s: %s differs from HTTP+JSON:\n%+v\n%+v", sc.name, b, got, first)
			}
		}
	}
}
