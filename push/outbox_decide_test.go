package push

import (
	"errors"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
)

func TestDecideAttempt(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	pending := &Delivery{ID: "d", State: Pending, NextAt: t0}
	for _, tc := range []struct {
		name   string
		d      *Delivery
		a      Attempt
		want   State
		record bool
		error  error
	}{
		{"no such delivery", nil, Attempt{Outcome: OutcomeDelivered}, "", false, ErrDeliveryNotFound},
		{"delivered already", &Delivery{State: Delivered}, Attempt{Outcome: OutcomeDelivered}, "", false, ErrNotPending},
		{"failed already", &Delivery{State: Failed}, Attempt{Outcome: OutcomeRetry}, "", false, ErrNotPending},
		{"delivered", pending, Attempt{N: 1, At: t0, Outcome: OutcomeDelivered}, Delivered, true, nil},
		{"retried", pending, Attempt{N: 1, At: t0, Outcome: OutcomeRetry, NextAt: t0.Add(time.Minute)}, Pending, true, nil},
		{"failed", pending, Attempt{N: 1, At: t0, Outcome: OutcomeFailed, Error: "410"}, Failed, true, nil},
		{"not numbered", pending, Attempt{At: t0, Outcome: OutcomeDelivered}, Delivered, true, nil},
		// A record tried again after its COMMIT's answer was lost, which
		// committed: the delivery as it is, whatever its state, nothing
		// recorded twice.
		{"recorded already, delivered", &Delivery{State: Delivered, Attempts: 1}, Attempt{N: 1, Outcome: OutcomeDelivered}, Delivered, false, nil},
		{"recorded already, pending", &Delivery{State: Pending, Attempts: 2}, Attempt{N: 2, Outcome: OutcomeRetry}, Pending, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, record, err := DecideAttempt(tc.d, tc.a)
			if !errors.Is(err, tc.error) || (err == nil && got.State != tc.want) || record != tc.record {
				t.Fatalf("DecideAttempt = %s, %v, %v; want %s, %v, %v", got.State, record, err, tc.want, tc.record, tc.error)
			}
			if record && (got.Attempts != tc.d.Attempts+1 || len(tc.d.Recent) != 0) {
				t.Fatalf("attempts %d, the loaded delivery's history %v: the decision must not touch what it was given", got.Attempts, tc.d.Recent)
			}
			if err == nil && !record && got.Attempts != tc.d.Attempts {
				t.Fatalf("an attempt recorded already changed the delivery: %d attempts, was %d", got.Attempts, tc.d.Attempts)
			}
		})
	}
}

func TestDecideClaim(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	until := t0.Add(time.Minute)
	for _, tc := range []struct {
		name string
		d    *Delivery
		want bool
	}{
		{"no such delivery", nil, false},
		{"due", &Delivery{State: Pending, NextAt: t0}, true},
		{"overdue", &Delivery{State: Pending, NextAt: t0.Add(-time.Hour)}, true},
		{"claimed by another sender", &Delivery{State: Pending, NextAt: t0.Add(time.Second)}, false},
		{"delivered meanwhile", &Delivery{State: Delivered, NextAt: t0}, false},
		{"failed meanwhile", &Delivery{State: Failed, NextAt: t0}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := DecideClaim(tc.d, t0, until)
			if ok != tc.want || (ok && !got.NextAt.Equal(until)) {
				t.Fatalf("DecideClaim = %v, due %v; want %v, due %v", ok, got.NextAt, tc.want, until)
			}
			if ok && !tc.d.NextAt.Before(until) {
				t.Fatal("the decision touched the delivery it was given")
			}
		})
	}
}

func TestDecideRetry(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	failed := &Delivery{ID: "d", State: Failed, FinishedAt: t0, Reason: "410 Gone"}
	for _, tc := range []struct {
		name   string
		d      *Delivery
		exists bool
		error  error
	}{
		{"no such delivery", nil, true, ErrDeliveryNotFound},
		{"pending", &Delivery{State: Pending}, true, ErrNotFailed},
		{"delivered", &Delivery{State: Delivered}, true, ErrNotFailed},
		{"its config is gone", failed, false, ErrNotFound},
		{"retried", failed, true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			at := t0.Add(time.Hour)
			got, ev, err := DecideRetry(tc.d, tc.exists, at)
			if !errors.Is(err, tc.error) {
				t.Fatalf("DecideRetry = %v, want %v", err, tc.error)
			}
			if err != nil {
				return
			}
			if got.State != Pending || !got.NextAt.Equal(at) || !got.RetriedAt.Equal(at) || !got.FinishedAt.IsZero() || got.Reason != "" {
				t.Fatalf("retried = %+v: want pending, due and retried at %s, neither finished nor failed", got, at)
			}
			if ev.ID != "d" || !ev.At.Equal(at) || failed.State != Failed {
				t.Fatalf("event %+v, the loaded delivery now %s", ev, failed.State)
			}
		})
	}
}

func TestPurge(t *testing.T) {
	before := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	bound := ulid.MustParse(PurgeBound(before))
	if got := ulid.Time(bound.Time()); !got.Equal(before) {
		t.Fatalf("PurgeBound's time = %s, want %s", got, before)
	}
	var at ulid.ULID
	_ = at.SetTime(ulid.Timestamp(before))
	if at.Compare(bound) > 0 {
		t.Fatal("an id of before's millisecond sorts after the bound")
	}
	old := before.Add(-time.Hour)
	found := []Delivery{
		{ID: "1", State: Delivered, FinishedAt: old},
		{ID: "2", State: Delivered, FinishedAt: before}, // not before before
		{ID: "3", State: Pending},
		{ID: "4", State: Failed, FinishedAt: old},
		{ID: "5", State: Failed, FinishedAt: old},
	}
	for _, tc := range []struct {
		limit int
		want  string
	}{{10, "145"}, {2, "14"}, {0, ""}} {
		got := ""
		for _, d := range DecidePurge(found, before, tc.limit) {
			got += d.ID
		}
		if got != tc.want {
			t.Errorf("DecidePurge(limit %d) = %q, want %q", tc.limit, got, tc.want)
		}
	}
}
