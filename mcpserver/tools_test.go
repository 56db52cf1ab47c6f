package mcpserver

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/knowledge"
)

// TestTools: exactly the four tools, each read-only with a title and an
// input schema that refuses unknown arguments and bounds what it takes.
func TestTools(t *testing.T) {
	defs, err := Tools()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range defs {
		names = append(names, d.Name)
		if d.Title == "" || d.Description == "" || d.Annotations == nil || !d.Annotations.ReadOnlyHint {
			t.Errorf("%s: title %q, annotations %+v", d.Name, d.Title, d.Annotations)
		}
		in, ok := d.InputSchema.(*jsonschema.Schema)
		if !ok || in.Type != "object" || in.AdditionalProperties == nil {
			t.Errorf("%s: input schema %+v", d.Name, d.InputSchema)
		}
		if d.OutputSchema == nil {
			t.Errorf("%s: no output schema", d.Name)
		}
		// One type per property: a type array (["null","array"]) is what
		// single-type schema dialects cannot take.
		if b, _ := json.Marshal(d.OutputSchema); strings.Contains(string(b), `"type":[`) {
			t.Errorf("%s: an output schema with a type array: %s", d.Name, b)
		}
		for name, p := range in.Properties {
			if p.Type == "string" && p.MaxLength == nil {
				t.Errorf("%s.%s: a string without maxLength", d.Name, name)
			}
			if (p.Type == "integer" || p.Type == "number") && (p.Minimum == nil || p.Maximum == nil) {
				t.Errorf("%s.%s: a number without bounds", d.Name, name)
			}
		}
	}
	if !slices.Equal(names, ToolNames) {
		t.Fatalf("tools %v, want %v", names, ToolNames)
	}
	b, err := json.Marshal(defs[0].InputSchema)
	if err != nil {
		t.Fatal(err)
	}
	var search struct {
		Required   []string `json:"required"`
		Properties map[string]struct {
			Default json.RawMessage `json:"default"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(b, &search); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(search.Required, []string{"query"}) || string(search.Properties["limit"].Default) != "3" {
		t.Fatalf("search input schema: %s", b)
	}
}

func TestInstructions(t *testing.T) {
	on, off := Instructions("https://kfa.example", true), Instructions("https://kfa.example", false)
	for _, tc := range []struct {
		name, text, want string
		present          bool
	}{
		{"card when asks are on", on, "https://kfa.example/.well-known/agent-card.json", true},
		{"ask-network when asks are on", on, "ask-network", true},
		{"no ask-network when off", off, "ask-network", false},
		{"untrusted data", off, "untrusted public data", true},
	} {
		if got := strings.Contains(tc.text, tc.want); got != tc.present {
			t.Errorf("%s: contains %q = %v", tc.name, tc.want, got)
		}
	}
}

// TestOutputsMatchSchemas: what the handlers answer fits the output
// schemas tools/list shows (the handlers encode outputs themselves, so
// nothing checks this at run time).
func TestOutputsMatchSchemas(t *testing.T) {
	defs, err := Tools()
	if err != nil {
		t.Fatal(err)
	}
	n := 2
	outputs := map[string][]any{
		ToolSearch: {
			SearchOutput{Results: []SearchResult{}},
			SearchOutput{Results: []SearchResult{
				{ID: "r", Title: "T", URL: "http://kfa.test/records/r", Snippet: "s", Source: SourceRecord, Score: 1.5,
					Kind: "fix", Product: "p", Environment: "e", SourceURL: "https://example.com", UpdatedAt: "2026-12-02T10:30:00.123Z"},
				{ID: "01JD0000000000000000000000", Title: "Q", URL: "http://kfa.test/discussions/01JD0000000000000000000000",
					Snippet: "a", Source: SourceDiscussion, Status: "answered", ReplyCount: &n, CreatedAt: "2026-12-02T10:30:00.123Z"},
			}},
		},
		ToolFetch: {
			FetchOutput{ID: "r", Title: "T", Text: "body", URL: "u", Metadata: FetchMetadata{Source: SourceRecord, Tags: []string{"a"}}},
			FetchOutput{ID: "d", Title: "Q", Text: "q", URL: "u", Metadata: FetchMetadata{Source: SourceDiscussion, ReplyCount: &n, ShownReplies: &n}},
		},
		ToolGetChanges: {
			ChangesOutput{Changes: []Change{}, NextCursor: EncodeCursor(knowledge.Position{})},
			ChangesOutput{Changes: []Change{{ID: "r", Op: "upsert", UpdatedAt: "t", Cursor: EncodeCursor(knowledge.Position{At: changelog.Position{Seq: 1}, Epoch: "0123abcd"})}}, NextCursor: EncodeCursor(knowledge.Position{At: changelog.Position{Tx: 7, Seq: 1}, Trimmed: changelog.Position{Seq: 1}, Epoch: "0123abcd"}), HasMore: true},
		},
		ToolWhoami: {WhoamiOutput{}, WhoamiOutput{Authenticated: true, AgentID: "a", Name: "n", Scopes: []string{"read"}}},
	}
	for _, d := range defs {
		rs, err := d.OutputSchema.(*jsonschema.Schema).Resolve(nil)
		if err != nil {
			t.Fatal(err)
		}
		for i, out := range outputs[d.Name] {
			b, _ := json.Marshal(out)
			var v any
			if err := json.Unmarshal(b, &v); err != nil {
				t.Fatal(err)
			}
			if err := rs.Validate(v); err != nil {
				t.Errorf("%s output %d %s: %v", d.Name, i, b, err)
			}
		}
	}
}
