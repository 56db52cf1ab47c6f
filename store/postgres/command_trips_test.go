package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/moderation"
	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/ratelimit"
	"github.com/kfa-project/kfa/store/postgres"
	"github.com/kfa-project/kfa/trust"
)

// TestCommandRoundTrips: the commands that load the acting agent first
// (a revoke is seen under the lock) and the moderation commands that load
// a reply's discussion's replies (what answers it besides the reply) take
// the 2 round trips of every command, as the ask and the reply do
// (TestAskRoundTrips): BEGIN and every load in one batch, then the writes
// and COMMIT. A load that depends on another (the configs under the
// owner's task, the replies under a reply named by id alone) is a
// subquery of the same batch, never a trip of its own. Each command is
// run once first, unmeasured, so that pgx's statement preparation is not
// counted.
func TestCommandRoundTrips(t *testing.T) {
	db := openOneConn(t)
	e := newEngine(t, db)
	ctx := context.Background()
	alice, bob, carol := e.agent(t, "alice"), e.agent(t, "bob"), e.agent(t, "carol")
	at := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)

	// answered is a discussion of alice's with bob's answer, and alice's
	// task on it (completed by the answer).
	type answered struct {
		disc, task string
		reply      discussions.Reply
	}
	newAnswered := func(i int) answered {
		tk, err := e.ask(ctx, alice, fmt.Sprint("q", i), "")
		if err != nil {
			t.Fatal(err)
		}
		r, err := e.ds.Reply(ctx, discussions.Author{ID: bob.ID, Name: bob.Name}, tk.DiscussionID, "answer")
		if err != nil {
			t.Fatal(err)
		}
		return answered{disc: tk.DiscussionID, task: tk.ID, reply: r.Reply}
	}
	config := func(taskID string, i int) push.Config {
		return push.Config{ID: fmt.Sprint("c", i), TaskID: taskID, OwnerID: alice.ID, URL: "https://hooks.example.com/kfa", CreatedAt: at}
	}
	// Two votes of carol's before the trust rows run, unmeasured, prepare
	// the statements the measured ones use (a vote window's first write is
	// an insert, the next ones updates: a statement pgx prepares, one
	// round trip, the first time it runs).
	lim := trust.Limits{Rate: ratelimit.Rate{Events: 100}}
	for i := range 2 {
		w := newAnswered(4900 + i)
		if _, err := db.Vote(ctx, trust.VoteCommand{Item: trust.ReplyItem(w.disc, w.reply.ID), AgentID: carol.ID, Value: 1, At: at}, lim); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		cmd  string
		do   func(t *testing.T, i int) error
	}{
		{"cancel", postgres.CmdCancel, func(t *testing.T, i int) error {
			tk, err := e.ask(ctx, alice, fmt.Sprint("c", i), "")
			if err != nil {
				return err
			}
			return measured(t, db, postgres.CmdCancel, func() error {
				_, _, err := db.CancelTask(ctx, alice.ID, tk.ID, at)
				return err
			})
		}},
		{"push config put", postgres.CmdPutConfig, func(t *testing.T, i int) error {
			tk, err := e.ask(ctx, alice, fmt.Sprint("p", i), "")
			if err != nil {
				return err
			}
			return measured(t, db, postgres.CmdPutConfig, func() error { _, _, err := db.PutPushConfig(ctx, config(tk.ID, i), 10); return err })
		}},
		{"push config delete", postgres.CmdDeleteConfig, func(t *testing.T, i int) error {
			tk, err := e.ask(ctx, alice, fmt.Sprint("d", i), "")
			if err != nil {
				return err
			}
			if _, _, err := db.PutPushConfig(ctx, config(tk.ID, i), 10); err != nil {
				return err
			}
			return measured(t, db, postgres.CmdDeleteConfig, func() error {
				_, err := db.DeletePushConfig(ctx, alice.ID, tk.ID, config(tk.ID, i).ID, at)
				return err
			})
		}},
		{"accept", postgres.CmdAccept, func(t *testing.T, i int) error {
			a := newAnswered(1000 + i)
			return measured(t, db, postgres.CmdAccept, func() error {
				_, err := db.AcceptReply(ctx, discussions.Accept{DiscussionID: a.disc, ReplyID: a.reply.ID, CallerID: alice.ID, At: at})
				return err
			})
		}},
		{"inbox ack", postgres.CmdAck, func(t *testing.T, i int) error {
			a := newAnswered(2000 + i)
			return measured(t, db, postgres.CmdAck, func() error {
				_, err := db.AckInbox(ctx, alice.ID, []string{discussions.InboxEntryID(a.reply.ID, alice.ID, a.reply.CreatedAt)}, at)
				return err
			})
		}},
		{"flag of a reply that hides it", postgres.CmdFlag, func(t *testing.T, i int) error {
			a := newAnswered(3000 + i)
			return measured(t, db, postgres.CmdFlag, func() error {
				_, err := db.FlagItem(ctx, moderation.FlagCommand{Target: moderation.Target{Kind: moderation.KindReply, ID: a.reply.ID},
					AgentID: carol.ID, AgentName: carol.Name, Reason: moderation.ReasonSpam, At: at}, moderation.Policy{HideThreshold: 1})
				return err
			})
		}},
		{"an agent moderator's hide of a reply", postgres.CmdModerate, func(t *testing.T, i int) error {
			a := newAnswered(4000 + i)
			return measured(t, db, postgres.CmdModerate, func() error {
				_, err := db.Moderate(ctx, moderation.Command{Action: moderation.ActionHide,
					Target: moderation.Target{Kind: moderation.KindReply, ID: a.reply.ID, DiscussionID: a.disc},
					Actor:  moderation.Actor{Kind: moderation.ActorAgent, ID: carol.ID, Name: carol.Name}, Reason: "spam", At: at})
				return err
			})
		}},
		{"vote", postgres.CmdVote, func(t *testing.T, i int) error {
			a := newAnswered(5000 + i)
			return measured(t, db, postgres.CmdVote, func() error {
				_, err := db.Vote(ctx, trust.VoteCommand{Item: trust.ReplyItem(a.disc, a.reply.ID), AgentID: carol.ID, Value: 1, At: at}, lim)
				return err
			})
		}},
		{"verify", postgres.CmdVerify, func(t *testing.T, i int) error {
			a := newAnswered(6000 + i)
			return measured(t, db, postgres.CmdVerify, func() error {
				_, err := db.Verify(ctx, trust.VerifyCommand{Item: trust.ReplyItem(a.disc, a.reply.ID), AgentID: carol.ID,
					AgentName: carol.Name, Outcome: trust.Worked, Environment: "linux", At: at},
					lim)
				return err
			})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i := range 4 {
				if err := tc.do(t, i); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// measured runs do, one command named cmd, and fails t if it took more
// than 2 round trips (once warmed up: the first run is not held to it)
// or ran anything else.
func measured(t *testing.T, db *postgres.DB, cmd string, do func() error) error {
	t.Helper()
	before, reads, writes := db.RoundTrips(cmd), db.RoundTrips(postgres.TripsRead), db.RoundTrips(postgres.TripsWrite)
	if err := do(); err != nil {
		return err
	}
	after := db.RoundTrips(cmd)
	if after.Commands != before.Commands+1 {
		t.Fatalf("%s: %d commands ran, want 1", cmd, after.Commands-before.Commands)
	}
	if r, w := db.RoundTrips(postgres.TripsRead), db.RoundTrips(postgres.TripsWrite); r != reads || w != writes {
		t.Fatalf("%s also made %d reads and %d other writes", cmd, r.Commands-reads.Commands, w.Commands-writes.Commands)
	}
	if trips := after.Trips - before.Trips; before.Commands > 0 && trips > 2 {
		t.Fatalf("%s took %d round trips, want at most 2 (run %d)", cmd, trips, before.Commands)
	}
	return nil
}
