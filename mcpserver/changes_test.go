package mcpserver

import (
	"math"
	"testing"
)

func TestCursor(t *testing.T) {
	tests := []struct {
		name    string
		cursor  string
		want    uint64
		wantErr bool
	}{
		{name: "empty is the beginning", cursor: "", want: 0},
		{name: "the beginning spelled out", cursor: EncodeCursor(0), want: 0},
		{name: "one", cursor: "AAAAAAAAAAE", want: 1},
		{name: "largest", cursor: EncodeCursor(math.MaxUint64), want: math.MaxUint64},
		{name: "not base64", cursor: "zz!", wantErr: true},
		{name: "padded", cursor: "AAAAAAAAAAE=", wantErr: true},
		{name: "standard alphabet", cursor: "AAAAAAAAA+E", wantErr: true},
		{name: "too short", cursor: "AAAAAAAAAA", wantErr: true},
		{name: "too long", cursor: "AAAAAAAAAAAAAAE", wantErr: true},
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
				t.Fatalf("DecodeCursor(%q) = %d, want %d", tc.cursor, got, tc.want)
			}
		})
	}
}

// FuzzCursor: a cursor decodes only if it is exactly what EncodeCursor
// writes for its sequence, and decoding never panics.
func FuzzCursor(f *testing.F) {
	for _, s := range []string{"", "AAAAAAAAAAE", "zz", "AAAAAAAAAAF", EncodeCursor(math.MaxUint64), "\x00\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		seq, err := DecodeCursor(s)
		if err != nil {
			return
		}
		if s != "" && EncodeCursor(seq) != s {
			t.Fatalf("%q decoded to %d, which encodes as %q", s, seq, EncodeCursor(seq))
		}
		if len(s) > maxCursorLen {
			t.Fatalf("%q is longer than the schema allows", s)
		}
	})
}
