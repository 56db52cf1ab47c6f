package pgha_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/kfa-project/kfa/internal/pgha"
	"github.com/kfa-project/kfa/internal/pgtest"
)

// cluster gives t a new cluster, closed when t ends. Like every test that
// needs PostgreSQL it runs when KFA_TEST_POSTGRES says that the machine
// runs PostgreSQL servers, and fails without it under
// KFA_REQUIRE_POSTGRES=1.
func cluster(t *testing.T) *pgha.Cluster {
	t.Helper()
	if os.Getenv(pgtest.EnvURL) == "" {
		if os.Getenv(pgtest.EnvRequire) == "1" {
			t.Fatalf("%s=1 but %s is not set", pgtest.EnvRequire, pgtest.EnvURL)
		}
		t.Skipf("%s is not set: no PostgreSQL server to test against (.ci/postgres.sh start DIR starts one and prints its URL; .ci/run does it)", pgtest.EnvURL)
	}
	c, err := pgha.New("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// TestFailoverAndBack: a synchronous pair loses its primary, the standby
// is promoted and keeps every committed row, the old primary is rewound
// into its standby, and the pair fails back the same way.
func TestFailoverAndBack(t *testing.T) {
	c := cluster(t)
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
