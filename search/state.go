package search

import (
	"encoding/json"
	"time"

	"github.com/blevesearch/bleve/v2"
)

// appliedState is the last feed entry the records index applied. The
// feed's epoch and the id and time of that entry are kept beside its
// sequence number so that an index facing another feed notices: another
// database file has another epoch, and a restored backup of the same file
// no longer has the same entry at Seq.
type appliedState struct {
	Epoch string    `json:"epoch"`
	Seq   uint64    `json:"seq"`
	ID    string    `json:"id,omitempty"`
	At    time.Time `json:"at,omitzero"`
}

func readState(idx bleve.Index) (appliedState, bool, error) {
	v, err := idx.GetInternal(keyFeed)
	if err != nil || v == nil {
		return appliedState{}, false, err
	}
	var st appliedState
	if err := json.Unmarshal(v, &st); err != nil {
		return appliedState{}, false, nil // unreadable: treated as absent, so rebuilt
	}
	return st, true, nil
}

func (st appliedState) encode() []byte {
	b, _ := json.Marshal(st)
	return b
}
