package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/knowledge"
	"github.com/kfa-project/kfa/moderation"
	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/sessions"
	"github.com/kfa-project/kfa/store/postgres"
	"github.com/kfa-project/kfa/tasks"
)

// TestReadRouteRoundTrips: every read a route makes is one statement,
// outside any transaction, in one round trip: the A2A and API reads
// (tasks, push configs, discussions with their replies and totals,
// inboxes, quotas), the web's and the operator's (the moderation queue
// and log, records, agents, stats, the outbox), the change feed, the
// credential lookups, and the reads of the followers and the push worker
// (a changed discussion for the search index, due deliveries). Each runs
// through the domain service the route calls where there is one, so a
// route that made two reads would fail. Found and not found alike; the
// connection's own count of trips must agree, so a read that bypassed
// the store's counting fails too. pgx prepares a statement the first
// time a connection sends it (one more trip), so each read runs once
// before it is counted.
func TestReadRouteRoundTrips(t *testing.T) {
	db := openOneConn(t)
	e := newEngine(t, db)
	ctx := context.Background()
	now := func() time.Time { return time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC) }
	alice, bob, carol := e.agent(t, "alice"), e.agent(t, "bob"), e.agent(t, "carol")
	open, err := e.ask(ctx, alice, "m-1", "")
	if err != nil {
		t.Fatal(err)
	}
	answered, err := e.ask(ctx, alice, "m-2", "")
	if err != nil {
		t.Fatal(err)
	}
	ps := push.NewService(db, push.Policy{}, db.Secret(), now)
	if _, err := ps.Create(ctx, alice.ID, answered.ID, a2a.TaskPushNotificationConfig{ID: "c1", URL: "https://hooks.example.com/a"}); err != nil {
		t.Fatal(err)
	}
	reply, err := e.ds.Reply(ctx, discussions.Author{ID: bob.ID, Name: bob.Name}, answered.DiscussionID, "the answer")
	if err != nil {
		t.Fatal(err)
	}
	ms := moderation.NewService(db, moderation.Policy{}, now)
	replyItem := moderation.Target{Kind: moderation.KindReply, ID: reply.Reply.ID, DiscussionID: answered.DiscussionID}
	if _, err := ms.Flag(ctx, moderation.Agent{ID: carol.ID, Name: carol.Name}, replyItem, "spam", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := ms.Flag(ctx, moderation.Agent{ID: carol.ID, Name: carol.Name}, moderation.Target{Kind: moderation.KindDiscussion, ID: open.DiscussionID}, "spam", ""); err != nil {
		t.Fatal(err)
	}
	ks := knowledge.NewService(db, now)
	if _, err := ks.Upsert(ctx, []knowledge.Record{{ID: "r1", Kind: "fix", Title: "Rotate the log", Body: "Send SIGHUP."}}); err != nil {
		t.Fatal(err)
	}
	deliveries, err := db.Deliveries(ctx, push.DeliveryQuery{PageSize: 10})
	if err != nil || len(deliveries.Deliveries) != 1 {
		t.Fatalf("the reply's delivery: %+v, %v", deliveries, err)
	}
	delivery := deliveries.Deliveries[0]
	first, err := db.ListDiscussions(ctx, discussions.ListQuery{PageSize: 1})
	if err != nil || first.Next == "" {
		t.Fatalf("first page: %+v, %v", first, err)
	}
	unknown := "01JZZZZZZZZZZZZZZZZZZZZZZZ"
	two, pageSize := 2, 1

	for _, r := range []struct {
		name string
		read func() error
	}{
		// A2A: the task routes.
		{"GetTask", func() error {
			return e.tk.ViewTask(ctx, alice.ID, answered.ID, func(*tasks.Snapshot) error { return nil })
		}},
		{"GetTask, another's", func() error {
			return want(e.tk.ViewTask(ctx, bob.ID, answered.ID, func(*tasks.Snapshot) error { return nil }), tasks.ErrNotFound)
		}},
		{"ListTasks", func() error {
			_, err := e.tk.ViewList(ctx, alice.ID, tasks.ListParams{PageSize: &two}, tasks.View{}, func(*tasks.Snapshot) error { return nil })
			return err
		}},
		{"ListTasks with artifacts", func() error {
			_, err := e.tk.ViewList(ctx, alice.ID, tasks.ListParams{State: a2a.TaskStateCompleted}, tasks.View{IncludeArtifacts: true},
				func(*tasks.Snapshot) error { return nil })
			return err
		}},
		{"ListTasks, the operator's", func() error { _, err := e.tk.List(ctx, "", tasks.ListParams{}); return err }},
		{"the task of a messageId", func() error { _, err := db.TaskByMessageID(ctx, alice.ID, "m-1"); return err }},
		{"ListPushConfigs", func() error { _, _, err := ps.List(ctx, alice.ID, answered.ID, nil, ""); return err }},
		{"GetPushConfig", func() error { _, err := ps.Get(ctx, alice.ID, answered.ID, "c1"); return err }},
		{"GetPushConfig, another's task", func() error {
			_, err := ps.Get(ctx, bob.ID, answered.ID, "c1")
			return want(err, push.ErrTaskNotFound)
		}},
		{"the ask quota", func() error { _, err := db.AskUsage(ctx, alice.ID); return err }},

		// The discussions: /api/v1, the web, MCP's fetch.
		{"ListDiscussions", func() error { _, err := e.ds.List(ctx, "", nil, ""); return err }},
		{"ListDiscussions, open", func() error { _, err := e.ds.List(ctx, discussions.StatusOpen, nil, ""); return err }},
		{"ListDiscussions, oldest open", func() error { _, err := e.ds.ListOldest(ctx, discussions.StatusOpen, nil, ""); return err }},
		{"ListDiscussions, the next page", func() error {
			_, err := db.ListDiscussions(ctx, discussions.ListQuery{PageSize: 1, After: first.Next})
			return err
		}},
		{"ListDiscussions, an empty page", func() error {
			p, err := db.ListDiscussions(ctx, discussions.ListQuery{PageSize: 1, After: "00000000000000000000000000"})
			if err == nil && (len(p.Discussions) != 0 || p.Total != 2) {
				t.Errorf("page %+v", p)
			}
			return err
		}},
		{"GetDiscussion with its replies", func() error { _, _, err := e.ds.Get(ctx, answered.DiscussionID, &pageSize, ""); return err }},
		{"GetDiscussion, a moderator's", func() error { _, _, err := e.ds.Review(ctx, answered.DiscussionID, nil, ""); return err }},
		{"GetDiscussion, none", func() error {
			_, _, err := e.ds.Get(ctx, unknown, nil, "")
			return want(err, discussions.ErrNotFound)
		}},
		{"ListInbox", func() error { _, err := e.ds.Inbox(ctx, alice.ID, true, nil, ""); return err }},
		{"the reply quota", func() error { _, err := db.ReplyWindow(ctx, bob.ID); return err }},
		{"the flag quota", func() error { _, err := db.FlagWindow(ctx, carol.ID); return err }},

		// The web's moderation page and the operator's.
		{"the moderation queue", func() error {
			q, n, err := ms.Queue(ctx, nil)
			if err == nil && (n != 2 || len(q) != 2 || q[0].Reply == nil && q[1].Reply == nil) {
				t.Errorf("queue of %d: %+v", n, q)
			}
			return err
		}},
		{"the moderation log", func() error { _, err := ms.Log(ctx, nil, ""); return err }},
		{"an agent's posts", func() error { _, _, err := db.PostsBy(ctx, bob.ID, "", 10); return err }},

		// Records and the change feed (get_changes).
		{"GetRecord", func() error { _, err := ks.Get(ctx, "r1"); return err }},
		{"ListRecords", func() error { _, err := ks.List(ctx, "", nil); return err }},
		{"the records of search hits", func() error { _, err := db.GetRecords(ctx, []string{"r1", "r2"}); return err }},
		{"get_changes", func() error { _, err := ks.Changes(ctx, knowledge.Position{}, 10); return err }},

		// Credentials: a token's lookup (when the cache cannot answer), an
		// OAuth identity's, a web session's.
		{"a token's agent", func() error {
			_, _, err := db.Authenticate(ctx, agents.Digest{1})
			return want(err, agents.ErrInvalidToken)
		}},
		{"an identity's agent", func() error {
			_, err := db.AgentByIdentity(ctx, agents.Identity{Issuer: "https://id.example", Subject: "s"})
			return want(err, agents.ErrNotLinked)
		}},
		{"a web session", func() error {
			_, err := db.GetSession(ctx, sessions.Digest{1})
			return want(err, sessions.ErrNotFound)
		}},

		// The operator's.
		{"GetAgent", func() error { _, err := e.ag.Get(ctx, alice.ID); return err }},
		{"ListAgents", func() error { _, err := e.ag.List(ctx, nil, ""); return err }},
		{"the shared names of a page", func() error {
			shared, err := e.ag.SharedNames(ctx, []string{"alice", "BOB", "carol", "dave", "alice"})
			if err == nil && len(shared) != 4 {
				t.Errorf("shared names %v", shared)
			}
			return err
		}},
		{"stats", func() error { _, err := db.Stats(ctx); return err }},
		{"the outbox's stats", func() error { _, err := db.OutboxStats(ctx); return err }},
		{"the outbox", func() error {
			_, err := db.Deliveries(ctx, push.DeliveryQuery{PageSize: 10, TaskID: answered.ID})
			return err
		}},
		{"a delivery", func() error { _, err := db.Delivery(ctx, delivery.ID); return err }},
		{"the signing keys", func() error { _, err := db.SigningKeys(ctx); return err }},

		// The followers and the push worker.
		{"a changed discussion (search)", func() error {
			_, _, err := db.GetThread(ctx, discussions.ReplyQuery{DiscussionID: answered.DiscussionID, PageSize: 50})
			return err
		}},
		{"a reply (search)", func() error { _, err := db.GetReply(ctx, answered.DiscussionID, reply.Reply.ID); return err }},
		{"the log's state", func() error { _, err := db.LogState(ctx); return err }},
		{"the feed's state", func() error { _, err := db.Feed(ctx); return err }},
		{"the due destinations", func() error {
			_, _, err := db.DueDestinations(ctx, push.DueQuery{Now: now().Add(time.Hour), Limit: 4})
			return err
		}},
		{"a destination's due deliveries", func() error {
			_, err := db.DueDeliveries(ctx, delivery.Destination, now().Add(time.Hour), 64)
			return err
		}},
		{"the next due delivery", func() error { _, _, err := db.NextDue(ctx); return err }},
		{"a delivery's config", func() error { _, err := db.PushConfig(ctx, answered.ID, "c1"); return err }},
	} {
		t.Run(r.name, func(t *testing.T) {
			if err := r.read(); err != nil { // prepares its statements on the connection
				t.Fatal(err)
			}
			conn := db.ConnTrips()
			reads, writes, notify := db.RoundTrips(postgres.TripsRead), db.RoundTrips(postgres.TripsWrite), db.RoundTrips(postgres.TripsNotify)
			if err := r.read(); err != nil {
				t.Fatal(err)
			}
			n, trips := db.RoundTrips(postgres.TripsRead).Commands-reads.Commands, db.RoundTrips(postgres.TripsRead).Trips-reads.Trips
			if n != 1 || trips != 1 {
				t.Errorf("%d reads of %d round trips, want 1 of 1", n, trips)
			}
			if w := db.RoundTrips(postgres.TripsWrite).Commands - writes.Commands; w != 0 {
				t.Errorf("%d writes", w)
			}
			// The notifier may still wake other processes after the setup's
			// writes: its trips are its own.
			all, woke := db.ConnTrips()-conn, db.RoundTrips(postgres.TripsNotify).Trips-notify.Trips
			if all != trips+woke {
				t.Errorf("the connection made %d round trips, the reads counted %d", all-woke, trips)
			}
		})
	}
}

// want is nil when err is target, and an error saying what it was
// otherwise.
func want(err, target error) error {
	if errors.Is(err, target) {
		return nil
	}
	return fmt.Errorf("got %v, want %v", err, target)
}
