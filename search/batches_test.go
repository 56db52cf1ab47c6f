package search

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kfa-project/kfa/knowledge"
)

// sized returns a record whose Size is n (n >= 2).
func sized(id string, n int) *knowledge.Record {
	return &knowledge.Record{ID: id, Body: strings.Repeat("b", n-len(id))}
}

// TestBatchesAreBoundedByBytes: an index batch holds at most maxBytes of
// records and size entries, a larger record a batch of its own, and the
// batches keep the order given.
func TestBatchesAreBoundedByBytes(t *testing.T) {
	ch := func(spec ...int) []change { // a size, or 0 for a removal
		out := make([]change, len(spec))
		for i, n := range spec {
			out[i] = change{id: fmt.Sprintf("r%d", i)}
			if n > 0 {
				out[i].rec = sized(out[i].id, n)
			}
		}
		return out
	}
	tests := []struct {
		name     string
		changes  []change
		size     int
		maxBytes int
		want     string // sizes per batch
	}{
		{"none", nil, 10, 100, "[]"},
		{"all fit", ch(30, 30, 30), 10, 100, "[[30 30 30]]"},
		{"bytes bind", ch(40, 40, 40, 40, 40), 10, 100, "[[40 40] [40 40] [40]]"},
		{"exactly the bound", ch(50, 50, 50), 10, 100, "[[50 50] [50]]"},
		{"a large record alone", ch(10, 500, 10), 10, 100, "[[10] [500] [10]]"},
		{"a large record first", ch(500, 10, 10), 10, 100, "[[500] [10 10]]"},
		{"count binds", ch(5, 5, 5, 5, 5), 2, 100, "[[5 5] [5 5] [5]]"},
		{"deletions weigh nothing", ch(60, 0, 0, 40, 10), 10, 100, "[[60 0 0 40] [10]]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bs := batches(tt.changes, tt.size, tt.maxBytes)
			var got [][]int
			next := 0
			for _, b := range bs {
				var sizes []int
				for _, c := range b {
					if want := fmt.Sprintf("r%d", next); c.id != want {
						t.Fatalf("record %s where %s was due: order lost", c.id, want)
					}
					next++
					n := 0
					if c.rec != nil {
						n = c.rec.Size()
					}
					sizes = append(sizes, n)
				}
				got = append(got, sizes)
			}
			if s := fmt.Sprint(got); s != tt.want {
				t.Fatalf("batches %s, want %s", s, tt.want)
			}
		})
	}
}

func TestFittingIsBoundedByBytes(t *testing.T) {
	recs := func(sizes ...int) []knowledge.Record {
		out := make([]knowledge.Record, len(sizes))
		for i, n := range sizes {
			out[i] = *sized(fmt.Sprintf("r%d", i), n)
		}
		return out
	}
	tests := []struct {
		recs []knowledge.Record
		max  int
		want int
	}{
		{recs(40, 40, 40), 100, 2},
		{recs(50, 50, 50), 100, 2},
		{recs(500, 10), 100, 1},
		{recs(10, 10), 100, 2},
		{recs(10), 1, 1},
	}
	for _, tt := range tests {
		if got := fitting(tt.recs, tt.max); got != tt.want {
			t.Errorf("fitting(%d records, %d) = %d, want %d", len(tt.recs), tt.max, got, tt.want)
		}
	}
}
