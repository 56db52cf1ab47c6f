package knowledge

import (
	"context"
	"time"

	"github.com/kfa-project/kfa/changelog"
)

// Op is the kind of change a feed entry records.
type Op string

// Feed operations.
const (
	OpUpsert Op = "upsert"
	OpDelete Op = "delete"
)

// Change is one entry of the records' change feed: a record event of the
// change log (changelog.RecordUpserted or RecordDeleted), which every
// record write appends in its own transaction. Agents read the feed as
// "changes since" (get_changes).
type Change struct {
	Pos changelog.Position `json:"pos"`
	ID  string             `json:"id"`
	Op  Op                 `json:"op"`
	At  time.Time          `json:"at"`
	// Record is the record as it is now, read in the same transaction as
	// the entry; nil for a delete, or when a later entry deleted it.
	Record *Record `json:"-"`
}

// FeedState is where the records' feed stands, in log positions.
type FeedState struct {
	First changelog.Position // the oldest record event still held; zero when none
	Last  changelog.Position // the newest record event; zero before the first
	// Trimmed is the newest record event trimming removed (zero: none): a
	// reader whose position is before it may have missed changes.
	Trimmed changelog.Position
	// Epoch identifies the log: it differs between databases, so a reader
	// notices a cursor of another one.
	Epoch string
}

// RecordPage is one page of records in id order.
type RecordPage struct {
	Records []Record
	Next    string // the id to pass as After for the next page; "" on the last one
	Total   int    // records in the store
}

// Store persists records and their change feed. Every method that writes a
// record appends its record events to the change log in the same
// transaction; trimming the feed is the log's (changelog.Trimmable).
type Store interface {
	// UpsertRecords writes recs in one transaction, deciding each with
	// Merge against what is stored, and returns one Outcome per record.
	// Unchanged records are neither written nor fed.
	UpsertRecords(ctx context.Context, recs []Record, now time.Time) ([]Outcome, error)
	// DeleteRecord removes a record and feeds the delete; ErrNotFound when
	// there is none.
	DeleteRecord(ctx context.Context, id string, at time.Time) error
	// DeleteRecords removes the records ids that exist in one
	// transaction, feeding each delete, and returns those it deleted and
	// those no record has, each in the order given.
	DeleteRecords(ctx context.Context, ids []string, at time.Time) (deleted, missing []string, err error)
	// GetRecord returns one record or ErrNotFound.
	GetRecord(ctx context.Context, id string) (Record, error)
	// ListRecords returns up to limit records with ids after after.
	ListRecords(ctx context.Context, after string, limit int) (RecordPage, error)
	// Changes returns where the records' feed stands (as Feed) and up to
	// limit record events after the log position after, oldest first,
	// each with its record as it is now, read together (one snapshot; one
	// round trip on PostgreSQL).
	Changes(ctx context.Context, after changelog.Position, limit int) (FeedState, []Change, error)
	// Feed reports where the records' feed stands.
	Feed(ctx context.Context) (FeedState, error)
	// GetRecords returns the records ids as they are now, in the order
	// given; nil where there is none.
	GetRecords(ctx context.Context, ids []string) ([]*Record, error)
}

// IndexStatus describes the search index built from the records.
type IndexStatus struct {
	Dir         string `json:"dir"`
	Records     int    `json:"records"`     // records indexed
	Discussions int    `json:"discussions"` // discussions indexed, open and answered
	// AppliedPosition is the change log position the index has applied
	// up to; LogPosition the log's newest (changelog.Position's text).
	AppliedPosition string `json:"appliedPosition"`
	LogPosition     string `json:"logPosition"`
	// SynonymGroups is the number of synonym groups the index folds.
	SynonymGroups int `json:"synonymGroups"`
	// Rebuilt is true when the index was built from scratch; Deleted when
	// it was only removed, for kfa serve to rebuild on its next start.
	Rebuilt bool `json:"rebuilt,omitempty"`
	Deleted bool `json:"deleted,omitempty"`
}
