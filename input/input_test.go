package input

import (
	"errors"
	"strings"
	"testing"
)

func TestText(t *testing.T) {
	for _, tc := range []struct {
		name      string
		s         string
		min, max  int
		multiline bool
		ok        bool
	}{
		{"plain", "How do I rotate a token?", 1, 500, false, true},
		{"unicode counts characters", strings.Repeat("é", 500), 1, 500, false, true},
		{"too long", strings.Repeat("a", 501), 1, 500, false, false},
		{"empty", "", 1, 500, false, false},
		{"blank", "   \t ", 1, 500, true, false},
		{"empty allowed", "", 0, 10, false, true},
		{"newline single-line", "a\nb", 1, 10, false, false},
		{"newline multiline", "a\nb\r\n\tc", 1, 10, true, true},
		{"NUL", "a\x00b", 1, 10, true, false},
		{"escape", "a\x1b[2Jb", 1, 20, true, false},
		{"DEL", "a\x7fb", 1, 10, true, false},
		{"C1 control", "a\u0085b", 1, 10, true, false},
		{"line separator", "a\u2028b", 1, 10, true, false},
		{"invalid UTF-8", "a\xffb", 1, 10, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Text("question", tc.s, tc.min, tc.max, tc.multiline)
			if tc.ok != (err == nil) {
				t.Fatalf("Text(%q) = %v, ok want %v", tc.s, err, tc.ok)
			}
			var e *Error
			if err != nil && (!errors.As(err, &e) || e.Field != "question" || !errors.Is(err, ErrInvalid)) {
				t.Fatalf("error does not name the field: %#v", err)
			}
		})
	}
}

// TestTextCounts: the message counts characters in English ("1
// character", not "1 characters").
func TestTextCounts(t *testing.T) {
	for _, tc := range []struct {
		s        string
		min, max int
		want     string
	}{
		{"a", 3, 10, "question: 1 character, at least 3"},
		{"ab", 3, 10, "question: 2 characters, at least 3"},
		{"abcd", 1, 3, "question: 4 characters, at most 3"},
	} {
		if err := Text("question", tc.s, tc.min, tc.max, false); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Text(%q): %v, want %q", tc.s, err, tc.want)
		}
	}
}

func TestID(t *testing.T) {
	for _, tc := range []struct {
		v  string
		ok bool
	}{
		{"m-1", true}, {"01JD0Z6X8Q4Y4K2V1T3S5R7P9N", true}, {"ünïcode", true},
		{"", false}, {"has space", false}, {"tab\t", false}, {"nul\x00", false},
		{strings.Repeat("x", 129), false}, {"bad\xff", false},
	} {
		if err := ID("messageId", tc.v, 128); (err == nil) != tc.ok {
			t.Errorf("ID(%q) = %v, ok want %v", tc.v, err, tc.ok)
		}
	}
}

func TestPageSize(t *testing.T) {
	for _, tc := range []struct {
		name  string
		asked *int
		want  int
		ok    bool
	}{
		{"absent: the default", nil, 20, true},
		{"one", new(1), 1, true},
		{"the maximum", new(100), 100, true},
		{"zero is not the default", new(0), 0, false},
		{"negative", new(-1), 0, false},
		{"over the maximum", new(101), 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := PageSize(tc.asked, 20, 100)
			if (err == nil) != tc.ok || got != tc.want {
				t.Fatalf("PageSize = %d, %v; want %d, ok %v", got, err, tc.want, tc.ok)
			}
			var e *Error
			if err != nil && (!errors.As(err, &e) || e.Field != "pageSize" || !strings.Contains(e.Msg, "between 1 and 100")) {
				t.Fatalf("the error does not say the range: %#v", err)
			}
		})
	}
}
