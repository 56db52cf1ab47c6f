package mcpserver

import (
	"math"
	"testing"

	"github.com/kfa-project/kfa/knowledge"
)

func TestCursor(t *testing.T) {
	tests := []struct {
		name    string
		cursor  string
		want    knowledge.Position
		wantErr bool
	}{
		{name: "empty is the beginning", cursor: ""},
		{name: "the beginning spelled out", cursor: EncodeCursor(knowledge.Position{})},
		{name: "one", cursor: "AAAAAAAAAAE", want: knowledge.Position{Seq: 1}},
		{name: "largest", cursor: EncodeCursor(knowledge.Position{Seq: math.MaxUint64}), want: knowledge.Position{Seq: math.MaxUint64}},
		{name: "after a trim", cursor: "AAAAAAAAAAEAAAAAAAAABQ", want: knowledge.Position{Seq: 1, Trimmed: 5}},
		{name: "a trim of 0 spelled out", cursor: "AAAAAAAAAAEAAAAAAAAAAA", wantErr: true},
		{name: "not base64", cursor: "zz!", wantErr: true},
		{name: "padded", cursor: "AAAAAAAAAAE=", wantErr: true},
		{name: "standard alphabet", cursor: "AAAAAAAAA+E", wantErr: true},
		{name: "too short", cursor: "AAAAAAAAAA", wantErr: true},
		{name: "between the two lengths", cursor: "AAAAAAAAAAAAAAE", wantErr: true},
		{name: "too long", cursor: "AAAAAAAAAAEAAAAAAAAABQAA", wantErr: true},
		{name: "non-canonical last character", cursor: "AAAAAAAAAAF", wantErr: true},
		{name: "a number", cursor: "12", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeCursor(tc.cursor)
			if (err != nil) != tc.wantErr {
				t.Fatalf("DecodeCursor(%q) err = %v, want error %v", tc.cursor, err, tc.wantErr)
			}
			if err == nil && got != tc.want {
				t.Fatalf("DecodeCursor(%q) = %+v, want %+v", tc.cursor, got, tc.want)
			}
		})
	}
}

// FuzzCursor: a cursor decodes only if it is exactly what EncodeCursor
// writes for its position, and decoding never panics.
func FuzzCursor(f *testing.F) {
	for _, s := range []string{"", "AAAAAAAAAAE", "zz", "AAAAAAAAAAF", "AAAAAAAAAAEAAAAAAAAABQ",
		EncodeCursor(knowledge.Position{Seq: math.MaxUint64, Trimmed: math.MaxUint64}), "\x00\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := DecodeCursor(s)
		if err != nil {
			return
		}
		if s != "" && EncodeCursor(p) != s {
			t.Fatalf("%q decoded to %+v, which encodes as %q", s, p, EncodeCursor(p))
		}
		if len(s) > maxCursorLen {
			t.Fatalf("%q is longer than the schema allows", s)
		}
	})
}
