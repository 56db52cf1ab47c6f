package storetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/knowledge"
	"github.com/kfa-project/kfa/tasks"
)

// trimEnv is a store with its log, cursors and trimming, and a clock that
// decides when each event is written.
type trimEnv struct {
	*env
	log  changelog.Log
	cur  changelog.Cursors
	trim changelog.Trimmable
	recs knowledge.Store
}

func newTrimEnv(t *testing.T, open Opener) *trimEnv {
	t.Helper()
	e := newEnv(t, open, tasks.Limits{})
	te := &trimEnv{env: e, log: e.store}
	var ok1, ok2, ok3 bool
	te.cur, ok1 = e.store.(changelog.Cursors)
	te.trim, ok2 = e.store.(changelog.Trimmable)
	te.recs, ok3 = e.store.(knowledge.Store)
	if !ok1 || !ok2 || !ok3 {
		t.Fatalf("the store keeps no cursors (%v), cannot trim (%v) or has no records (%v)", ok1, ok2, ok3)
	}
	return te
}

// agentEvents makes n agents now: n agent.created events written now.
func (e *trimEnv) agentEvents(t *testing.T, prefix string, n int) []changelog.Event {
	t.Helper()
	Settle(t, e.log)
	st, err := e.log.LogState(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		e.agent(t, fmt.Sprintf("%s-%d", prefix, i))
	}
	return readAll(t, e.log, st.Last, 100)
}

// kept lists the subjects of the events the log holds, oldest first.
func (e *trimEnv) kept(t *testing.T) string {
	t.Helper()
	var ids []string
	for _, ev := range readAll(t, e.log, changelog.Position{}, 7) {
		ids = append(ids, ev.ID)
	}
	return strings.Join(ids, ",")
}

func (e *trimEnv) trimBefore(t *testing.T, before time.Time) int {
	t.Helper()
	Settle(t, e.log)
	n, err := e.trim.TrimLog(context.Background(), before)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func eventIDs(evs []changelog.Event) string {
	var out []string
	for _, e := range evs {
		out = append(out, e.ID)
	}
	return strings.Join(out, ",")
}

// testChangeLogTrim: the log is trimmed behind the retention horizon and
// the slowest live durable cursor; a cursor not updated within the
// horizon holds nothing back and goes; the newest event always stays; a
// reader before the trimmed point can tell.
func testChangeLogTrim(t *testing.T, open Opener) {
	t.Run("Horizon", func(t *testing.T) {
		e := newTrimEnv(t, open)
		old := e.agentEvents(t, "old", 3)
		e.clock.Advance(48 * time.Hour)
		fresh := e.agentEvents(t, "new", 2)
		horizon := e.clock.Now().Add(-24 * time.Hour)
		if n := e.trimBefore(t, old[0].At); n != 0 {
			t.Fatalf("a horizon before every event trimmed %d", n)
		}
		if n := e.trimBefore(t, horizon); n != 3 {
			t.Fatalf("trimmed %d events, want the 3 written before the horizon", n)
		}
		if got := e.kept(t); got != eventIDs(fresh) {
			t.Fatalf("the log holds %s, want %s", got, eventIDs(fresh))
		}
		st, err := e.log.LogState(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if st.Trimmed != old[2].Pos || st.First != fresh[0].Pos || st.Last != fresh[1].Pos {
			t.Fatalf("state %+v; want trimmed at %s, first %s, last %s", st, old[2].Pos, fresh[0].Pos, fresh[1].Pos)
		}
		// A reader whose position is before the trimmed point can tell
		// it may have missed events; one at the trimmed point cannot have.
		tail, err := e.log.ReadTail(context.Background(), old[0].Pos, 10)
		if err != nil {
			t.Fatal(err)
		}
		if !old[0].Pos.Before(tail.Trimmed) || old[2].Pos.Before(tail.Trimmed) {
			t.Fatalf("tail's trimmed point %s: a reader at %s must see it is behind, one at %s not", tail.Trimmed, old[0].Pos, old[2].Pos)
		}
		if n := e.trimBefore(t, horizon); n != 0 {
			t.Fatalf("a second trim removed %d", n)
		}
	})

	t.Run("NewestStays", func(t *testing.T) {
		e := newTrimEnv(t, open)
		evs := e.agentEvents(t, "a", 2)
		if n := e.trimBefore(t, e.clock.Now().Add(time.Hour)); n != 1 {
			t.Fatalf("trimmed %d, want all but the newest", n)
		}
		if got := e.kept(t); got != evs[1].ID {
			t.Fatalf("the log holds %s, want only the newest event %s", got, evs[1].ID)
		}
	})

	t.Run("SlowestCursor", func(t *testing.T) {
		e := newTrimEnv(t, open)
		ctx := context.Background()
		evs := e.agentEvents(t, "a", 5)
		e.clock.Advance(48 * time.Hour)
		now := e.clock.Now()
		horizon := now.Add(-24 * time.Hour)
		must(t, e.cur.SaveCursor(ctx, "fast", evs[4].Pos, now))
		must(t, e.cur.SaveCursor(ctx, "slow", evs[1].Pos, now))
		if n := e.trimBefore(t, horizon); n != 2 {
			t.Fatalf("trimmed %d, want the 2 events the slow cursor has passed", n)
		}
		if got, want := e.kept(t), eventIDs(evs[2:]); got != want {
			t.Fatalf("the log holds %s, want %s", got, want)
		}
		must(t, e.cur.SaveCursor(ctx, "slow", evs[3].Pos, now))
		if n := e.trimBefore(t, horizon); n != 2 {
			t.Fatalf("trimmed %d after the slow cursor moved on, want 2", n)
		}
		if got := e.kept(t); got != evs[4].ID {
			t.Fatalf("the log holds %s, want the newest %s", got, evs[4].ID)
		}
	})

	t.Run("StaleCursor", func(t *testing.T) {
		e := newTrimEnv(t, open)
		ctx := context.Background()
		must(t, e.cur.SaveCursor(ctx, "dead", changelog.Position{}, e.clock.Now()))
		evs := e.agentEvents(t, "a", 3)
		e.clock.Advance(48 * time.Hour)
		now := e.clock.Now()
		must(t, e.cur.SaveCursor(ctx, "live", evs[2].Pos, now))
		if n := e.trimBefore(t, now.Add(-24*time.Hour)); n != 2 {
			t.Fatalf("trimmed %d: a cursor not updated within the horizon must hold nothing back", n)
		}
		cs, err := e.cur.ListCursors(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(cs) != 1 || cs[0].Name != "live" || cs[0].Pos != evs[2].Pos || !cs[0].Updated.Equal(now) {
			t.Fatalf("cursors %+v, want only the live one", cs)
		}
	})

	t.Run("RecordsFeed", func(t *testing.T) { testTrimRecordsFeed(t, newTrimEnv(t, open)) })

	t.Run("WhileWriting", func(t *testing.T) {
		e := newTrimEnv(t, open)
		e.agentEvents(t, "old", 20)
		e.clock.Advance(48 * time.Hour)
		horizon := e.clock.Now().Add(-24 * time.Hour)
		Settle(t, e.log)
		start, err := e.log.LogState(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		e.agent(t, "fresh") // the newest event, which stays, is not an old one
		// Writers append fresh events while two trims run: trimming
		// removes exactly the old events, and no fresh one.
		var wg sync.WaitGroup
		const writers, each = 4, 5
		for w := range writers {
			wg.Go(func() {
				for i := range each {
					if _, err := e.ag.Create(context.Background(), fmt.Sprintf("fresh-%d-%d", w, i), []agents.Scope{agents.ScopeRead}); err != nil {
						t.Error(err)
					}
				}
			})
		}
		counts := make([]int, 2)
		for i := range counts {
			wg.Go(func() { counts[i] = e.trimBefore(t, horizon) })
		}
		wg.Wait()
		if counts[0]+counts[1] != 20 {
			t.Fatalf("two trims removed %d and %d, want 20 between them", counts[0], counts[1])
		}
		fresh := readAll(t, e.log, start.Last, 100)
		all := readAll(t, e.log, changelog.Position{}, 100)
		if len(fresh) != writers*each+1 || !slices.EqualFunc(all, fresh, func(a, b changelog.Event) bool { return a.Pos == b.Pos }) {
			t.Fatalf("after trimming while writing: %d events held, %d fresh ones written; want exactly the fresh ones", len(all), len(fresh))
		}
	})
}

// testTrimRecordsFeed: among the record events, trimming keeps the latest
// of each record however old (a reader of the feed starting over needs
// it), removes older ones and deletions past the horizon, and keeps the
// newest record event; the feed says where it was trimmed.
func testTrimRecordsFeed(t *testing.T, e *trimEnv) {
	ctx := context.Background()
	t0 := e.clock.Now()
	t1, t2 := t0.Add(time.Hour), t0.Add(2*time.Hour)
	upsert := func(at time.Time, recs ...knowledge.Record) {
		t.Helper()
		if _, err := e.recs.UpsertRecords(ctx, recs, at); err != nil {
			t.Fatal(err)
		}
	}
	// a, b, c at t0; a again and c deleted at t1, with an agent between;
	// d at t2.
	upsert(t0, record("a", "A"), record("b", "B"), record("c", "C"))
	upsert(t1, record("a", "A2"))
	e.clock.Advance(time.Hour)
	e.agent(t, "between")
	must(t, e.recs.DeleteRecord(ctx, "c", t1))
	upsert(t2, record("d", "D"))
	all := allChanges(t, e.recs)
	if n := e.trimBefore(t, t0); n != 0 {
		t.Fatalf("trim before everything: %d", n)
	}
	// Before t1+1ms: a's first entry (a has a later one), c's (deleted
	// later), c's deletion and the agent go; b's and a's latest stay.
	if n := e.trimBefore(t, t1.Add(time.Millisecond)); n != 4 {
		t.Fatalf("trimmed %d, want 4", n)
	}
	var left []string
	for _, c := range allChanges(t, e.recs) {
		left = append(left, c.ID+":"+string(c.Op))
	}
	if strings.Join(left, ",") != "b:upsert,a:upsert,d:upsert" {
		t.Fatalf("the feed holds %v", left)
	}
	st, err := e.recs.Feed(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.First != all[1].Pos || st.Last != all[5].Pos || st.Trimmed != all[4].Pos {
		t.Fatalf("feed %+v; want first %s (b), last %s (d), trimmed at %s (c's deletion)", st, all[1].Pos, all[5].Pos, all[4].Pos)
	}
	// The newest record event stays even when it is an old deletion.
	must(t, e.recs.DeleteRecord(ctx, "d", t2))
	e.clock.Advance(3 * time.Hour)
	e.agent(t, "after")
	e.trimBefore(t, t2.Add(time.Hour))
	after := allChanges(t, e.recs)
	if n := len(after); n == 0 || after[n-1].ID != "d" || after[n-1].Op != knowledge.OpDelete {
		t.Fatalf("after trimming all: %+v, want d's deletion kept as the newest record event", after)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
