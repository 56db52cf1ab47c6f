package knowledge

import (
	"fmt"
	"testing"
	"time"

	"github.com/kfa-project/kfa/changelog"
)

func TestDecideDeletes(t *testing.T) {
	at := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	deleted, missing, evs := DecideDeletes([]string{"a", "x", "b", "a"}, map[string]bool{"a": true, "b": true}, at)
	if fmt.Sprint(deleted, missing) != "[a b] [x]" || len(evs) != 2 || evs[1].ID != "b" || evs[1].Kind != changelog.RecordDeleted {
		t.Fatalf("DecideDeletes = %v %v %+v", deleted, missing, evs)
	}
}

func TestChangeOps(t *testing.T) {
	for _, op := range []Op{OpUpsert, OpDelete} {
		if ChangeOp(EventKind(op)) != op {
			t.Errorf("op %s does not come back from its event kind", op)
		}
	}
	if !OpUpsert.Carries() || OpDelete.Carries() || Unchanged.Writes() || !Added.Writes() || !Updated.Writes() {
		t.Error("an upsert carries its record, a deletion none; every outcome but unchanged writes")
	}
}
