package web

import (
	"slices"
	"testing"

	"github.com/kfa-project/kfa/discussions"
)

// TestAcceptedFirst: the accepted reply moves to the top of its page, the
// others keep their order; without one on the page nothing moves.
func TestAcceptedFirst(t *testing.T) {
	page := func(ids ...string) []discussions.Reply {
		out := make([]discussions.Reply, len(ids))
		for i, id := range ids {
			out[i] = discussions.Reply{ID: id}
		}
		return out
	}
	for _, tc := range []struct {
		name, accepted string
		in, want       []string
	}{
		{"none accepted", "", []string{"a", "b", "c"}, []string{"a", "b", "c"}},
		{"the first", "a", []string{"a", "b", "c"}, []string{"a", "b", "c"}},
		{"the middle", "b", []string{"a", "b", "c"}, []string{"b", "a", "c"}},
		{"the last", "c", []string{"a", "b", "c"}, []string{"c", "a", "b"}},
		{"on another page", "z", []string{"a", "b"}, []string{"a", "b"}},
		{"an empty page", "a", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, r := range acceptedFirst(page(tc.in...), tc.accepted) {
				got = append(got, r.ID)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}
