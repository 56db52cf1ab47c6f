package main

import "testing"

func TestAgentLabels(t *testing.T) {
	l := labels([][2]string{{"alice", "01JD0000000000000000AAAAAA"}, {"Alice", "01JD0000000000000000BBBBBB"},
		{"alice", "01JD0000000000000000AAAAAA"}, {"bob", "01JD0000000000000000CCCCCC"}})
	for _, tc := range []struct{ name, id, want string }{
		{"alice", "01JD0000000000000000AAAAAA", "alice (…AAAAAA)"},
		{"Alice", "01JD0000000000000000BBBBBB", "Alice (…BBBBBB)"},
		{"bob", "01JD0000000000000000CCCCCC", "bob"},
		{"", "01JD0000000000000000DDDDDD", "01JD0000000000000000DDDDDD"},
	} {
		if got := l.of(tc.name, tc.id); got != tc.want {
			t.Errorf("label of %q %s = %q, want %q", tc.name, tc.id, got, tc.want)
		}
	}
}
