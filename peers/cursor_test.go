package peers

import (
	"errors"
	"strings"
	"testing"

	"github.com/kfa-project/kfa/changelog"
)

func TestCursorRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Cursor
	}{
		{"records snapshot start", Cursor{Started: true, Phase: PhaseRecords, Pos: changelog.Position{Seq: 7}, Epoch: "0a1b2c3d"}},
		{"records snapshot after an id", Cursor{Started: true, Phase: PhaseRecords, After: "pg-vacuum.2", Pos: changelog.Position{Seq: 7}, Epoch: "0a1b2c3d"}},
		{"discussions snapshot", Cursor{Started: true, Phase: PhaseDiscussions, After: "01JE0000000000000000000000", Pos: changelog.Position{Tx: 900, Seq: 12}, Epoch: "ffffffff"}},
		{"log", Cursor{Started: true, Phase: PhaseLog, Pos: changelog.Position{Tx: 1 << 40, Seq: 1 << 50}, Epoch: "00000000"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.c.String()
			if s == "" {
				t.Fatal("a started cursor encodes to nothing")
			}
			got, err := ParseCursor(s)
			if err != nil || got != tc.c {
				t.Fatalf("ParseCursor(%q) = %+v, %v; want %+v", s, got, err, tc.c)
			}
		})
	}
	if (Cursor{}).String() != "" {
		t.Fatal("the beginning is not the empty cursor")
	}
	if c, err := ParseCursor(""); err != nil || c.Started {
		t.Fatalf("ParseCursor(\"\") = %+v, %v", c, err)
	}
}

func TestParseCursorRefuses(t *testing.T) {
	good := Cursor{Started: true, Phase: PhaseLog, Pos: changelog.Position{Seq: 3}, Epoch: "0a1b2c3d"}.String()
	snap := Cursor{Started: true, Phase: PhaseRecords, After: "a", Pos: changelog.Position{Seq: 3}, Epoch: "0a1b2c3d"}.String()
	for _, tc := range []struct{ name, s string }{
		{"not base64", "!!!"},
		{"padded", good + "="},
		{"too short", "AQ"},
		{"an id after the log phase", good + "eA"},
		{"an id that is no id", snap[:len(snap)-2] + "Lw"}, // "a" becomes "/"
		{"unknown format", "Ag" + good[2:]},
		{"unknown phase", Cursor{Started: true, Phase: 9, Epoch: "0a1b2c3d"}.String()},
		{"too long", strings.Repeat("A", MaxCursorLen+1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if c, err := ParseCursor(tc.s); !errors.Is(err, ErrNotCursor) {
				t.Fatalf("ParseCursor(%q) = %+v, %v; want ErrNotCursor", tc.s, c, err)
			}
		})
	}
}

// FuzzParseCursor: a cursor is text any reader sends; whatever it is,
// parsing neither panics nor accepts what it would not write.
func FuzzParseCursor(f *testing.F) {
	f.Add("")
	f.Add(Cursor{Started: true, Phase: PhaseDiscussions, After: "x", Epoch: "01020304"}.String())
	f.Add("AQAAAAACAQE")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCursor(s)
		if err == nil && c.String() != s {
			t.Fatalf("ParseCursor(%q) accepted a cursor that writes as %q", s, c.String())
		}
	})
}
