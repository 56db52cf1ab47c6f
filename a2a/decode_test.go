package a2a

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestCheckJSON(t *testing.T) {
	deep := strings.Repeat("[", MaxJSONDepth) + strings.Repeat("]", MaxJSONDepth)
	tooDeep := strings.Repeat("[", MaxJSONDepth+1) + strings.Repeat("]", MaxJSONDepth+1)
	for _, tc := range []struct {
		name  string
		in    string
		shape bool // a *ShapeError rather than a *SyntaxError
		ok    bool
	}{
		{name: "object", in: `{"a":1,"b":[true,false,null],"c":{"d":"e"}}`, ok: true},
		{name: "numbers", in: `[0,-1,1.5,1e9,-2.5E-3,0.0]`, ok: true},
		{name: "escapes", in: `{"a":"\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00"}`, ok: true},
		{name: "unicode", in: `{"q":"héllo 世界"}`, ok: true},
		{name: "surrounding space", in: " \n\t{}\r\n ", ok: true},
		{name: "max depth", in: deep, ok: true},
		{name: "empty", in: ``},
		{name: "only space", in: `   `},
		{name: "truncated object", in: `{"a":1`},
		{name: "truncated string", in: `{"a":"xyz`},
		{name: "trailing comma", in: `{"a":1,}`},
		{name: "trailing data", in: `{} {}`},
		{name: "single quotes", in: `{'a':1}`},
		{name: "bare word", in: `{"a":nope}`},
		{name: "leading zero", in: `[01]`},
		{name: "bad exponent", in: `[1e]`},
		{name: "dot without digits", in: `[1.]`},
		{name: "raw newline in string", in: "{\"a\":\"x\ny\"}"},
		{name: "NUL in string", in: "{\"a\":\"x\x00\"}"},
		{name: "bad escape", in: `{"a":"\x"}`},
		{name: "short unicode escape", in: `{"a":"\u12"}`},
		{name: "invalid UTF-8", in: "{\"a\":\"\xff\xfe\"}"},
		{name: "truncated UTF-8", in: "{\"a\":\"\xe4\xb8\"}"},
		{name: "key not string", in: `{1:2}`},
		{name: "missing colon", in: `{"a" 1}`},
		{name: "too deep", in: tooDeep, shape: true},
		{name: "duplicate key", in: `{"a":1,"a":2}`, shape: true},
		{name: "duplicate key escaped", in: `{"a":1,"\u0061":2}`, shape: true},
		{name: "duplicate nested key", in: `{"m":{"parts":[],"parts":[]}}`, shape: true},
		{name: "same key in sibling objects", in: `[{"a":1},{"a":2}]`, ok: true},
		// Keys encoding/json would read as one: a duplicate, whatever the case.
		{name: "keys differing in case", in: `{"messageId":"a","MESSAGEID":"b"}`, shape: true},
		{name: "keys differing in one letter's case", in: `{"body":"a","bodY":"b"}`, shape: true},
		{name: "long s folds to s", in: `{"messageId":"a","meſſageId":"b"}`, shape: true},
		{name: "Kelvin sign folds to k", in: `{"kind":"a","Kind":"b"}`, shape: true},
		{name: "nested keys differing in case", in: `{"m":{"parts":[],"PARTS":[]}}`, shape: true},
		{name: "different keys", in: `{"messageId":"a","message_id":"b","messageIds":"c"}`, ok: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckJSON([]byte(tc.in))
			if tc.ok {
				if err != nil {
					t.Fatalf("CheckJSON(%q) = %v, want nil", tc.in, err)
				}
				if !json.Valid([]byte(tc.in)) {
					t.Fatalf("test case is not valid JSON for encoding/json")
				}
				return
			}
			var se *SyntaxError
			var sh *ShapeError
			switch {
			case err == nil:
				t.Fatalf("CheckJSON(%q) = nil, want an error", tc.in)
			case tc.shape && !errors.As(err, &sh):
				t.Fatalf("CheckJSON(%q) = %v, want a ShapeError", tc.in, err)
			case !tc.shape && !errors.As(err, &se):
				t.Fatalf("CheckJSON(%q) = %v, want a SyntaxError", tc.in, err)
			}
		})
	}
}

func FuzzCheckJSON(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,2,{"b":null}]}`, `{"a":1,"a":2}`, "\xff", `[1e5,"\u00e9"]`, `{"message":{"parts":[{"text":"x"}]}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		err := CheckJSON(b)
		// Whatever CheckJSON accepts, encoding/json must accept too.
		if err == nil && !json.Valid(b) {
			t.Fatalf("CheckJSON accepted invalid JSON %q", b)
		}
		var se *SyntaxError
		if json.Valid(b) && errors.As(err, &se) && !strings.Contains(se.Msg, "UTF-8") && !strings.Contains(se.Msg, "escape") {
			t.Fatalf("CheckJSON rejected valid JSON %q: %v", b, err)
		}
	})
}

func TestMessageAcceptsSnakeCase(t *testing.T) {
	in := `{"message_id":"m1","context_id":"c1","task_id":"t1","role":"ROLE_USER",
		"reference_task_ids":["r1"],"parts":[{"text":"hi","media_type":"text/plain"}]}`
	var m Message
	if err := json.Unmarshal([]byte(in), &m); err != nil {
		t.Fatal(err)
	}
	if m.MessageID != "m1" || m.ContextID != "c1" || m.TaskID != "t1" || len(m.ReferenceTaskIDs) != 1 || m.Parts[0].MediaType != "text/plain" {
		t.Fatalf("snake_case fields lost: %+v", m)
	}
	// camelCase wins when both are given.
	var both Message
	if err := json.Unmarshal([]byte(`{"messageId":"camel","message_id":"snake","role":"ROLE_USER","parts":[]}`), &both); err != nil {
		t.Fatal(err)
	}
	if both.MessageID != "camel" {
		t.Fatalf("messageId = %q, want camel", both.MessageID)
	}
	var cfg SendMessageConfiguration
	if err := json.Unmarshal([]byte(`{"return_immediately":true,"history_length":3,"accepted_output_modes":["text/plain"]}`), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.ReturnImmediately == nil || !*cfg.ReturnImmediately || cfg.HistoryLength == nil || *cfg.HistoryLength != 3 || len(cfg.AcceptedOutputModes) != 1 {
		t.Fatalf("configuration snake_case: %+v", cfg)
	}
}

func TestNormalizeVersion(t *testing.T) {
	for in, want := range map[string]string{
		"": "0.3", " ": "0.3", "1.0": "1.0", "1.0.1": "1.0", "01.00": "1.0", "0.3": "0.3", "0.3.0": "0.3",
		"2.0": "2.0", "1": "1", "v1.0": "v1.0", "1.x": "1.x", "1..0": "1..0",
	} {
		if got := NormalizeVersion(in); got != want {
			t.Errorf("NormalizeVersion(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseTaskState(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want TaskState
		ok   bool
	}{
		{"TASK_STATE_WORKING", TaskStateWorking, true},
		{"task_state_completed", TaskStateCompleted, true},
		{"5", TaskStateCanceled, true},
		{"0", TaskStateUnspecified, true},
		{"9", "", false},
		{"-1", "", false},
		{"working", "", false},
		{"", "", false},
	} {
		got, ok := ParseTaskState(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseTaskState(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
	for _, s := range []TaskState{TaskStateCompleted, TaskStateFailed, TaskStateCanceled, TaskStateRejected} {
		if !s.Terminal() {
			t.Errorf("%s should be terminal", s)
		}
	}
	for _, s := range []TaskState{TaskStateWorking, TaskStateSubmitted, TaskStateInputRequired, TaskStateAuthRequired} {
		if s.Terminal() {
			t.Errorf("%s should not be terminal", s)
		}
	}
}

func TestCheckJSONNamesBothKeys(t *testing.T) {
	err := CheckJSON([]byte(`{"message":{"messageId":"a","MESSAGEID":"b"}}`))
	if err == nil || !strings.Contains(err.Error(), `duplicate key "MESSAGEID": it differs from "messageId" only in case`) {
		t.Fatalf("%v", err)
	}
}

// TestCheckJSONWorstShapes: the checker's work on the shapes that cost
// the most per byte. A body nested far past MaxJSONDepth is refused
// where the limit is crossed, having read nothing past it; a wide object
// costs a fixed amount per key, however many keys and however alike.
func TestCheckJSONWorstShapes(t *testing.T) {
	deep := strings.Repeat(`{"a":[`, 100_000)
	err := CheckJSON([]byte(deep))
	var se *ShapeError
	if !errors.As(err, &se) || se.Offset > 6*(MaxJSONDepth/2+1) {
		t.Fatalf("a body nested 200,000 deep: %v, want refused within the first %d levels", err, MaxJSONDepth)
	}
	wide := func(n int) []byte {
		var b strings.Builder
		b.WriteString("{")
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `"k%06d":[]`, i)
		}
		b.WriteString("}")
		return []byte(b.String())
	}
	small, large := wide(1000), wide(20_000)
	perKey := func(b []byte, n int) float64 {
		return testing.AllocsPerRun(3, func() {
			if err := CheckJSON(b); err != nil {
				t.Fatal(err)
			}
		}) / float64(n)
	}
	if a, b := perKey(small, 1000), perKey(large, 20_000); b > 2*a+1 {
		t.Fatalf("%.2f allocations a key for 20,000 keys, %.2f for 1,000: the work grows faster than the keys", b, a)
	}
}
