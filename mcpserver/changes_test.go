package mcpserver

import (
	"errors"
	"math"
	"testing"

	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/knowledge"
)

func TestCursor(t *testing.T) {
	largest := knowledge.Position{At: changelog.Position{Tx: math.MaxUint64, Seq: math.MaxUint64},
		Trimmed: changelog.Position{Tx: math.MaxUint64, Seq: math.MaxUint64}, Epoch: "ffffffff"}
	tests := []struct {
		name    string
		cursor  string
		want    knowledge.Position
		wantErr error
	}{
		{name: "empty is the beginning", cursor: ""},
		{name: "the beginning spelled out", cursor: EncodeCursor(knowledge.Position{})},
		{name: "bbolt", cursor: "AQEjRWcAAQAA", want: knowledge.Position{At: changelog.Position{Seq: 1}, Epoch: "01234567"}},
		{name: "postgres, after a trim", cursor: "AQEjRWcHCQAF",
			want: knowledge.Position{At: changelog.Position{Tx: 7, Seq: 9}, Trimmed: changelog.Position{Seq: 5}, Epoch: "01234567"}},
		{name: "largest", cursor: EncodeCursor(largest), want: largest},
		{name: "a cursor of the old feed", cursor: "AAAAAAAAAAE", wantErr: knowledge.ErrCursorTooOld},
		{name: "an old cursor after a trim", cursor: "AAAAAAAAAAEAAAAAAAAABQ", wantErr: knowledge.ErrCursorTooOld},
		{name: "not base64", cursor: "zz!", wantErr: knowledge.ErrNotCursor},
		{name: "padded", cursor: "AQEjRWcAAQAA=", wantErr: knowledge.ErrNotCursor},
		{name: "another format", cursor: "AgEjRWcAAQAA", wantErr: knowledge.ErrNotCursor},
		{name: "too short", cursor: "AQEjRWcAAQA", wantErr: knowledge.ErrNotCursor},
		{name: "too long", cursor: "AQEjRWcAAQAAAA", wantErr: knowledge.ErrNotCursor},
		{name: "a non-minimal number", cursor: "AQEjRWeAAAEAAA", wantErr: knowledge.ErrNotCursor},
		{name: "a number", cursor: "12", wantErr: knowledge.ErrNotCursor},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeCursor(tc.cursor)
			if !errors.Is(err, tc.wantErr) || (err != nil) != (tc.wantErr != nil) {
				t.Fatalf("DecodeCursor(%q) err = %v, want %v", tc.cursor, err, tc.wantErr)
			}
			if err == nil && got != tc.want {
				t.Fatalf("DecodeCursor(%q) = %+v, want %+v", tc.cursor, got, tc.want)
			}
		})
	}
	if n := len(EncodeCursor(largest)); n > maxCursorLen {
		t.Fatalf("the largest cursor is %d characters, more than the schema's %d", n, maxCursorLen)
	}
}

// FuzzCursor: a cursor decodes only if it is exactly what EncodeCursor
// writes for its position, and decoding never panics.
func FuzzCursor(f *testing.F) {
	for _, s := range []string{"", "AQEjRWcAAQAA", "AQEjRWcHCQAF", "zz", "AAAAAAAAAAE", "AAAAAAAAAAEAAAAAAAAABQ", "\x00\xff"} {
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
