package store

import (
	"testing"

	"github.com/kfa-project/kfa/knowledge"
	"github.com/kfa-project/kfa/store/storetest"
)

// TestRecordsConformance runs the records and feed suite against bbolt.
func TestRecordsConformance(t *testing.T) {
	storetest.RunRecords(t, func(t *testing.T) knowledge.Store { return setup(t) })
}
