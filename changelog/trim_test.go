package changelog

import (
	"testing"
	"time"
)

func TestTrimBound(t *testing.T) {
	h := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	live, old := h.Add(time.Minute), h.Add(-time.Minute)
	for _, tc := range []struct {
		name    string
		cursors []Cursor
		newest  Position
		allowed []uint64 // the seqs Allows lets go, of 1..6
		stale   int
	}{
		{"no cursor: all but the newest", nil, Position{Seq: 5}, []uint64{1, 2, 3, 4}, 0},
		{"a live cursor holds back what it has not passed", []Cursor{{Name: "a", Pos: Position{Seq: 2}, Updated: live}},
			Position{Seq: 5}, []uint64{1, 2}, 0},
		{"the slowest live cursor", []Cursor{{Name: "a", Pos: Position{Seq: 3}, Updated: live},
			{Name: "b", Pos: Position{Seq: 1}, Updated: live}}, Position{Seq: 5}, []uint64{1}, 0},
		{"a stale cursor holds nothing back", []Cursor{{Name: "a", Pos: Position{Seq: 0}, Updated: old}},
			Position{Seq: 5}, []uint64{1, 2, 3, 4}, 1},
		{"an empty log", nil, Position{}, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, stale := TrimBound(tc.cursors, tc.newest, h)
			var got []uint64
			for s := uint64(1); s <= 6; s++ {
				if b.Allows(Position{Seq: s}) {
					got = append(got, s)
				}
			}
			if len(got) != len(tc.allowed) || len(stale) != tc.stale {
				t.Fatalf("allows %v, stale %v; want %v, %d stale", got, stale, tc.allowed, tc.stale)
			}
			for i := range got {
				if got[i] != tc.allowed[i] {
					t.Fatalf("allows %v, want %v", got, tc.allowed)
				}
			}
		})
	}
}

func TestTrimStep(t *testing.T) {
	h := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	b := Bound{Newest: Position{Seq: 10}}
	before, after := h.Add(-time.Second), h
	for _, tc := range []struct {
		name       string
		e          Event
		written    time.Time
		stop, drop bool
	}{
		{"a task's event", Event{Pos: Position{Seq: 1}, Kind: TaskCreated}, before, false, true},
		{"a record's event stays for its own walk", Event{Pos: Position{Seq: 1}, Kind: RecordUpserted}, before, false, false},
		{"written at the horizon", Event{Pos: Position{Seq: 1}, Kind: TaskCreated}, after, true, false},
		{"the newest", Event{Pos: Position{Seq: 10}, Kind: TaskCreated}, before, true, false},
	} {
		stop, drop := TrimStep(tc.e, tc.written, b, h)
		if stop != tc.stop || drop != tc.drop {
			t.Errorf("%s: TrimStep = stop %v drop %v, want %v %v", tc.name, stop, drop, tc.stop, tc.drop)
		}
	}
	for _, tc := range []struct {
		k          Kind
		superseded bool
		want       bool
	}{{RecordDeleted, false, true}, {RecordUpserted, false, false}, {RecordUpserted, true, true}} {
		if got := RecordDroppable(tc.k, tc.superseded); got != tc.want {
			t.Errorf("RecordDroppable(%s, %v) = %v", tc.k, tc.superseded, got)
		}
	}
	newestRecord := Position{Seq: 7}
	for _, tc := range []struct {
		seq     uint64
		written time.Time
		stop    bool
	}{{3, before, false}, {7, before, true}, {3, after, true}, {11, before, true}} {
		if got := KeepRecordEvent(Event{Pos: Position{Seq: tc.seq}, Kind: RecordDeleted}, tc.written, newestRecord, b, h); got != tc.stop {
			t.Errorf("KeepRecordEvent(seq %d) = %v, want %v", tc.seq, got, tc.stop)
		}
	}
}
