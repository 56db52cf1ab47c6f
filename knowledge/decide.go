package knowledge

import (
	"time"

	"github.com/kfa-project/kfa/changelog"
)

// The records' commands, as pure decisions beside Merge: a store loads
// the records an import or a delete names and writes what these return.

// UpsertedEvent is the log event of r written (added or updated).
func UpsertedEvent(r *Record) changelog.Event {
	return changelog.Event{Kind: changelog.RecordUpserted, ID: r.ID, At: r.UpdatedAt}
}

// Writes reports whether an upsert's outcome writes its record: an
// unchanged record is neither written nor fed.
func (o Outcome) Writes() bool { return o != Unchanged }

// DecideDeletes decides the delete of ids at at, given which of them
// exist: the ids deleted (each once, in the order given) with their log
// events, and the ids that name no record.
func DecideDeletes(ids []string, exists map[string]bool, at time.Time) (deleted, missing []string, evs []changelog.Event) {
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		if !exists[id] {
			missing = append(missing, id)
			continue
		}
		deleted = append(deleted, id)
		evs = append(evs, changelog.Event{Kind: changelog.RecordDeleted, ID: id, At: at})
	}
	return deleted, missing, evs
}

// ChangeOp is the change a record event of kind k says: a deletion, or
// an upsert (whose record a reader of the feed is given).
func ChangeOp(k changelog.Kind) Op {
	if k == changelog.RecordDeleted {
		return OpDelete
	}
	return OpUpsert
}

// EventKind is the log event kind of a change op (the records' feed
// before the change log, schema migrations and kfa migrate read ops).
func EventKind(op Op) changelog.Kind {
	if op == OpDelete {
		return changelog.RecordDeleted
	}
	return changelog.RecordUpserted
}

// Carries reports whether a change of op carries its record.
func (op Op) Carries() bool { return op == OpUpsert }
