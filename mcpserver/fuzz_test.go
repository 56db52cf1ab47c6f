package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// FuzzCheckMessage: whatever a client sends, CheckMessage answers it or
// passes it to the SDK, never panics; what it passes, the SDK reads; what
// it refuses, it answers with a JSON-RPC error response.
func FuzzCheckMessage(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"search","arguments":{"query":"x","query":"y"}}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":1,"METHOD":"x"}`, `{"jsonrpc":"2.0","id":1e300}`, `[]`, `null`, `{`, "\xff",
	} {
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, b []byte, batches bool) {
		e := CheckMessage(b, batches)
		if e == nil {
			if b = bytes.TrimSpace(b); b[0] != '[' {
				if _, err := jsonrpc.DecodeMessage(b); err != nil {
					t.Fatalf("passed %q, which the SDK refuses: %v", b, err)
				}
			}
			return
		}
		var resp struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   jsonrpc.Error   `json:"error"`
		}
		if err := json.Unmarshal(e.Response(), &resp); err != nil || resp.JSONRPC != "2.0" || resp.Error.Code == 0 || len(resp.ID) == 0 {
			t.Fatalf("refused %q with %s (%v)", b, e.Response(), err)
		}
	})
}

// FuzzArgs: search's argument check never panics, and what it accepts
// decodes into SearchInput within the schema's bounds.
func FuzzArgs(f *testing.F) {
	defs, err := Tools()
	if err != nil {
		f.Fatal(err)
	}
	spec, err := newArgs(ToolSearch, defs[0].InputSchema.(*jsonschema.Schema))
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{`{"query":"x","limit":2.0}`, `{"Query":"x"}`, `{"query":"x","limit":1e400}`, `[1]`, `{"query":"é","kind":""}`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		out, err := spec.check(b)
		var te *toolError
		var we *jsonrpc.Error
		switch {
		case err == nil:
		case errors.As(err, &te), errors.As(err, &we):
			return
		default:
			t.Fatalf("check(%q): %v", b, err)
		}
		var in SearchInput
		if err := json.Unmarshal(out, &in); err != nil {
			t.Fatalf("check(%q) = %s, which SearchInput does not take: %v", b, out, err)
		}
		if in.Query == "" || in.Limit < 0 || in.Limit > 5 {
			t.Fatalf("check(%q) accepted %+v", b, in)
		}
	})
}
