package store_test

import (
	"context"
	"testing"

	"github.com/kfa-project/kfa/store/storetest"
)

// TestConformanceLeavesNoViolations runs the shared store suite, races
// included, and then checks every store it used: whatever the services
// do, kfa check must find nothing wrong (no false alarms).
func TestConformanceLeavesNoViolations(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Store {
		db := openTemp(t) // its Close runs after the check below
		t.Cleanup(func() {
			rep, err := db.Check(context.Background())
			if err != nil {
				t.Fatalf("check: %v", err)
			}
			for _, v := range rep.Violations {
				t.Errorf("%s %s [%s] task %s: %s", v.Kind, v.Bucket, v.Key, v.TaskID, v.Detail)
			}
		})
		return db
	})
}
