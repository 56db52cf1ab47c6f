package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/kfa-project/kfa/tasks"
)

// BenchmarkListTasksPage: an owner's first page of 50 tasks, without a
// filter, in a store of 10,000 asks from 20 owners, a third of them
// canceled: what the ListTasks phase of make bench reads, without HTTP.
func BenchmarkListTasksPage(b *testing.B) {
	ctx := context.Background()
	db := openTemp(b)
	owners := testAgentsIn(b, db, 20)
	asks := testAsks(owners, 10_000)
	if err := db.LoadAsks(asks); err != nil {
		b.Fatal(err)
	}
	for i, c := range asks {
		if i%3 == 0 {
			if _, _, err := db.CancelTask(ctx, "", c.Task.ID, t0.Add(time.Hour+time.Duration(i)*time.Millisecond)); err != nil {
				b.Fatal(err)
			}
		}
	}
	q := tasks.ListQuery{OwnerID: owners[3].ID, PageSize: 50}
	view := func(*tasks.Snapshot) error { return nil }
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, total, err := db.ViewSnapshots(ctx, q, view); err != nil || total != 500 {
			b.Fatalf("total %d: %v", total, err)
		}
	}
}
