package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/tasks"
)

// TestClaimDelivery: one claim holds a pending delivery at a time; it runs
// out at its lease, a recorded attempt ends it, and a delivery pending no
// more cannot be claimed.
func TestClaimDelivery(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	at := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	now := func() time.Time { return at }
	alice, err := agents.NewService(db, now).Create(ctx, "alice", []agents.Scope{agents.ScopeRead, agents.ScopePost})
	if err != nil {
		t.Fatal(err)
	}
	svc := tasks.NewService(db, tasks.Limits{}, db.Secret(), now)
	text := "who gets the push?"
	tk, _, err := svc.Ask(ctx, tasks.AskInput{
		Asker:    tasks.Asker{ID: alice.Agent.ID, Name: alice.Agent.Name},
		Message:  a2a.Message{MessageID: "c-1", Role: a2a.RoleUser, Parts: []a2a.Part{{Text: &text}}},
		Question: text,
		Push:     &push.Config{ID: "cfg", URL: "https://hooks.example.com/kfa", CreatedAt: at},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.Cancel(ctx, alice.Agent.ID, tk.ID); err != nil {
		t.Fatal(err)
	}
	due, err := db.DueDeliveries(ctx, at, 10, nil)
	if err != nil || len(due) != 1 {
		t.Fatalf("due: %+v %v", due, err)
	}
	id, lease := due[0].ID, time.Minute
	claim := func(at time.Time, want bool, what string) {
		t.Helper()
		got, err := db.ClaimDelivery(ctx, id, at, at.Add(lease))
		if err != nil || got != want {
			t.Fatalf("%s: claimed %v, %v; want %v", what, got, err, want)
		}
	}
	claim(at, true, "the first claim")
	claim(at, false, "a second claim while the first holds")
	claim(at.Add(lease-time.Millisecond), false, "a claim just before the lease runs out")
	claim(at.Add(lease), true, "a claim once the lease ran out (a crashed sender's)")
	retryAt := at.Add(2 * lease)
	if _, err := db.RecordAttempt(ctx, id, push.Attempt{At: at.Add(lease), Status: 503, Outcome: push.OutcomeRetry, NextAt: retryAt}); err != nil {
		t.Fatal(err)
	}
	claim(at.Add(lease), true, "a claim after a recorded retry")
	if _, err := db.RecordAttempt(ctx, id, push.Attempt{At: retryAt, Status: 204, Outcome: push.OutcomeDelivered}); err != nil {
		t.Fatal(err)
	}
	claim(retryAt.Add(time.Hour), false, "a claim of a delivered delivery")
	id = "01KFA0000000000000000000ZZ"
	claim(retryAt, false, "a claim of an unknown delivery")
}
