package postgres

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/internal/pgtest"
	"github.com/kfa-project/kfa/tasks"
)

// BenchmarkAskTotals: asks (each opens a discussion) from two processes
// (two pools on one database, 16 writers each), with the discussion
// totals as migration 10 keeps them (sharded by connection), as one row
// per status would keep them (every ask of every process updates the same
// row, held until its commit), and without totals; one op is 2,000 asks.
// It is why the totals are sharded: see docs/scale-out.md.
func BenchmarkAskTotals(b *testing.B) {
	for _, v := range []struct {
		name  string
		setup string // SQL run on the database before the asks
	}{
		{"sharded", ""},
		{"one row", "CREATE OR REPLACE FUNCTION kfa_discussion_totals() RETURNS trigger LANGUAGE plpgsql AS $$" +
			strings.ReplaceAll(strings.SplitN(strings.SplitN(migrationSQL(b, 10), "LANGUAGE plpgsql AS $$", 2)[1], "END $$;", 2)[0],
				"pg_backend_pid() % 16", "0") + "END $$"},
		{"none", "DROP TRIGGER discussions_inserted ON discussions"},
	} {
		b.Run(v.name, func(b *testing.B) {
			const n, writers = 2000, 32
			ctx := context.Background()
			at := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
			for range b.N {
				b.StopTimer()
				url := pgtest.URL(b)
				var dbs [2]*DB
				for i := range dbs {
					db, err := Open(ctx, url, Options{})
					if err != nil {
						b.Fatal(err)
					}
					defer db.Close()
					dbs[i] = db
				}
				if v.setup != "" {
					if _, err := dbs[0].pool.Exec(ctx, v.setup); err != nil {
						b.Fatal(err)
					}
				}
				owners := make([]agents.Agent, writers)
				for i := range owners {
					c, err := agents.NewService(dbs[0], func() time.Time { return at }).Create(ctx, fmt.Sprint("a", i), []agents.Scope{agents.ScopePost})
					if err != nil {
						b.Fatal(err)
					}
					owners[i] = c.Agent
				}
				text := "q"
				var wg sync.WaitGroup
				b.StartTimer()
				for w := range writers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := w; i < n; i += writers {
							c := tasks.NewAsk(tasks.AskInput{Asker: tasks.Asker{ID: owners[w].ID, Name: "a"}, Question: text,
								Message: a2a.Message{MessageID: fmt.Sprint("m", i), Role: a2a.RoleUser, Parts: []a2a.Part{{Text: &text}}}},
								at.Add(time.Duration(i)*time.Millisecond), 0)
							if _, err := dbs[w%2].CreateAsk(ctx, c); err != nil {
								b.Error(err)
								return
							}
						}
					}()
				}
				wg.Wait()
				b.StopTimer()
			}
		})
	}
}

// migrationSQL is the text of migration version.
func migrationSQL(b *testing.B, version int) string {
	ms, err := migrations()
	if err != nil || len(ms) < version {
		b.Fatalf("migration %d: %v", version, err)
	}
	return ms[version-1].sql
}
