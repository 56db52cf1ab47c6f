package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// args checks one tool's arguments against its input schema and says
// what is wrong the way the A2A bindings do ("limit: must be an integer
// from 1 to 5"), for the model that reads it: never a schema validator's
// own words. It knows the few keywords kfa's input schemas use, and
// refuses a schema with any other (newArgs), so that a new constraint
// cannot go unchecked.
type args struct {
	tool     string
	names    []string // in the schema's order
	props    map[string]*jsonschema.Schema
	required map[string]bool
}

func newArgs(tool string, s *jsonschema.Schema) (*args, error) {
	if s.Type != "object" || s.AdditionalProperties == nil || s.AdditionalProperties.Not == nil {
		return nil, fmt.Errorf("mcpserver: tool %s: the input schema must be an object that refuses other properties", tool)
	}
	a := &args{tool: tool, props: s.Properties, required: map[string]bool{}}
	a.names = append(a.names, s.PropertyOrder...)
	for name := range s.Properties {
		if !slices.Contains(a.names, name) {
			a.names = append(a.names, name)
		}
	}
	for _, name := range s.Required {
		if s.Properties[name] == nil {
			return nil, fmt.Errorf("mcpserver: tool %s: required %q is not a property", tool, name)
		}
		a.required[name] = true
	}
	for name, p := range s.Properties {
		// Only what check knows how to check and to explain: a type,
		// string lengths, integer bounds.
		q := *p
		q.Type, q.Description, q.Default = "", "", nil
		switch p.Type {
		case "string":
			q.MinLength, q.MaxLength = nil, nil
		case "integer", "number":
			q.Minimum, q.Maximum = nil, nil
		default:
			return nil, fmt.Errorf("mcpserver: tool %s: argument %s: only strings, integers and numbers are checked", tool, name)
		}
		if b, err := json.Marshal(&q); err != nil || string(b) != "true" && string(b) != "{}" {
			return nil, fmt.Errorf("mcpserver: tool %s: argument %s: a schema keyword the argument check does not know (%s)", tool, name, b)
		}
	}
	return a, nil
}

// check reads raw arguments and returns them as the JSON object the tool's
// input type decodes: only known names, spelt exactly, integers written as
// integers. A duplicate key, or one that is a known name in another case,
// is refused as invalid params (a JSON-RPC error): two readers could take
// it for different things. Every other problem is a tool error listing all
// of them, for the model to correct its call.
func (a *args) check(raw json.RawMessage) ([]byte, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		raw = []byte("{}")
	}
	if raw[0] != '{' {
		return nil, toolErrorf(OutcomeInvalid, "arguments: must be a JSON object %s", a.example())
	}
	keys, values, err := members(raw)
	if err != nil {
		return nil, toolErrorf(OutcomeInvalid, "arguments: not valid JSON: %v", err)
	}
	seen := map[string]bool{}
	for _, k := range keys {
		if seen[k] {
			return nil, invalidParams("params.arguments: duplicate key %+q", k)
		}
		seen[k] = true
		if known, ok := foldMatch(k, a.names); ok {
			return nil, invalidParams("params.arguments: %+q is not an argument of %s: names are case-sensitive (did you mean %q?)", k, a.tool, known)
		}
	}
	var problems []string
	out := map[string]json.RawMessage{}
	for i, k := range keys {
		p := a.props[k]
		if p == nil {
			problems = append(problems, fmt.Sprintf("%s: unknown argument (%s)", k, a.takes()))
			continue
		}
		v, msg := checkValue(p, values[i])
		if msg != "" {
			problems = append(problems, k+": "+msg)
			continue
		}
		out[k] = v
	}
	for _, name := range a.names {
		if a.required[name] && !seen[name] {
			problems = append(problems, name+": is required")
		}
	}
	if len(problems) > 0 {
		return nil, toolErrorf(OutcomeInvalid, "%s", strings.Join(problems, "; "))
	}
	return json.Marshal(out)
}

// checkValue checks one argument's value, and writes an integer as one
// (2.0 and 2e0 are the integer 2 in JSON Schema, not in encoding/json).
func checkValue(p *jsonschema.Schema, v json.RawMessage) (json.RawMessage, string) {
	switch p.Type {
	case "string":
		var s string
		if v[0] != '"' || json.Unmarshal(v, &s) != nil {
			return nil, "must be a string" + bounds(p)
		}
		n := utf8.RuneCountInString(s)
		switch {
		case p.MinLength != nil && *p.MinLength > 0 && n == 0:
			return nil, "must not be empty"
		case p.MinLength != nil && n < *p.MinLength:
			return nil, fmt.Sprintf("%d characters, at least %d", n, *p.MinLength)
		case p.MaxLength != nil && n > *p.MaxLength:
			return nil, fmt.Sprintf("%d characters, at most %d", n, *p.MaxLength)
		}
		return v, ""
	case "integer":
		f, err := strconv.ParseFloat(string(v), 64)
		ok := err == nil && (v[0] == '-' || v[0] >= '0' && v[0] <= '9') && f == math.Trunc(f) && math.Abs(f) < 1<<53 &&
			(p.Minimum == nil || f >= *p.Minimum) && (p.Maximum == nil || f <= *p.Maximum)
		if !ok {
			return nil, "must be an integer" + bounds(p)
		}
		return json.RawMessage(strconv.FormatInt(int64(f), 10)), ""
	case "number":
		f, err := strconv.ParseFloat(string(v), 64)
		ok := err == nil && (v[0] == '-' || v[0] >= '0' && v[0] <= '9') && !math.IsInf(f, 0) &&
			(p.Minimum == nil || f >= *p.Minimum) && (p.Maximum == nil || f <= *p.Maximum)
		if !ok {
			return nil, "must be a number" + bounds(p)
		}
		return v, ""
	}
	return nil, "cannot be checked"
}

// bounds words a property's limits: " from 1 to 5", " of 1 to 1000
// characters", "".
func bounds(p *jsonschema.Schema) string {
	if (p.Type == "integer" || p.Type == "number") && p.Minimum != nil && p.Maximum != nil {
		return fmt.Sprintf(" from %v to %v", *p.Minimum, *p.Maximum)
	}
	if p.Type == "string" && p.MaxLength != nil {
		if p.MinLength != nil && *p.MinLength > 0 {
			return fmt.Sprintf(" of %d to %d characters", *p.MinLength, *p.MaxLength)
		}
		return fmt.Sprintf(" of at most %d characters", *p.MaxLength)
	}
	return ""
}

// takes says which arguments the tool takes.
func (a *args) takes() string {
	if len(a.names) == 0 {
		return a.tool + " takes none"
	}
	return a.tool + " takes " + strings.Join(a.names, ", ")
}

func (a *args) example() string {
	if len(a.names) == 0 {
		return "({}: " + a.takes() + ")"
	}
	return "(" + a.takes() + ")"
}

// members reads the keys of a JSON object, duplicates included (a map
// would keep only the last), with their values.
func members(b []byte) ([]string, []json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil {
		return nil, nil, err
	}
	var keys []string
	var values []json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		keys, values = append(keys, key), append(values, v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, err
	}
	return keys, values, nil
}

// invalidParams is a JSON-RPC invalid params error.
func invalidParams(format string, a ...any) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, a...)}
}
