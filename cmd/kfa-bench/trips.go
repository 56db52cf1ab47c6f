package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/push"
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

// Trips is what asks, replies and the read routes cost PostgreSQL in
// round trips, counted on the connection by the store itself
// (postgres.DB.RoundTrips, AllRoundTrips), with the ask and reply limits
// on as kfa serve's defaults have them.
type Trips struct {
	Asks    postgres.RoundTrips `json:"asks"`
	Replies postgres.RoundTrips `json:"replies"`
	// Other counts the reads and other writes made around them: none
	// when an ask is its one command.
	Other uint64 `json:"other"`
	// Reads are the read routes, each as the domain call its route makes.
	Reads []ReadTrips `json:"reads"`
}

// ReadTrips is what one read route costs: Reads calls of it, Trips round
// trips in all (every connection's, whatever made them), Max the most of
// one call.
type ReadTrips struct {
	Route string `json:"route"`
	Reads uint64 `json:"reads"`
	Trips uint64 `json:"trips"`
	Max   uint64 `json:"max"`
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
	tr := Trips{
		Asks:    since(db.RoundTrips(postgres.CmdAsk), asks0, askMax),
		Replies: since(db.RoundTrips(postgres.CmdReply), replies0, replyMax),
		Other:   db.RoundTrips(postgres.TripsRead).Commands + db.RoundTrips(postgres.TripsWrite).Commands - other0,
	}
	tr.Reads, err = measureReadTrips(ctx, db, now, asker, replier.Token)
	return tr, err
}

// measureReadTrips makes each read route's domain call on db (a pool of
// one connection) and counts every round trip of the connection during
// it: the route's cost, however the store makes it.
func measureReadTrips(ctx context.Context, db *postgres.DB, now func() time.Time, asker agents.Created, token string) ([]ReadTrips, error) {
	ag := agents.NewService(db, now)
	tk := tasks.NewService(db, tasks.Limits{}, db.Secret(), now)
	ds := discussions.NewService(db, discussions.Limits{}, db.Secret(), now)
	pol, err := push.ParseAllow([]string{"127.0.0.1"})
	if err != nil {
		return nil, err
	}
	ps := push.NewService(db, pol, db.Secret(), now)
	owner := asker.Agent.ID
	text := "round trips of the reads?"
	t, _, err := tk.Ask(ctx, tasks.AskInput{Asker: tasks.Asker{ID: owner, Name: asker.Agent.Name},
		Message:  a2a.Message{MessageID: "trips-reads", Role: a2a.RoleUser, Parts: []a2a.Part{{Text: &text}}},
		Question: text})
	if err != nil {
		return nil, fmt.Errorf("an ask to read: %w", err)
	}
	cfg, err := ps.Create(ctx, owner, t.ID, a2a.TaskPushNotificationConfig{URL: "http://127.0.0.1:9/hook"})
	if err != nil {
		return nil, fmt.Errorf("push config: %w", err)
	}
	// The NOTIFY of the writes above is sent after them, on the same
	// connection: let it go before counting.
	time.Sleep(100 * time.Millisecond)
	view := func(*tasks.Snapshot) error { return nil }
	routes := []struct {
		name string
		read func() error
	}{
		{"GetTask", func() error { return tk.ViewTask(ctx, owner, t.ID, view) }},
		{"ListTasks", func() error { _, err := tk.ViewList(ctx, owner, tasks.ListParams{}, tasks.FullView, view); return err }},
		{"GetDiscussion", func() error { _, _, err := ds.Get(ctx, t.DiscussionID, nil, ""); return err }},
		{"ListDiscussions", func() error { _, err := ds.List(ctx, "", nil, ""); return err }},
		{"Inbox", func() error { _, err := ds.Inbox(ctx, owner, false, nil, ""); return err }},
		{"GetPushConfig", func() error { _, err := ps.Get(ctx, owner, t.ID, cfg.ID); return err }},
		{"ListPushConfigs", func() error { _, _, err := ps.List(ctx, owner, t.ID, nil, ""); return err }},
		{"GetAgent", func() error { _, err := ag.Get(ctx, owner); return err }},
		{"Authenticate (uncached)", func() error { _, err := ag.Authenticate(ctx, token); return err }},
	}
	var out []ReadTrips
	for _, r := range routes {
		// The first uses prepare the statements on the connection: once
		// per connection.
		for range 2 {
			if err := r.read(); err != nil {
				return nil, fmt.Errorf("%s: %w", r.name, err)
			}
		}
		rt := ReadTrips{Route: r.name}
		for range 10 {
			before := db.AllRoundTrips()
			if err := r.read(); err != nil {
				return nil, fmt.Errorf("%s: %w", r.name, err)
			}
			n := db.AllRoundTrips() - before
			rt.Reads++
			rt.Trips += n
			rt.Max = max(rt.Max, n)
		}
		out = append(out, rt)
	}
	return out, nil
}

// tripsLine is the report's line of t, the ask's and the reply's bound
// marked met or not, then each read route's round trips.
func tripsLine(t Trips) string {
	met := "met"
	if !tripsMet(t.Asks) || !tripsMet(t.Replies) {
		met = "NOT met"
	}
	line := fmt.Sprintf("PostgreSQL round trips: %.2f per ask (most %d), %.2f per reply (most %d); target at most %d each: %s; %d other transactions around them",
		t.Asks.PerCommand(), t.Asks.Max, t.Replies.PerCommand(), t.Replies.Max, maxCommandTrips, met, t.Other)
	if len(t.Reads) > 0 {
		var cells []string
		for _, r := range t.Reads {
			cells = append(cells, fmt.Sprintf("%s %.2f (most %d)", r.Route, ratio(float64(r.Trips), float64(r.Reads)), r.Max))
		}
		line += "; per read: " + strings.Join(cells, ", ")
	}
	return line
}

// tripsMet reports whether commands measured as rt kept to
// maxCommandTrips, each of them and on average.
func tripsMet(rt postgres.RoundTrips) bool {
	return rt.Commands > 0 && rt.PerCommand() <= maxCommandTrips && rt.Max <= maxCommandTrips
}
