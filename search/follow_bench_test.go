package search

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/tasks"
)

// processCPU is the CPU time the process has used (user and system).
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Skip("no rusage:", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkFollowAsks: 32 clients ask through the tasks service while the
// index follows the log; the process's CPU per ask, the index's share
// included, by the least time between two passes of the follower.
func BenchmarkFollowAsks(b *testing.B) {
	for _, gap := range []time.Duration{-1, followGap, 4 * followGap} {
		b.Run(fmt.Sprintf("gap=%s", max(gap, 0)), func(b *testing.B) {
			dir := b.TempDir()
			db := openStore(b, dir)
			idx, err := Open(context.Background(), Options{Dir: filepath.Join(dir, "index"), Changes: db, Records: db, Discussions: db, gap: gap})
			if err != nil {
				b.Fatal(err)
			}
			defer idx.Close()
			idx.Start(context.Background())
			svc := tasks.NewService(db, tasks.Limits{}, db.Secret(), time.Now)
			asker := tasks.Asker{ID: newAgent(b, db, "bench"), Name: "bench"}
			b.ResetTimer()
			cpu := processCPU(b)
			var wg sync.WaitGroup
			next := make(chan int)
			for range 32 {
				wg.Go(func() {
					for i := range next {
						q := fmt.Sprintf("How do I tune the widget number %d for the gizmo?", i)
						if _, _, err := svc.Ask(context.Background(), tasks.AskInput{Asker: asker, Question: q,
							Message: a2a.Message{MessageID: ulid.Make().String(), Role: a2a.RoleUser, Parts: []a2a.Part{a2a.TextPart(q)}}}); err != nil {
							b.Error(err)
						}
					}
				})
			}
			for i := range b.N {
				next <- i
			}
			close(next)
			wg.Wait()
			if err := idx.Sync(context.Background()); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			b.ReportMetric(float64((processCPU(b)-cpu).Microseconds())/float64(b.N), "cpu-µs/ask")
		})
	}
}
