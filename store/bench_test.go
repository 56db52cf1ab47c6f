package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/tasks"
)

// The store's share of the reply paths, without HTTP (make microbench).

// BenchmarkReplyFanout: one reply completing 1,000 waiting tasks of 64
// agents, fsync included.
func BenchmarkReplyFanout(b *testing.B) {
	ctx := context.Background()
	for range b.N {
		b.StopTimer()
		db := openTemp(b)
		owners := testAgentsIn(b, db, 65)
		text := "q"
		ask := func(i int, join string) tasks.CreateAsk {
			return tasks.NewAsk(tasks.AskInput{Asker: tasks.Asker{ID: owners[i%64].ID, Name: "a"}, Question: text, JoinDiscussionID: join,
				Message: a2a.Message{MessageID: fmt.Sprint("m", i), Role: a2a.RoleUser, Parts: []a2a.Part{{Text: &text}}}},
				t0.Add(time.Duration(i)*time.Millisecond), 0)
		}
		asks := []tasks.CreateAsk{ask(0, "")}
		for i := 1; i < 1000; i++ {
			asks = append(asks, ask(i, asks[0].Task.DiscussionID))
		}
		if err := db.LoadAsks(asks); err != nil {
			b.Fatal(err)
		}
		r := discussions.Reply{ID: ulid.Make().String(), DiscussionID: asks[0].Task.DiscussionID, AuthorID: owners[64].ID,
			AuthorName: "r", Body: "answer", CreatedAt: t0.Add(time.Hour)}
		b.StartTimer()
		res, err := db.AddReply(ctx, r, discussions.Limits{})
		b.StopTimer()
		if err != nil || len(res.CompletedTaskIDs) != 1000 {
			b.Fatalf("%v, %d completed", err, len(res.CompletedTaskIDs))
		}
		_ = db.Close()
	}
}

// BenchmarkRepliesConcurrent: 64 writers replying, each reply completing
// the one task of its own discussion; one op is 4,000 replies.
func BenchmarkRepliesConcurrent(b *testing.B) {
	const n = 4000
	ctx := context.Background()
	for range b.N {
		b.StopTimer()
		db := openTemp(b)
		owners := testAgentsIn(b, db, 65)
		text := "q"
		asks := make([]tasks.CreateAsk, n)
		for i := range asks {
			asks[i] = tasks.NewAsk(tasks.AskInput{Asker: tasks.Asker{ID: owners[i%64].ID, Name: "a"}, Question: text,
				Message: a2a.Message{MessageID: fmt.Sprint("m", i), Role: a2a.RoleUser, Parts: []a2a.Part{{Text: &text}}}},
				t0.Add(time.Duration(i)*time.Millisecond), 0)
		}
		if err := db.LoadAsks(asks); err != nil {
			b.Fatal(err)
		}
		var wg sync.WaitGroup
		b.StartTimer()
		for w := range 64 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; i < n; i += 64 {
					r := discussions.Reply{ID: ulid.Make().String(), DiscussionID: asks[i].Task.DiscussionID, AuthorID: owners[64].ID,
						AuthorName: "r", Body: "answer", CreatedAt: t0.Add(time.Hour)}
					if _, err := db.AddReply(ctx, r, discussions.Limits{}); err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		b.StopTimer()
		_ = db.Close()
	}
}
