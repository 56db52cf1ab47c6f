package english

import "testing"

func TestCount(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{{0, "0 lines"}, {1, "1 line"}, {2, "2 lines"}, {-1, "-1 lines"}, {1000, "1000 lines"}} {
		if got := Count(tc.n, "line", "lines"); got != tc.want {
			t.Errorf("Count(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}
