package search

import (
	"encoding/json"

	"github.com/blevesearch/bleve/v2"

	"github.com/kfa-project/kfa/changelog"
)

// appliedState is the last change log event the index applied, written
// in the same batch as the documents it indexed, so that after a crash
// the index resumes from whatever batch reached the disk. The log's epoch
// and the kind and subject of that event are kept beside its position so
// that an index facing another log notices: another database has another
// epoch, and a restored backup of the same one no longer has the same
// event at Pos. Discussions counts the discussions indexed. Walking says
// that the discussions written before the index was built are still
// being indexed, in the background, from the page after WalkAfter (see
// walk.go).
type appliedState struct {
	Epoch       string             `json:"epoch"`
	Pos         changelog.Position `json:"-"`
	Kind        changelog.Kind     `json:"kind,omitempty"`
	ID          string             `json:"id,omitempty"`
	Discussions int                `json:"discussions"`
	// Followed counts the documents followed from peers indexed.
	Followed  int    `json:"followed,omitempty"`
	Walking   bool   `json:"walking,omitempty"`
	WalkAfter string `json:"walkAfter,omitempty"`
}

// stateRecord is appliedState as the index holds it; an index of an
// older kfa holds a feed sequence instead ("seq"), and no "pos".
type stateRecord struct {
	appliedState
	Pos string `json:"pos"`
}

func readState(idx bleve.Index) (appliedState, bool, error) {
	v, err := idx.GetInternal(keyFeed)
	if err != nil || v == nil {
		return appliedState{}, false, err
	}
	var r stateRecord
	if err := json.Unmarshal(v, &r); err != nil || r.Pos == "" {
		return appliedState{}, false, nil // unreadable or older: treated as absent, so rebuilt
	}
	p, err := changelog.ParsePosition(r.Pos)
	if err != nil {
		return appliedState{}, false, nil
	}
	st := r.appliedState
	st.Pos = p
	return st, true, nil
}

func (st appliedState) encode() []byte {
	b, _ := json.Marshal(stateRecord{appliedState: st, Pos: st.Pos.String()})
	return b
}
