package mcpserver

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestArgs: every tool's every argument class (wrong JSON type, range or
// length, unknown argument, missing required, arguments that are not an
// object) gets a tool error worded like the A2A ones; a duplicate key or
// a known name in another case (ASCII or Unicode folding) is invalid
// params naming the key; good arguments come out as the input type reads
// them.
func TestArgs(t *testing.T) {
	defs, err := Tools()
	if err != nil {
		t.Fatal(err)
	}
	specs := map[string]*args{}
	for _, d := range defs {
		if specs[d.Name], err = newArgs(d.Name, d.InputSchema.(*jsonschema.Schema)); err != nil {
			t.Fatal(err)
		}
	}
	long := func(n int) string { return `"` + strings.Repeat("é", n) + `"` }
	const searchTakes = "(search takes query, limit, kind, product, environment, minScore, minTrust, minReputation)"
	tests := []struct {
		name, tool, args string
		want             string // the checked arguments; empty when refused
		tool_err         string // the whole tool error
		rpc_err          string // the invalid params message
	}{
		// search
		{name: "search", tool: ToolSearch, args: `{"query":"x","limit":2,"kind":"fix","product":"p","environment":"e"}`,
			want: `{"environment":"e","kind":"fix","limit":2,"product":"p","query":"x"}`},
		{name: "an integer written as a float", tool: ToolSearch, args: `{"query":"x","limit":2.0}`, want: `{"limit":2,"query":"x"}`},
		{name: "an integer with an exponent", tool: ToolSearch, args: `{"query":"x","limit":5e0}`, want: `{"limit":5,"query":"x"}`},
		{name: "no arguments", tool: ToolSearch, args: ``, tool_err: "query: is required"},
		{name: "null arguments", tool: ToolSearch, args: `null`, tool_err: "query: is required"},
		{name: "query missing", tool: ToolSearch, args: `{}`, tool_err: "query: is required"},
		{name: "query a number", tool: ToolSearch, args: `{"query":42}`, tool_err: "query: must be a string of 1 to 1000 characters"},
		{name: "query null", tool: ToolSearch, args: `{"query":null}`, tool_err: "query: must be a string of 1 to 1000 characters"},
		{name: "query an object", tool: ToolSearch, args: `{"query":{"a":1}}`, tool_err: "query: must be a string of 1 to 1000 characters"},
		{name: "query empty", tool: ToolSearch, args: `{"query":""}`, tool_err: "query: must not be empty"},
		{name: "query too long", tool: ToolSearch, args: `{"query":` + long(1001) + `}`, tool_err: "query: 1001 characters, at most 1000"},
		{name: "query as long as allowed", tool: ToolSearch, args: `{"query":` + long(1000) + `}`, want: `{"query":` + long(1000) + `}`},
		{name: "trust filters", tool: ToolSearch, args: `{"query":"x","minScore":2,"minTrust":0.5,"minReputation":-3}`,
			want: `{"minReputation":-3,"minScore":2,"minTrust":0.5,"query":"x"}`},
		{name: "minTrust a string", tool: ToolSearch, args: `{"query":"x","minTrust":"0.5"}`,
			tool_err: "minTrust: must be a number from -1e+09 to 1e+09"},
		{name: "minTrust past its bound", tool: ToolSearch, args: `{"query":"x","minTrust":1e300}`,
			tool_err: "minTrust: must be a number from -1e+09 to 1e+09"},
		{name: "minScore a fraction", tool: ToolSearch, args: `{"query":"x","minScore":0.5}`,
			tool_err: "minScore: must be an integer from -1e+09 to 1e+09"},
		{name: "limit 9", tool: ToolSearch, args: `{"query":"x","limit":9}`, tool_err: "limit: must be an integer from 1 to 5"},
		{name: "limit 0", tool: ToolSearch, args: `{"query":"x","limit":0}`, tool_err: "limit: must be an integer from 1 to 5"},
		{name: "limit negative", tool: ToolSearch, args: `{"query":"x","limit":-1}`, tool_err: "limit: must be an integer from 1 to 5"},
		{name: "limit a string", tool: ToolSearch, args: `{"query":"x","limit":"3"}`, tool_err: "limit: must be an integer from 1 to 5"},
		{name: "limit a fraction", tool: ToolSearch, args: `{"query":"x","limit":1.5}`, tool_err: "limit: must be an integer from 1 to 5"},
		{name: "limit null", tool: ToolSearch, args: `{"query":"x","limit":null}`, tool_err: "limit: must be an integer from 1 to 5"},
		{name: "limit a boolean", tool: ToolSearch, args: `{"query":"x","limit":true}`, tool_err: "limit: must be an integer from 1 to 5"},
		{name: "limit out of float range", tool: ToolSearch, args: `{"query":"x","limit":1e400}`, tool_err: "limit: must be an integer from 1 to 5"},
		{name: "a filter too long", tool: ToolSearch, args: `{"query":"x","kind":` + long(65) + `}`, tool_err: "kind: 65 characters, at most 64"},
		{name: "a filter of the wrong type", tool: ToolSearch, args: `{"query":"x","product":["a"]}`, tool_err: "product: must be a string of at most 64 characters"},
		{name: "an empty filter", tool: ToolSearch, args: `{"query":"x","environment":""}`, want: `{"environment":"","query":"x"}`},
		{name: "an unknown argument", tool: ToolSearch, args: `{"query":"x","action":"ask"}`, tool_err: "action: unknown argument " + searchTakes},
		{name: "every problem at once", tool: ToolSearch, args: `{"limit":9,"zz":1}`,
			tool_err: "limit: must be an integer from 1 to 5; zz: unknown argument " + searchTakes + "; query: is required"},
		{name: "arguments an array", tool: ToolSearch, args: `["x"]`, tool_err: "arguments: must be a JSON object " + searchTakes},
		{name: "arguments a string", tool: ToolSearch, args: `"x"`, tool_err: "arguments: must be a JSON object " + searchTakes},
		{name: "Query", tool: ToolSearch, args: `{"Query":"x"}`,
			rpc_err: `params.arguments: "Query" is not an argument of search: names are case-sensitive (did you mean "query"?)`},
		{name: "query and QUERY", tool: ToolSearch, args: `{"query":"x","QUERY":"y"}`,
			rpc_err: `params.arguments: "QUERY" is not an argument of search: names are case-sensitive (did you mean "query"?)`},
		{name: "kind with a Kelvin sign", tool: ToolSearch, args: `{"query":"x","\u212aind":"fix"}`,
			rpc_err: `params.arguments: "\u212aind" is not an argument of search: names are case-sensitive (did you mean "kind"?)`},
		{name: "a duplicate key", tool: ToolSearch, args: `{"query":"x","query":"y"}`, rpc_err: `params.arguments: duplicate key "query"`},
		// fetch
		{name: "fetch", tool: ToolFetch, args: `{"id":"abc"}`, want: `{"id":"abc"}`},
		{name: "fetch without id", tool: ToolFetch, args: `{}`, tool_err: "id: is required"},
		{name: "fetch an empty id", tool: ToolFetch, args: `{"id":""}`, tool_err: "id: must not be empty"},
		{name: "fetch an id too long", tool: ToolFetch, args: `{"id":` + long(129) + `}`, tool_err: "id: 129 characters, at most 128"},
		{name: "fetch a numeric id", tool: ToolFetch, args: `{"id":5}`, tool_err: "id: must be a string of 1 to 128 characters"},
		{name: "fetch an unknown argument", tool: ToolFetch, args: `{"id":"a","full":true}`, tool_err: "full: unknown argument (fetch takes id)"},
		{name: "fetch ID", tool: ToolFetch, args: `{"ID":"a"}`, rpc_err: `params.arguments: "ID" is not an argument of fetch: names are case-sensitive (did you mean "id"?)`},
		// get_changes
		{name: "get_changes", tool: ToolGetChanges, args: `{"cursor":"AAAAAAAAAAE","limit":500}`, want: `{"cursor":"AAAAAAAAAAE","limit":500}`},
		{name: "get_changes without arguments", tool: ToolGetChanges, args: `{}`, want: `{}`},
		{name: "a cursor of the wrong type", tool: ToolGetChanges, args: `{"cursor":5}`, tool_err: "cursor: must be a string of at most 64 characters"},
		{name: "a cursor too long", tool: ToolGetChanges, args: `{"cursor":` + long(65) + `}`, tool_err: "cursor: 65 characters, at most 64"},
		{name: "get_changes limit 501", tool: ToolGetChanges, args: `{"limit":501}`, tool_err: "limit: must be an integer from 1 to 500"},
		{name: "get_changes limit 0", tool: ToolGetChanges, args: `{"limit":0}`, tool_err: "limit: must be an integer from 1 to 500"},
		{name: "get_changes an unknown argument", tool: ToolGetChanges, args: `{"since":"x"}`, tool_err: "since: unknown argument (get_changes takes cursor, limit)"},
		{name: "cursor with a long s", tool: ToolGetChanges, args: `{"cur\u017for":"x"}`,
			rpc_err: `params.arguments: "cur\u017for" is not an argument of get_changes: names are case-sensitive (did you mean "cursor"?)`},
		// whoami
		{name: "whoami", tool: ToolWhoami, args: `{}`, want: `{}`},
		{name: "whoami null", tool: ToolWhoami, args: `null`, want: `{}`},
		{name: "whoami with an argument", tool: ToolWhoami, args: `{"token":"kfa_x"}`, tool_err: "token: unknown argument (whoami takes none)"},
		{name: "whoami an array", tool: ToolWhoami, args: `[]`, tool_err: "arguments: must be a JSON object ({}: whoami takes none)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := specs[tc.tool].check(json.RawMessage(tc.args))
			var we *jsonrpc.Error
			var te *toolError
			switch {
			case tc.want != "":
				if err != nil || string(got) != tc.want {
					t.Fatalf("check(%s) = %s, %v; want %s", tc.args, got, err, tc.want)
				}
			case tc.rpc_err != "":
				if !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams || we.Message != tc.rpc_err {
					t.Fatalf("check(%s) = %v; want invalid params %q", tc.args, err, tc.rpc_err)
				}
			default:
				if !errors.As(err, &te) || te.outcome != OutcomeInvalid || te.msg != tc.tool_err {
					t.Fatalf("check(%s) = %v; want the tool error %q", tc.args, err, tc.tool_err)
				}
			}
		})
	}
}

// TestArgsKnownKeywords: an input schema keyword the argument check does
// not know is refused when the tools are built, not left unchecked.
func TestArgsKnownKeywords(t *testing.T) {
	for _, tc := range []struct {
		name string
		prop *jsonschema.Schema
	}{
		{"an enum", &jsonschema.Schema{Type: "string", Enum: []any{"a"}}},
		{"a pattern", &jsonschema.Schema{Type: "string", Pattern: "^a$"}},
		{"a number's pattern", &jsonschema.Schema{Type: "number", Pattern: "^1$"}},
		{"a nullable string", &jsonschema.Schema{Types: []string{"null", "string"}}},
		{"an integer length", &jsonschema.Schema{Type: "integer", MaxLength: ptr(3)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &jsonschema.Schema{Type: "object", AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
				Properties: map[string]*jsonschema.Schema{"x": tc.prop}}
			if _, err := newArgs("t", s); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}
