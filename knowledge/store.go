package knowledge

import (
	"context"
	"time"
)

// Op is the kind of change a feed entry records.
type Op string

// Feed operations.
const (
	OpUpsert Op = "upsert"
	OpDelete Op = "delete"
)

// Change is one entry of the change feed: every record write appends one,
// in the same transaction, with the next sequence number. The search index
// follows the feed; later, agents may read it as "changes since N".
type Change struct {
	Seq uint64    `json:"seq"`
	ID  string    `json:"id"`
	Op  Op        `json:"op"`
	At  time.Time `json:"at"`
	// Record is the record as it is now, read in the same transaction as
	// the entry; nil for a delete, or when a later entry deleted it.
	Record *Record `json:"-"`
}

// FeedState is where the feed stands.
type FeedState struct {
	First uint64 // the oldest sequence still held; 0 when the feed is empty
	Last  uint64 // the newest sequence ever written; 0 before the first write
	// Trimmed is the newest sequence retention removed (0: none): a
	// reader whose position is before it has missed changes.
	Trimmed uint64
	// Epoch identifies the feed: it differs between database files, so a
	// follower notices when the file under it was replaced.
	Epoch string
}

// RecordPage is one page of records in id order.
type RecordPage struct {
	Records []Record
	Next    string // the id to pass as After for the next page; "" on the last one
	Total   int    // records in the store
}

// Store persists records and their change feed. Every method that writes a
// record appends its feed entries in the same transaction.
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
	// Changes returns up to limit feed entries with sequences after after,
	// oldest first, each with its record as it is now.
	Changes(ctx context.Context, after uint64, limit int) ([]Change, error)
	// Feed reports the feed's first and last sequence numbers.
	Feed(ctx context.Context) (FeedState, error)
	// TrimFeed removes the entries written before before that a reader
	// starting from the beginning does not need (an entry with a later
	// one for the same record, a delete), never the newest entry of the
	// feed, and moves FeedState.Trimmed on. It returns how many it
	// removed.
	TrimFeed(ctx context.Context, before time.Time) (int, error)
}

// IndexStatus describes the search index built from the records.
type IndexStatus struct {
	Dir         string `json:"dir"`
	Records     int    `json:"records"`     // records indexed
	Discussions int    `json:"discussions"` // discussions indexed, open and answered
	AppliedSeq  uint64 `json:"appliedSeq"`  // last feed entry applied
	FeedSeq     uint64 `json:"feedSeq"`     // last feed entry written
	// SynonymGroups is the number of synonym groups the index folds.
	SynonymGroups int `json:"synonymGroups"`
	// Rebuilt is true when the index was built from scratch; Deleted when
	// it was only removed, for kfa serve to rebuild on its next start.
	Rebuilt bool `json:"rebuilt,omitempty"`
	Deleted bool `json:"deleted,omitempty"`
}
