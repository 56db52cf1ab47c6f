package discussions

import (
	"errors"
	"testing"

	"github.com/kfa-project/kfa/input"
)

func TestParseStatusFilter(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Status
		ok   bool
	}{
		{"", "", true}, {"open", StatusOpen, true}, {"answered", StatusAnswered, true},
		{"closed", "", false}, {"OPEN", "", false}, {"open ", "", false},
	} {
		got, err := ParseStatusFilter(tc.in)
		var ie *input.Error
		switch {
		case tc.ok && (err != nil || got != tc.want):
			t.Errorf("ParseStatusFilter(%q) = %q, %v", tc.in, got, err)
		case !tc.ok && (!errors.As(err, &ie) || ie.Field != "status"):
			t.Errorf("ParseStatusFilter(%q): err %v, want an input error for status", tc.in, err)
		}
	}
}
