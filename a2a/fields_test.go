package a2a

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestCheckFields(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		path string // of the refused key; "" when accepted
	}{
		{"exact names", `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x","mediaType":"text/plain"}]},"configuration":{"returnImmediately":true}}`, ""},
		{"ProtoJSON snake_case names", `{"message":{"message_id":"m","context_id":"c","parts":[{"data":{},"media_type":"application/json"}]},"configuration":{"return_immediately":true,"history_length":1}}`, ""},
		{"unknown keys are the decoder's to ignore", `{"message":{"messageId":"m","extra":{"MessageId":1}},"other":1}`, ""},
		{"free-form objects are not fields", `{"message":{"messageId":"m","metadata":{"MESSAGEID":1,"Skill":"x"},"parts":[{"data":{"QUERY":"x"}}]},"metadata":{"ROLE":1}}`, ""},
		{"upper case", `{"message":{"MESSAGEID":"m"}}`, "message.MESSAGEID"},
		{"one letter", `{"message":{"messageID":"m"}}`, "message.messageID"},
		{"long s", `{"message":{"meſſageId":"m"}}`, "message.meſſageId"},
		{"Kelvin sign", `{"configuration":{"\u212a":1},"message":{"parts":[{"\u212aind":"x"}]}}`, ""},
		{"a top-level field", `{"Message":{}}`, "Message"},
		{"in an array", `{"message":{"parts":[{"text":"a"},{"TEXT":"b"}]}}`, "message.parts[1].TEXT"},
		{"a snake_case name in another case", `{"configuration":{"Return_Immediately":true}}`, "configuration.Return_Immediately"},
		{"a field of an embedded shape", `{"configuration":{"ACCEPTEDOUTPUTMODES":[]}}`, "configuration.ACCEPTEDOUTPUTMODES"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var req SendMessageRequest
			err := CheckFields([]byte(tc.in), &req)
			var fe *FieldError
			switch {
			case tc.path == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.path != "" && (!errors.As(err, &fe) || fe.Path != tc.path):
				t.Fatalf("%v, want the key at %s refused", err, tc.path)
			}
			if tc.path == "" {
				if err := json.Unmarshal([]byte(tc.in), &req); err != nil {
					t.Fatalf("the accepted JSON does not decode: %v", err)
				}
			}
		})
	}
}

func TestCheckFieldsOtherShapes(t *testing.T) {
	type inner struct {
		Name string `json:"name"`
		Skip string `json:"-"`
		Tags map[string]struct {
			Level int `json:"level"`
		} `json:"tags"`
	}
	type outer struct {
		inner
		ID    string `json:"id"`
		Items []inner
		Ptr   *inner `json:"ptr,omitempty"`
		Raw   json.RawMessage
	}
	for in, path := range map[string]string{
		`{"name":"x","id":"y","Items":[{"name":"z"}],"ptr":{"name":"p"},"Raw":{"NAME":1},"-":1}`: "",
		`{"NAME":"x"}`:                       "NAME",
		`{"Id":"y"}`:                         "Id",
		`{"items":[]}`:                       "items",
		`{"Items":[{"Name":"z"}]}`:           "Items[0].Name",
		`{"ptr":{"tags":{"a":{"LEVEL":1}}}}`: "ptr.tags.a.LEVEL",
		`{"raw":{}}`:                         "raw",
	} {
		var v outer
		err := CheckFields([]byte(in), &v)
		var fe *FieldError
		if path == "" && err != nil || path != "" && (!errors.As(err, &fe) || fe.Path != path) {
			t.Errorf("%s: %v, want %q", in, err, path)
		}
	}
}

func FuzzCheckFields(f *testing.F) {
	for _, s := range []string{`{"message":{"messageId":"m","parts":[{"text":"x"}]}}`, `{"message":{"MESSAGEID":"m"}}`,
		`{"configuration":{"return_immediately":true}}`, `[]`, `{"message":[1,{"a":[]}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if CheckJSON(b) != nil {
			return
		}
		var req SendMessageRequest
		if err := CheckFields(b, &req); err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("%q: %v is not a FieldError", b, err)
			}
		}
	})
}
