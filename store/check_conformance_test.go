package store_test

import (
	"context"
	"testing"

	"github.com/kfa-project/kfa/store"
)

// checkAtCleanup runs kfa check on db when the test ends (before db
// closes: cleanups run last-registered first) and fails the test on any
// violation. The conformance suite uses it so that whatever the services
// write, races included, check raises no false alarm.
func checkAtCleanup(t *testing.T, db *store.DB) *store.DB {
	t.Helper()
	t.Cleanup(func() {
		rep, err := db.Check(context.Background())
		if err != nil {
			t.Fatalf("check: %v", err)
		}
		for _, v := range rep.Violations {
			t.Errorf("check after the test: %s %s [%s] task %s: %s", v.Kind, v.Bucket, v.Key, v.TaskID, v.Detail)
		}
	})
	return db
}
