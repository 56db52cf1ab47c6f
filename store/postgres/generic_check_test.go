package postgres

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/kfa-project/kfa/internal/pgtest"
	"github.com/kfa-project/kfa/storage"
)

// vote is a kind no store maps, with a counted index: kept generically.
type vote struct {
	Item, Voter string
	Up          bool
}

var (
	votes = storage.NewKind("checktest.vote", func(v *vote) storage.Key { return storage.K(v.Item, v.Voter) },
		storage.Codec[vote]{
			Encode: func(v *vote) ([]byte, error) { return json.Marshal(v) },
			Decode: func(_ storage.Key, b []byte) (vote, error) {
				var v vote
				err := json.Unmarshal(b, &v)
				return v, err
			},
		})
	votesUp = votes.Index("checktest.vote.up", func(v *vote) (storage.Key, bool) { return storage.K(v.Item), v.Up }).Counted()
)

// TestCheckGenericCounters: kfa check holds a generic counted index's
// counters to its entries (and leaves a write plan's own counters alone),
// and finds one that drifted.
func TestCheckGenericCounters(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, pgtest.URL(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, v := range []vote{{"a", "ann", true}, {"a", "bob", true}, {"a", "cat", false}, {"b", "ann", true}} {
		if err := db.Run(ctx, storage.Command{Name: "checktest", Load: func(storage.Loader) error { return nil },
			Decide: func() (*storage.Writes, error) {
				w := &storage.Writes{}
				storage.Put(w, votes, nil, &v)
				w.Add("checktest.votes", 1)
				return w, nil
			}}); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := db.Check(ctx)
	if err != nil || !rep.OK() {
		t.Fatalf("check: %v %+v", err, rep.Violations)
	}
	if _, err := db.pool.Exec(ctx, "UPDATE counters SET n = n + 1 WHERE name = $1",
		genericCounter(votesUp.Name(), storage.K("a"))); err != nil {
		t.Fatal(err)
	}
	if rep, err = db.Check(ctx); err != nil {
		t.Fatal(err)
	}
	if len(rep.Violations) != 1 || rep.Violations[0].Kind != VCounter ||
		rep.Violations[0].Detail != "counter is 3, counted 2" {
		t.Fatalf("check after a counter drifted: %+v", rep.Violations)
	}
}
