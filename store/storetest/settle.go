package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/kfa-project/kfa/changelog"
)

// Settle waits until every event committed so far is readable: a test
// that reads the change log (or the records' feed over it) waits here
// first. On PostgreSQL an event is hidden while a transaction that began
// before it still runs, anywhere on the cluster: another test's, in its
// own database, holds it back for as long as that transaction lasts, and
// on a shared, loaded cluster that is often. On bbolt it returns at once.
func Settle(t testing.TB, l changelog.Log) {
	t.Helper()
	deadline := time.Now().Add(time.Minute) // a guard, not a measure
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		tail, err := l.ReadTail(context.Background(), changelog.Position{Tx: 1 << 62}, 1)
		if err != nil {
			t.Fatal(err)
		}
		if tail.Held.IsZero() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the log's events written since %s are still not readable", tail.Held)
		}
		time.Sleep(wait)
	}
}
