package storetest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/knowledge"
)

// RecordsOpener returns a fresh, empty records store for one test; it
// registers its own cleanup with t.
type RecordsOpener func(t *testing.T) knowledge.Store

// RunRecords runs the records and change feed suite.
func RunRecords(t *testing.T, open RecordsOpener) {
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, open RecordsOpener)
	}{
		{"UpsertOutcomes", testUpsertOutcomes},
		{"DeleteRecord", testDeleteRecord},
		{"DeleteRecords", testDeleteRecords},
		{"ListRecordsPages", testListRecordsPages},
		{"ChangesShowRecordsAsNow", testChangesAsNow},
		{"FeedEpoch", testFeedEpoch},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open) })
	}
}

func record(id, title string) knowledge.Record {
	return knowledge.Record{ID: id, Kind: "fix", Title: title, Body: "body of " + id}
}

var (
	rt0 = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	rt1 = rt0.Add(time.Hour)
)

// feedView is what a refused or empty write must leave as it was.
type feedView struct {
	feed    knowledge.FeedState
	records []knowledge.Record
	total   int
}

func viewFeed(t *testing.T, s knowledge.Store) feedView {
	t.Helper()
	if l, ok := s.(changelog.Log); ok {
		Settle(t, l)
	}
	ctx := context.Background()
	st, err := s.Feed(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.ListRecords(ctx, "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	return feedView{feed: st, records: p.Records, total: p.Total}
}

func (v feedView) equal(o feedView) bool {
	return v.feed == o.feed && v.total == o.total && slices.EqualFunc(v.records, o.records, func(a, b knowledge.Record) bool {
		return a.ID == b.ID && a.Title == b.Title && a.UpdatedAt.Equal(b.UpdatedAt) && a.SameContent(&b)
	})
}

func testUpsertOutcomes(t *testing.T, open RecordsOpener) {
	ctx := context.Background()
	given := record("given", "has a time")
	given.UpdatedAt = rt0.Add(-24 * time.Hour)
	tagged := record("a", "A")
	tagged.Tags = []string{"x"}
	regiven := given
	regiven.UpdatedAt = rt0
	for _, tc := range []struct {
		name        string
		first, then []knowledge.Record // upserted at rt0, then at rt1
		want        []knowledge.Outcome
		wantUpdated time.Time // then[0]'s stored updatedAt afterwards
		wantFeed    int       // record events in the log afterwards
	}{
		{"new record is added and stamped", nil, []knowledge.Record{record("a", "A")},
			[]knowledge.Outcome{knowledge.Added}, rt1, 1},
		{"identical content is unchanged", []knowledge.Record{record("a", "A")}, []knowledge.Record{record("a", "A")},
			[]knowledge.Outcome{knowledge.Unchanged}, rt0, 1},
		{"changed title is updated", []knowledge.Record{record("a", "A")}, []knowledge.Record{record("a", "A2")},
			[]knowledge.Outcome{knowledge.Updated}, rt1, 2},
		{"given updatedAt is kept", nil, []knowledge.Record{given},
			[]knowledge.Outcome{knowledge.Added}, given.UpdatedAt, 1},
		{"same given updatedAt is unchanged", []knowledge.Record{given}, []knowledge.Record{given},
			[]knowledge.Outcome{knowledge.Unchanged}, given.UpdatedAt, 1},
		{"a new given updatedAt is an update", []knowledge.Record{given}, []knowledge.Record{regiven},
			[]knowledge.Outcome{knowledge.Updated}, rt0, 2},
		{"tags are content", []knowledge.Record{record("a", "A")}, []knowledge.Record{tagged},
			[]knowledge.Outcome{knowledge.Updated}, rt1, 2},
		{"a duplicate id in one batch sees the first write", nil,
			[]knowledge.Record{record("a", "A"), record("a", "A"), record("a", "B")},
			[]knowledge.Outcome{knowledge.Added, knowledge.Unchanged, knowledge.Updated}, rt1, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			if tc.first != nil {
				if _, err := s.UpsertRecords(ctx, tc.first, rt0); err != nil {
					t.Fatal(err)
				}
			}
			before := viewFeed(t, s)
			got, err := s.UpsertRecords(ctx, tc.then, rt1)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("outcomes %v, want %v", got, tc.want)
			}
			unchanged := !slices.ContainsFunc(got, func(o knowledge.Outcome) bool { return o != knowledge.Unchanged })
			if unchanged != before.equal(viewFeed(t, s)) {
				t.Fatalf("all unchanged = %v, but the store changed = %v", unchanged, !unchanged)
			}
			r, err := s.GetRecord(ctx, tc.then[0].ID)
			if err != nil {
				t.Fatal(err)
			}
			if !r.UpdatedAt.Equal(tc.wantUpdated) {
				t.Fatalf("updatedAt %s, want %s", r.UpdatedAt, tc.wantUpdated)
			}
			if n := len(allChanges(t, s)); n != tc.wantFeed {
				t.Fatalf("%d changes in the feed, want %d", n, tc.wantFeed)
			}
		})
	}
}

func testDeleteRecord(t *testing.T, open RecordsOpener) {
	ctx := context.Background()
	s := open(t)
	if _, err := s.UpsertRecords(ctx, []knowledge.Record{record("a", "A"), record("b", "B")}, rt0); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteRecord(ctx, "a", rt1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetRecord(ctx, "a"); !errors.Is(err, knowledge.ErrNotFound) {
		t.Fatalf("get after delete: %v, want ErrNotFound", err)
	}
	before := viewFeed(t, s)
	if err := s.DeleteRecord(ctx, "a", rt1); !errors.Is(err, knowledge.ErrNotFound) {
		t.Fatalf("second delete: %v, want ErrNotFound", err)
	}
	if !before.equal(viewFeed(t, s)) {
		t.Fatal("a refused delete changed the store")
	}
	if before.total != 1 || len(before.records) != 1 || before.records[0].ID != "b" {
		t.Fatalf("after delete: total %d, records %+v", before.total, before.records)
	}
	ch := allChanges(t, s)
	want := []struct {
		id     string
		op     knowledge.Op
		record bool
	}{{"a", knowledge.OpUpsert, false}, {"b", knowledge.OpUpsert, true}, {"a", knowledge.OpDelete, false}}
	if len(ch) != len(want) {
		t.Fatalf("%d changes, want %d", len(ch), len(want))
	}
	for i, w := range want {
		c := ch[i]
		if c.ID != w.id || c.Op != w.op || (c.Record != nil) != w.record {
			t.Fatalf("change %d = {pos %s id %s op %s record %v}, want %+v", i, c.Pos, c.ID, c.Op, c.Record != nil, w)
		}
	}
	if !ch[2].At.Equal(rt1) {
		t.Fatalf("delete at %s, want %s", ch[2].At, rt1)
	}
}

func testDeleteRecords(t *testing.T, open RecordsOpener) {
	ctx := context.Background()
	s := open(t)
	if _, err := s.UpsertRecords(ctx, []knowledge.Record{record("a", "A"), record("b", "B"), record("c", "C")}, rt0); err != nil {
		t.Fatal(err)
	}
	deleted, missing, err := s.DeleteRecords(ctx, []string{"c", "x", "a"}, rt1)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(deleted, []string{"c", "a"}) || !slices.Equal(missing, []string{"x"}) {
		t.Fatalf("deleted %v missing %v, want [c a] [x]", deleted, missing)
	}
	v := viewFeed(t, s)
	if n := len(allChanges(t, s)); v.total != 1 || len(v.records) != 1 || v.records[0].ID != "b" || n != 5 {
		t.Fatalf("after deleting: total %d, records %+v, %d changes", v.total, v.records, n)
	}
	before := v
	if deleted, missing, err = s.DeleteRecords(ctx, []string{"x", "y"}, rt1); err != nil || len(deleted) != 0 || len(missing) != 2 {
		t.Fatalf("deleting missing ids: %v %v %v", deleted, missing, err)
	}
	if !before.equal(viewFeed(t, s)) {
		t.Fatal("deleting only missing ids changed the store")
	}
}

func testListRecordsPages(t *testing.T, open RecordsOpener) {
	ctx := context.Background()
	s := open(t)
	ids := []string{"a", "b", "c", "d", "e"}
	var recs []knowledge.Record
	for _, id := range slices.Backward(ids) {
		recs = append(recs, record(id, id))
	}
	if _, err := s.UpsertRecords(ctx, recs, rt0); err != nil {
		t.Fatal(err)
	}
	var got []string
	after := ""
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatal("pagination does not end")
		}
		p, err := s.ListRecords(ctx, after, 2)
		if err != nil {
			t.Fatal(err)
		}
		if p.Total != len(ids) {
			t.Fatalf("total %d, want %d", p.Total, len(ids))
		}
		for _, r := range p.Records {
			got = append(got, r.ID)
		}
		if p.Next == "" {
			break
		}
		after = p.Next
	}
	if !slices.Equal(got, ids) {
		t.Fatalf("listed %v, want %v", got, ids)
	}
}

// testChangesAsNow: a change carries its record as it is now, not as it
// was when the entry was written.
func testChangesAsNow(t *testing.T, open RecordsOpener) {
	ctx := context.Background()
	s := open(t)
	if _, err := s.UpsertRecords(ctx, []knowledge.Record{record("a", "A1"), record("b", "B")}, rt0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpsertRecords(ctx, []knowledge.Record{record("a", "A2")}, rt1); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteRecord(ctx, "b", rt1); err != nil {
		t.Fatal(err)
	}
	ch := allChanges(t, s)
	if len(ch) != 4 {
		t.Fatalf("%d changes, want 4", len(ch))
	}
	if ch[0].Record == nil || ch[0].Record.Title != "A2" || ch[1].Record != nil {
		t.Fatalf("first entries' records %+v %+v, want a as A2 and none for b", ch[0].Record, ch[1].Record)
	}
	if _, later, err := s.Changes(ctx, ch[2].Pos, 10); err != nil || len(later) != 1 || later[0].Pos != ch[3].Pos {
		t.Fatalf("changes after the third: %+v %v", later, err)
	}
	if _, page, err := s.Changes(ctx, changelog.Position{}, 2); err != nil || len(page) != 2 || page[1].Pos != ch[1].Pos {
		t.Fatalf("two changes: %+v %v", page, err)
	}
	// The feed's state comes with every page, empty or not, as Feed says
	// it.
	want, err := s.Feed(ctx)
	if err != nil || want.Last != ch[3].Pos || want.Epoch == "" {
		t.Fatalf("feed %+v %v, want the last at %s", want, err, ch[3].Pos)
	}
	for _, after := range []changelog.Position{{}, ch[1].Pos, ch[3].Pos} {
		if st, _, err := s.Changes(ctx, after, 2); err != nil || st != want {
			t.Fatalf("the feed after %s: %+v %v, want %+v", after, st, err, want)
		}
	}
}

// allChanges reads the whole records feed, checking that positions grow.
func allChanges(t *testing.T, s knowledge.Store) []knowledge.Change {
	t.Helper()
	if l, ok := s.(changelog.Log); ok {
		Settle(t, l)
	}
	var out []knowledge.Change
	var after changelog.Position
	for {
		_, page, err := s.Changes(context.Background(), after, 3)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range page {
			if !after.Before(c.Pos) {
				t.Fatalf("change %s at %s does not come after %s", c.ID, c.Pos, after)
			}
			after = c.Pos
		}
		out = append(out, page...)
		if len(page) < 3 {
			return out
		}
	}
}

func testFeedEpoch(t *testing.T, open RecordsOpener) {
	ctx := context.Background()
	a, err := open(t).Feed(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := open(t).Feed(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if a.Epoch == "" || a.Epoch == b.Epoch {
		t.Fatalf("epochs %q and %q: want two different, non-empty", a.Epoch, b.Epoch)
	}
	if !a.First.IsZero() || !a.Last.IsZero() || !a.Trimmed.IsZero() {
		t.Fatalf("an empty feed: %+v", a)
	}
}
