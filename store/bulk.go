package store

import (
	"fmt"
	"runtime"
	"sync"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/asknet"
	"github.com/kfa-project/kfa/tasks"
)

// LoadAsks writes many asks in one transaction, each through the same code
// as CreateAsk, so the file ends up exactly as if every ask had been sent:
// records, indexes, counters and message-id entries included. It is the
// bulk loader of the load benchmark (cmd/kfa-bench), for a store that no
// server holds; requests never use it. It is all or nothing: an ask that
// CreateAsk would refuse, or a retried message id, fails the whole load.
// The asks must have no open-task bound (MaxOpen 0).
//
// It is faster than the asks one by one because the records are encoded
// on every core first, one transaction and one fsync cover them all, and
// the index entries and counters are written at the end, bucket by bucket
// in key order, each counter once.
func (s *DB) LoadAsks(asks []tasks.CreateAsk) error {
	if s.readOnly {
		return errReadOnly
	}
	recs := make([]askRecords, len(asks))
	errs := make([]error, len(asks))
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(asks); i += workers {
				recs[i], errs[i] = encodeAsk(&asks[i])
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	for i := range asks {
		if asks[i].AskRate.Enabled() || asks[i].MaxOpen > 0 {
			// Both would decide on counters the load writes only at its end.
			return fmt.Errorf("store: load ask %d: a bulk load takes no ask rate and no open-task bound", i)
		}
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		tuneTx(tx)
		batch := newIndexBatch()
		for i := range asks {
			var (
				st  asknet.AskState
				out asknet.AskOutcome
			)
			write, err := s.askCommand(&asks[i], &recs[i], batch, &st, &out)(tx)
			if err != nil {
				return fmt.Errorf("store: load ask %d (task %s): %w", i, asks[i].Task.ID, err)
			}
			if write == nil {
				return fmt.Errorf("store: load ask %d: message id %q of %s is already taken", i, asks[i].Task.MessageID, asks[i].Task.OwnerID)
			}
			if err := write(tx); err != nil {
				return fmt.Errorf("store: load ask %d (task %s): %w", i, asks[i].Task.ID, err)
			}
		}
		return batch.apply(tx)
	})
}
