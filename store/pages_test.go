package store_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/store"
	"github.com/kfa-project/kfa/tasks"
)

// Pages written per ask: what an ask costs the disk. bbolt is copy on
// write, so every page a commit touched is written; an ask whose index
// entries land on pages of their own costs more I/O than its records.

// benchAsk is ask i of owner, made at now, with a new discussion.
func benchAsk(owner agents.Agent, tag string, i int, now time.Time) tasks.CreateAsk {
	text := "How do I keep an A2A task open across a server restart without losing its subscribers? " + strconv.Itoa(i)
	return tasks.NewAsk(tasks.AskInput{Asker: tasks.Asker{ID: owner.ID, Name: owner.Name}, Question: text,
		Message: a2a.Message{MessageID: tag + strconv.Itoa(i), Role: a2a.RoleUser, Parts: []a2a.Part{{Text: &text}}}}, now, 0)
}

// preloadAsks bulk-loads n asks of owners, 1 ms apart, in transactions of
// 20,000 (as the load benchmark's loader does).
func preloadAsks(tb testing.TB, db *store.DB, owners []agents.Agent, n int) {
	tb.Helper()
	const chunk = 20000
	for lo := 0; lo < n; lo += chunk {
		asks := make([]tasks.CreateAsk, 0, min(chunk, n-lo))
		for i := lo; i < min(lo+chunk, n); i++ {
			asks = append(asks, benchAsk(owners[i%len(owners)], "pre", i, t0.Add(time.Duration(i)*time.Millisecond)))
		}
		if err := db.LoadAsks(asks); err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkAskPages: 64 agents asking at once through group commit, on a
// store preloaded with 10k or 100k tasks (KFA_PAGES_PRELOAD overrides the
// larger size); reports page writes per ask (bbolt's TxStats.Write: data
// pages and the meta page of every commit) and asks per transaction. One
// op is one ask.
func BenchmarkAskPages(b *testing.B) {
	sizes := []int{10_000, 100_000}
	if v, err := strconv.Atoi(os.Getenv("KFA_PAGES_PRELOAD")); err == nil && v > 0 {
		sizes[1] = v
	}
	for _, size := range sizes {
		b.Run(fmt.Sprintf("preload=%d", size), func(b *testing.B) {
			db := openTemp(b)
			owners := testAgentsIn(b, db, 64)
			preloadAsks(b, db, owners, size)
			ctx := context.Background()
			start := t0.Add(time.Duration(size) * time.Millisecond)
			before := db.BoltStats()
			_, txBefore, _ := db.CommitCountsForTest()
			b.ResetTimer()
			var wg sync.WaitGroup
			for w := range 64 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := w; i < b.N; i += 64 {
						c := benchAsk(owners[w], "ask", i, start.Add(time.Duration(i)*time.Millisecond))
						if res, err := db.CreateAsk(ctx, c); err != nil || !res.Created {
							b.Errorf("ask %d: created=%v %v", i, res.Created, err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			after := db.BoltStats()
			_, txAfter, _ := db.CommitCountsForTest()
			b.ReportMetric(float64(after.Writes-before.Writes)/float64(b.N), "pages/ask")
			b.ReportMetric(float64(b.N)/float64(max(txAfter-txBefore, 1)), "asks/tx")
		})
	}
}
