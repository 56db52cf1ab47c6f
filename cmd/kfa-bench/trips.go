package main

import (
	"context"
	"fmt"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/ratelimit"
	"github.com/kfa-project/kfa/store/postgres"
	"github.com/kfa-project/kfa/tasks"
)

// maxAskTrips is issue 24's bound on the round trips of one ask to
// PostgreSQL (its engine targets).
const maxAskTrips = 3

// maxCommandTrips is issue 32's, of one ask and of one reply: BEGIN with
// every load, then the writes with COMMIT (the commands' seam keeps every
// command to it).
const maxCommandTrips = 2

// Trips is what asks and replies cost PostgreSQL in round trips, counted
// on the connection by the store itself (postgres.DB.RoundTrips), with
// the ask and reply limits on as kfa serve's defaults have them.
type Trips struct {
	Asks    postgres.RoundTrips `json:"asks"`
	Replies postgres.RoundTrips `json:"replies"`
	// Other counts the reads and other writes made around them: none
	// when an ask is its one command.
	Other uint64 `json:"other"`
}

// tripsRounds is how many asks and replies measureTrips makes, after a
// warm-up that lets pgx prepare the statements on the connection.
const tripsRounds = 50

// measureTrips makes asks and replies through the domain services on a
// store opened on url, and reads their round trips.
func measureTrips(ctx context.Context, url string) (Trips, error) {
	db, err := postgres.Open(ctx, url, postgres.Options{MaxConns: 1})
	if err != nil {
		return Trips{}, err
	}
	defer db.Close()
	now := time.Now
	ag := agents.NewService(db, now)
	tk := tasks.NewService(db, tasks.Limits{AskRate: ratelimit.PerMinute(1_000_000), MaxOpen: 1_000_000}, db.Secret(), now)
	ds := discussions.NewService(db, discussions.Limits{ReplyRate: ratelimit.PerMinute(1_000_000), MaxReplies: 1_000_000},
		db.Secret(), now)
	asker, err := ag.Create(ctx, "trips-asker", []agents.Scope{agents.ScopePost})
	if err != nil {
		return Trips{}, err
	}
	replier, err := ag.Create(ctx, "trips-replier", []agents.Scope{agents.ScopePost})
	if err != nil {
		return Trips{}, err
	}
	// round asks and replies once, and says what the ask cost.
	var askMax, replyMax uint64
	round := func(i int) error {
		text := fmt.Sprintf("round trips %d?", i)
		before := db.RoundTrips(postgres.CmdAsk).Trips
		t, _, err := tk.Ask(ctx, tasks.AskInput{Asker: tasks.Asker{ID: asker.Agent.ID, Name: asker.Agent.Name},
			Message:  a2a.Message{MessageID: fmt.Sprint("trips-", i), Role: a2a.RoleUser, Parts: []a2a.Part{{Text: &text}}},
			Question: text})
		if err != nil {
			return err
		}
		askMax = max(askMax, db.RoundTrips(postgres.CmdAsk).Trips-before)
		before = db.RoundTrips(postgres.CmdReply).Trips
		_, err = ds.Reply(ctx, discussions.Author{ID: replier.Agent.ID, Name: replier.Agent.Name}, t.DiscussionID, "an answer")
		replyMax = max(replyMax, db.RoundTrips(postgres.CmdReply).Trips-before)
		return err
	}
	for i := range 3 {
		if err := round(-1 - i); err != nil {
			return Trips{}, err
		}
	}
	askMax, replyMax = 0, 0
	asks0, replies0 := db.RoundTrips(postgres.CmdAsk), db.RoundTrips(postgres.CmdReply)
	other0 := db.RoundTrips(postgres.TripsRead).Commands + db.RoundTrips(postgres.TripsWrite).Commands
	for i := range tripsRounds {
		if err := round(i); err != nil {
			return Trips{}, err
		}
	}
	since := func(a, b postgres.RoundTrips, most uint64) postgres.RoundTrips {
		return postgres.RoundTrips{Commands: a.Commands - b.Commands, Trips: a.Trips - b.Trips, Max: most}
	}
	return Trips{
		Asks:    since(db.RoundTrips(postgres.CmdAsk), asks0, askMax),
		Replies: since(db.RoundTrips(postgres.CmdReply), replies0, replyMax),
		Other:   db.RoundTrips(postgres.TripsRead).Commands + db.RoundTrips(postgres.TripsWrite).Commands - other0,
	}, nil
}

// tripsLine is the report's line of t, the ask's bound marked met or not.
func tripsLine(t Trips) string {
	met := "met"
	if !tripsMet(t.Asks) || !tripsMet(t.Replies) {
		met = "NOT met"
	}
	return fmt.Sprintf("PostgreSQL round trips: %.2f per ask (most %d), %.2f per reply (most %d); target at most %d each: %s; %d other transactions around them",
		t.Asks.PerCommand(), t.Asks.Max, t.Replies.PerCommand(), t.Replies.Max, maxCommandTrips, met, t.Other)
}

// tripsMet reports whether commands measured as rt kept to
// maxCommandTrips, each of them and on average.
func tripsMet(rt postgres.RoundTrips) bool {
	return rt.Commands > 0 && rt.PerCommand() <= maxCommandTrips && rt.Max <= maxCommandTrips
}
