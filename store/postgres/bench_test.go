package postgres_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/store"
	"github.com/kfa-project/kfa/tasks"
)

// BenchmarkAsksConcurrent: 32 writers each making asks (a task and a new
// discussion per ask), bbolt and PostgreSQL side by side in one run; one
// op is 2,000 asks. The test server of .ci/postgres.sh runs with fsync
// off, so the PostgreSQL figure leaves out the disk that bbolt's includes.
func BenchmarkAsksConcurrent(b *testing.B) {
	type backend interface {
		tasks.Store
		agents.Store
	}
	for _, bc := range []struct {
		name string
		open func(b *testing.B) backend
	}{
		{"bbolt", func(b *testing.B) backend {
			db, err := store.Open(filepath.Join(b.TempDir(), store.FileName), store.Options{})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = db.Close() })
			return db
		}},
		{"postgres", func(b *testing.B) backend { return openTest(b) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			const n, writers = 2000, 32
			ctx := context.Background()
			at := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
			for range b.N {
				b.StopTimer()
				db := bc.open(b)
				owners := make([]agents.Agent, writers)
				for i := range owners {
					c, err := agents.NewService(db, func() time.Time { return at }).Create(ctx, fmt.Sprint("a", i), []agents.Scope{agents.ScopePost})
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
							if _, err := db.CreateAsk(ctx, c); err != nil {
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
