package postgres_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/store"
	"github.com/kfa-project/kfa/tasks"
)

// BenchmarkReads: the read routes the bench compares (GetTask, a
// 50-task ListTasks page as the A2A binding asks for it, a page of
// discussions, a discussion with its replies), through the domain
// services, on bbolt and PostgreSQL side by side in one run, 16 readers
// at a time. The ratio of the two is what make bench's PostgreSQL targets
// measure from outside, without the HTTP around it.
func BenchmarkReads(b *testing.B) {
	type backend interface {
		tasks.Store
		agents.Store
		discussions.Store
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
			ctx := context.Background()
			db := bc.open(b)
			at := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
			now := func() time.Time { return at }
			ag, tk := agents.NewService(db, now), tasks.NewService(db, tasks.Limits{}, nil, now)
			ds := discussions.NewService(db, discussions.Limits{}, nil, now)
			var owners [2]agents.Agent
			for i := range owners {
				c, err := ag.Create(ctx, fmt.Sprint("a", i), []agents.Scope{agents.ScopePost})
				if err != nil {
					b.Fatal(err)
				}
				owners[i] = c.Agent
			}
			// 200 asks of owner 0, every other one answered by owner 1.
			var ids []string
			var disc string
			for i := range 200 {
				text := fmt.Sprintf("how do I do thing %d with the frobnicator?", i)
				c := tasks.NewAsk(tasks.AskInput{Asker: tasks.Asker{ID: owners[0].ID, Name: "a0"}, Question: text,
					Message: a2a.Message{MessageID: fmt.Sprint("m", i), Role: a2a.RoleUser, Parts: []a2a.Part{{Text: &text}}}},
					at.Add(time.Duration(i)*time.Millisecond), 0)
				t, err := db.CreateAsk(ctx, c)
				if err != nil {
					b.Fatal(err)
				}
				ids = append(ids, t.Task.ID)
				if i%2 == 0 {
					disc = t.Task.DiscussionID
					if _, err := ds.Reply(ctx, discussions.Author{ID: owners[1].ID, Name: "a1"}, disc,
						"use the flux capacitor, and read the manual first"); err != nil {
						b.Fatal(err)
					}
				}
			}
			size := 50
			for _, r := range []struct {
				name string
				read func(i int) error
			}{
				{"GetTask", func(i int) error {
					return tk.ViewTask(ctx, owners[0].ID, ids[i%len(ids)], func(*tasks.Snapshot) error { return nil })
				}},
				{"ListTasks", func(int) error {
					_, err := tk.ViewList(ctx, owners[0].ID, tasks.ListParams{PageSize: &size}, tasks.View{}, func(*tasks.Snapshot) error { return nil })
					return err
				}},
				{"ListDiscussions", func(int) error { _, err := ds.List(ctx, "", nil, ""); return err }},
				{"GetDiscussion", func(int) error { _, _, err := ds.Get(ctx, disc, nil, ""); return err }},
			} {
				b.Run(r.name, func(b *testing.B) {
					b.SetParallelism(8)
					b.ResetTimer()
					b.RunParallel(func(pb *testing.PB) {
						i := 0
						for pb.Next() {
							i++
							if err := r.read(i); err != nil {
								b.Error(err)
								return
							}
						}
					})
				})
			}
		})
	}
}
