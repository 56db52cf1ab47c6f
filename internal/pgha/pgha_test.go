package pgha_test

import (
	"context"
	"testing"
	"time"

	"github.com/kfa-project/kfa/internal/pgha"
)

// TestFailoverAndBack: a synchronous pair loses its primary, the standby
// is promoted and keeps every committed row, the old primary is rewound
// into its standby, and the pair fails back the same way.
func TestFailoverAndBack(t *testing.T) {
	c := pgha.ForTest(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	a, err := c.Primary(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Standby(ctx, "b", a)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.SetSync(ctx, true); err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(a.Exec(ctx, "CREATE TABLE t (n int)"))
	must(a.Exec(ctx, "INSERT INTO t VALUES (1)"))
	count := func(n *pgha.Node) int {
		t.Helper()
		var k int
		must(n.QueryRow(ctx, "postgres", "SELECT count(*) FROM t", nil, &k))
		return k
	}
	primary, standby := a, b
	for round := 1; round <= 2; round++ {
		must(primary.Stop(ctx, "immediate"))
		must(standby.Promote(ctx))
		if k := count(standby); k != round {
			t.Fatalf("round %d: the promoted standby has %d rows, want %d", round, k, round)
		}
		must(standby.Exec(ctx, "INSERT INTO t VALUES ($1)", round+1))
		must(primary.Rewind(ctx, standby))
		must(standby.SetSync(ctx, true))
		primary, standby = standby, primary
		must(primary.WaitReplayed(ctx, standby.Name))
		if k := count(standby); k != round+1 {
			t.Fatalf("round %d: the rewound standby has %d rows, want %d", round, k, round+1)
		}
	}
	var ro bool
	must(standby.QueryRow(ctx, "postgres", "SELECT pg_is_in_recovery()", nil, &ro))
	if !ro {
		t.Fatal("the rewound node is not a standby")
	}
}
