package signing

import (
	"testing"
	"time"
)

func TestDecideEnsure(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		keys []KeyRecord
		want bool
	}{
		{"no key", nil, true},
		{"only retired keys", []KeyRecord{{ID: "a", RetiredAt: t0}}, true},
		{"a current key", []KeyRecord{{ID: "a", RetiredAt: t0}, {ID: "b"}}, false},
	} {
		if got := DecideEnsure(tc.keys); got != tc.want {
			t.Errorf("%s: DecideEnsure = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestDecideRotate(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	keys := []KeyRecord{
		{ID: "current", CreatedAt: t0.Add(-time.Hour)},
		{ID: "recent", CreatedAt: t0.Add(-48 * time.Hour), RetiredAt: t0.Add(-2 * time.Hour)},
		{ID: "old", CreatedAt: t0.Add(-96 * time.Hour), RetiredAt: t0.Add(-72 * time.Hour)},
	}
	next := KeyRecord{ID: "next", CreatedAt: t0}
	r := DecideRotate(keys, next, t0.Add(-24*time.Hour))
	if len(r.Retire) != 1 || r.Retire[0].Old.ID != "current" || !r.Retire[0].New.RetiredAt.Equal(t0) || !r.Retire[0].Old.RetiredAt.IsZero() {
		t.Fatalf("retire = %+v: want the current key, retired at the new key's creation", r.Retire)
	}
	if len(r.Purge) != 1 || r.Purge[0].ID != "old" {
		t.Fatalf("purge = %+v: want the key retired before the horizon only", r.Purge)
	}
	if r.Add.ID != "next" || !keys[0].RetiredAt.IsZero() {
		t.Fatalf("add = %+v; the loaded keys must stay as loaded", r.Add)
	}
}
