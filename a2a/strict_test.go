package a2a

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

// threePasses is what Decode replaces: CheckJSON, CheckFields, then
// json.Unmarshal.
func threePasses(b []byte, v any) error {
	if err := CheckJSON(b); err != nil {
		return err
	}
	if err := CheckFields(b, v); err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// errClass names the kind of a decode error, which Decode must share
// with the three passes (the paths of type errors differ on purpose: the
// passes name Go's embedded shapes, message.messagePlain.role).
func errClass(err error) string {
	var (
		se *SyntaxError
		sh *ShapeError
		fe *FieldError
		te *json.UnmarshalTypeError
		be base64.CorruptInputError
	)
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &se):
		return "syntax"
	case errors.As(err, &sh):
		return "shape: " + sh.Msg
	case errors.As(err, &fe):
		return "field " + fe.Field
	case errors.As(err, &te):
		return "type " + te.Value + " into " + te.Type.Kind().String()
	case errors.As(err, &be):
		return "base64"
	}
	return "other: " + err.Error()
}

// loose is a target of every kind Decode handles beyond the A2A types.
type loose struct {
	S   string            `json:"s"`
	I   int               `json:"i"`
	I8  int8              `json:"i8"`
	U   uint16            `json:"u"`
	F   float64           `json:"f"`
	F32 float32           `json:"f32"`
	B   bool              `json:"b"`
	P   *int              `json:"p"`
	Any any               `json:"any"`
	M   map[string]int    `json:"m"`
	MA  map[string]any    `json:"ma"`
	L   []string          `json:"l"`
	Raw json.RawMessage   `json:"raw"`
	Bs  []byte            `json:"bs"`
	N   json.Number       `json:"n"`
	In  *loose            `json:"in"`
	R   map[string]string `json:"r"`
	Embedded
}

// Embedded is promoted into loose.
type Embedded struct {
	E    string `json:"e"`
	Deep int    `json:"deep"`
}

// decodeCases are bodies for the comparison of Decode with the three
// passes.
var decodeCases = []string{
	`{}`, `[]`, `null`, `"x"`, `5`, ``, ` `, `{`, `{"a":1`, `{"a":1}x`, `{"a" 1}`, `{"a":1,}`, `{,}`, `[1,]`,
	`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"},{"data":{"action":"ask","question":"q?"},"mediaType":"application/json"}],"contextId":"c","metadata":{"k":[1,2,{"z":null}]}},"configuration":{"returnImmediately":true,"historyLength":3,"acceptedOutputModes":["text/plain"]},"metadata":{"skill":"ask-network"},"tenant":"t"}`,
	`{"message":{"message_id":"m","context_id":"c","task_id":"t","reference_task_ids":["a"],"role":"ROLE_USER","parts":[{"text":"hi","media_type":"text/plain"}]},"configuration":{"return_immediately":true,"history_length":2,"accepted_output_modes":["x"],"task_push_notification_config":{"url":"https://x"}}}`,
	`{"message":{"messageId":"m","message_id":"n"}}`,
	`{"message":{"MESSAGEID":"m"}}`, `{"message":{"parts":[{"TEXT":"x"}]}}`, `{"Message":{}}`, `{"message":{"meſſageId":"m"}}`,
	`{"message":{"role":5}}`, `{"message":{"parts":[{"text":5}]}}`, `{"message":"x"}`, `{"message":[1]}`, `{"message":{"parts":{"a":1}}}`,
	`{"configuration":{"historyLength":"x"}}`, `{"configuration":{"historyLength":1e99}}`, `{"configuration":{"historyLength":1.5}}`,
	`{"configuration":{"historyLength":2147483648}}`, `{"configuration":{"historyLength":-3}}`, `{"configuration":{"returnImmediately":"yes"}}`,
	`{"message":{"parts":[{"raw":"aGVsbG8="}]}}`, `{"message":{"parts":[{"raw":"!!"}]}}`, `{"message":{"parts":[{"raw":5}]}}`,
	`{"message":{"parts":[{"data":null,"metadata":null}]}}`, `{"message":null,"configuration":null,"metadata":null}`,
	`{"a":1,"a":2}`, `{"a":1,"A":2}`, `{"k":1,"\u212a":2}`, `{"a":1,"\u0061":2}`, `{"x":{"y":{"y":1,"y":2}}}`,
	`{"message":{"messageId":"a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00\ud800x\udc00"}}`,
	`{"message":{"messageId":"\ud83d"}}`, `{"message":{"messageId":"\ud83d\u0041"}}`, `{"message":{"messageId":"\u"}}`, `{"message":{"messageId":"\x"}}`,
	"{\"message\":{\"messageId\":\"\xff\"}}", "{\"message\":{\"messageId\":\"a\x01\"}}", `{"tenant":[1]}`, `{"tenant":{"a":[]}}`,
	strings.Repeat(`[`, 70) + strings.Repeat(`]`, 70), `{"metadata":` + strings.Repeat(`{"a":`, 70) + `1` + strings.Repeat(`}`, 70) + `}`,
	`{"s":"x","i":-7,"i8":127,"u":65535,"f":1.5e3,"f32":3.25,"b":true,"p":4,"any":{"a":[1,"x",true,null,{"b":2.5}]},"m":{"x":1},"ma":{"q":[]},"l":[],"raw":[1, 2],"bs":"AQI=","n":12.50,"in":{"s":"inner","in":null},"r":{},"e":"promoted","deep":3}`,
	`{"i8":128}`, `{"u":-1}`, `{"u":65536}`, `{"f32":1e39}`, `{"i":1.0}`, `{"i":"1"}`, `{"b":1}`, `{"s":true}`, `{"m":{"x":"y"}}`, `{"l":"x"}`,
	`{"l":[1]}`, `{"m":[1]}`, `{"any":-0}`, `{"n":"1"}`, `{"p":null}`, `{"in":{"S":"x"}}`, `{"E":"x"}`, `{"s":"x","i":"bad","S":"y"}`,
	`{"i":"bad","x":[}`, `{"S":1,"a":1,"a":2}`, `{"l":["a",1,"b"]}`, `{"raw":nul}`, `{"raw":tru}`, `{"i":01}`, `{"i":-}`, `{"i":1.}`, `{"i":1e}`,
	`{"any":1e400}`, `{"f":1e400}`,
}

// TestDecodeMatchesThreePasses: Decode accepts and refuses what CheckJSON,
// CheckFields and json.Unmarshal together do, for the same reason, and
// decodes the same values.
func TestDecodeMatchesThreePasses(t *testing.T) {
	targets := []func() any{
		func() any { return new(SendMessageRequest) },
		func() any { return new(CancelTaskRequest) },
		func() any { return new(TaskPushNotificationConfig) },
		func() any { return new(loose) },
		func() any { return new(map[string]json.RawMessage) },
		func() any { return new(any) },
	}
	for _, body := range decodeCases {
		for _, target := range targets {
			compareDecode(t, []byte(body), target)
		}
	}
}

func compareDecode(t *testing.T, body []byte, target func() any) {
	t.Helper()
	want, got := target(), target()
	wantErr, gotErr := threePasses(body, want), Decode(body, got)
	if errClass(gotErr) != errClass(wantErr) {
		t.Errorf("%T %q: Decode: %v (%s), the three passes: %v (%s)", got, body, gotErr, errClass(gotErr), wantErr, errClass(wantErr))
		return
	}
	if wantErr == nil && !reflect.DeepEqual(got, want) {
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(want)
		t.Errorf("%T %q: Decode made %s, json.Unmarshal %s", got, body, gb, wb)
	}
}

// TestDecodeTypeErrorPaths: a value that does not fit is named by its
// path in the body, indices included.
func TestDecodeTypeErrorPaths(t *testing.T) {
	for _, tc := range []struct{ body, path string }{
		{`{"message":{"role":5}}`, "message.role"},
		{`{"message":{"parts":[{"text":"a"},{"text":5}]}}`, "message.parts[1].text"},
		{`{"configuration":{"history_length":"x"}}`, "configuration.history_length"},
		{`{"message":"x"}`, "message"},
	} {
		var req SendMessageRequest
		var te *json.UnmarshalTypeError
		if err := Decode([]byte(tc.body), &req); !errors.As(err, &te) || te.Field != tc.path {
			t.Errorf("%s: %v, want a type error at %s", tc.body, err, tc.path)
		}
	}
}

func FuzzDecode(f *testing.F) {
	for _, c := range decodeCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, target := range []func() any{
			func() any { return new(SendMessageRequest) },
			func() any { return new(loose) },
			func() any { return new(any) },
		} {
			compareDecode(t, body, target)
		}
	})
}

// TestManyKeysCostLinearTime: an object of many keys (the worst a body
// can hold) costs time linear in its keys, checked and decoded: at 80,000
// keys, within a small factor of what encoding/json takes to read the
// same body into a map (keys compared one by one cost thousands of times
// that). The factor is measured in one run, so the machine's load cancels.
func TestManyKeysCostLinearTime(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"metadata":{`)
	for i := range 80_000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%dX":%d`, i, i)
	}
	b.WriteString(`}}`)
	body := []byte(b.String())
	best := func(fn func() error) time.Duration {
		d := time.Duration(math.MaxInt64)
		for range 3 {
			start := time.Now()
			if err := fn(); err != nil {
				t.Fatal(err)
			}
			d = min(d, time.Since(start))
		}
		return d
	}
	base := best(func() error { var m map[string]any; return json.Unmarshal(body, &m) })
	ours := best(func() error {
		var req SendMessageRequest
		if err := Decode(body, &req); err != nil {
			return err
		}
		var m map[string]any
		if err := Decode(body, &m); err != nil {
			return err
		}
		return CheckJSON(body)
	})
	if ours > 30*base {
		t.Fatalf("80,000 keys: %v, against encoding/json's %v (%.0fx): not linear", ours, base, float64(ours)/float64(base))
	}
}
