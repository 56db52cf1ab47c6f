package store

import (
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/tasks"
)

// LoadAsks writes many asks in one transaction, each through the same code
// as CreateAsk, so the file ends up exactly as if every ask had been sent:
// records, indexes, counters and message-id entries included. It is the
// bulk loader of the load benchmark (cmd/kfa-bench), for a store that no
// server holds; requests never use it. It is all or nothing: an ask that
// CreateAsk would refuse, or a retried message id, fails the whole load.
func (s *DB) LoadAsks(asks []tasks.CreateAsk) error {
	if s.readOnly {
		return errReadOnly
	}
	recs := make([]askRecords, len(asks))
	for i := range asks {
		var err error
		if recs[i], err = encodeAsk(&asks[i]); err != nil {
			return err
		}
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		tuneTx(tx)
		for i := range asks {
			_, created, err := createAsk(tx, &asks[i], &recs[i])
			if err != nil {
				return fmt.Errorf("store: load ask %d (task %s): %w", i, asks[i].Task.ID, err)
			}
			if !created {
				return fmt.Errorf("store: load ask %d: message id %q of %s is already taken", i, asks[i].Task.MessageID, asks[i].Task.OwnerID)
			}
		}
		return nil
	})
}
