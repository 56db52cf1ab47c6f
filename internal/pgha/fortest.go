package pgha

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/kfa-project/kfa/internal/pgtest"
)

// Require skips t unless the machine runs PostgreSQL servers for the
// tests: like every test that needs PostgreSQL, a cluster test runs when
// KFA_TEST_POSTGRES is set (.ci/postgres.sh and .ci/run set it, on a
// machine with the server binaries pgha uses too), and fails without it
// under KFA_REQUIRE_POSTGRES=1.
func Require(t testing.TB) {
	t.Helper()
	if os.Getenv(pgtest.EnvURL) != "" {
		return
	}
	if os.Getenv(pgtest.EnvRequire) == "1" {
		t.Fatalf("%s=1 but %s is not set", pgtest.EnvRequire, pgtest.EnvURL)
	}
	t.Skipf("%s is not set: no PostgreSQL server to test against (.ci/postgres.sh start DIR starts one and prints its URL; .ci/run does it)", pgtest.EnvURL)
}

// ForTest gives t a new cluster (after Require), closed when t ends.
func ForTest(t testing.TB) *Cluster {
	t.Helper()
	Require(t)
	c, err := New("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// Pair starts a primary named a with a database db, and its synchronous
// standby named b: the setup that loses nothing at a failover.
func (c *Cluster) Pair(ctx context.Context, db string) (primary, standby *Node, err error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if primary, err = c.Primary(ctx, "a"); err != nil {
		return nil, nil, err
	}
	if err := primary.Exec(ctx, "CREATE DATABASE "+db); err != nil {
		return nil, nil, err
	}
	if standby, err = c.Standby(ctx, "b", primary); err != nil {
		return nil, nil, err
	}
	if err := primary.SetSync(ctx, true); err != nil {
		return nil, nil, err
	}
	return primary, standby, nil
}
