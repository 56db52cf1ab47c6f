package peers

import "testing"

// TestPageLimit: a page's body limit grows with its size and the
// document bound, is capped at MaxPageBytes whatever a peer's bounds
// are, and still holds one document of the biggest bound.
func TestPageLimit(t *testing.T) {
	small := Bounds{MaxDocBytes: 1024}
	for _, c := range []struct {
		name string
		size int
		b    Bounds
		want int64
	}{
		{"one small", 1, small, 6*1024 + entryBytes},
		{"ten small", 10, small, 10 * (6*1024 + entryBytes)},
		{"zero is one", 0, small, 6*1024 + entryBytes},
		{"a full page of the default is capped", MaxFeedPage, DefaultBounds, MaxPageBytes},
		{"the biggest bound, one document", 1, Bounds{MaxDocBytes: maxDocBytes}, 6*maxDocBytes + entryBytes},
		{"the biggest bound, a page", MaxFeedPage, Bounds{MaxDocBytes: maxDocBytes}, 6*maxDocBytes + entryBytes},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := PageLimit(c.size, c.b); got != c.want {
				t.Fatalf("PageLimit(%d, %+v) = %d, want %d", c.size, c.b, got, c.want)
			}
		})
	}
}
