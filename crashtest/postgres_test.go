package crashtest

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/internal/pgtest"
)

// TestCrashRecoveryPostgres is TestCrashRecovery on a PostgreSQL database
// (KFA_TEST_POSTGRES): kill -9 under load, restart, nothing acknowledged
// lost, every acknowledged transition with a push config delivered.
func TestCrashRecoveryPostgres(t *testing.T) { crashRecovery(t, pgtest.URL(t)) }

// claimLease is webhook's: how long a process's claim on a push delivery
// holds before another process may send it.
const claimLease = 2 * time.Minute

// expireClaims ends the claims on push deliveries that a process killed
// before restarted took (a claim taken later runs past restarted plus
// the lease), as their lease running out would two minutes later: the
// deliveries the killed process had in flight are then sent again by the
// restarted one, which proves they were kept, without a two-minute wait.
func expireClaims(t *testing.T, store string, restarted time.Time) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	tag, err := conn.Exec(ctx, "UPDATE push_deliveries SET claim_until_ms = NULL WHERE claim_until_ms < $1",
		restarted.Add(claimLease).UnixMilli())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d push deliveries claimed before %s: their claims ended", tag.RowsAffected(), restarted.Format(time.TimeOnly))
}
