package store

import (
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/commands"
	"github.com/kfa-project/kfa/storage"
	"github.com/kfa-project/kfa/tasks"
)

// LoadAsks writes many asks in one transaction, each through the ask's
// plan (commands.CreateAsk), so the file ends up exactly as if every ask
// had been sent: records, indexes, counters and message-id entries
// included. It is the bulk loader of the load benchmark (cmd/kfa-bench),
// for a store that no server holds; requests never use it. It is all or
// nothing: an ask that CreateAsk would refuse, or a retried message id,
// fails the whole load. The asks must have no rate and no open-task
// bound.
//
// It is faster than the asks one by one because one transaction and one
// fsync cover them all, and the task index entries and counters are
// written at the end, bucket by bucket in key order, each counter once.
func (s *DB) LoadAsks(asks []tasks.CreateAsk) error {
	if s.readOnly {
		return errReadOnly
	}
	for i := range asks {
		if asks[i].AskRate.Enabled() || asks[i].MaxOpen > 0 {
			// Both would decide on counters the load writes only at its end.
			return fmt.Errorf("store: load ask %d: a bulk load takes no ask rate and no open-task bound", i)
		}
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		tuneTx(tx)
		e := &bulkEngine{s: s, tx: tx, moves: newIndexBatch()}
		cmds := commands.New(e)
		for i := range asks {
			res, err := cmds.CreateAsk(context.Background(), asks[i])
			if err != nil {
				return fmt.Errorf("store: load ask %d (task %s): %w", i, asks[i].Task.ID, err)
			}
			if !res.Created {
				return fmt.Errorf("store: load ask %d: message id %q of %s is already taken", i, asks[i].Task.MessageID, asks[i].Task.OwnerID)
			}
		}
		return e.moves.apply(tx)
	})
}

// bulkEngine runs every command in one transaction, collecting the task
// index entries of all of them in one batch (LoadAsks applies it).
type bulkEngine struct {
	s     *DB
	tx    *bolt.Tx
	moves *indexBatch
}

// Run implements storage.Engine in the bulk transaction.
func (e *bulkEngine) Run(_ context.Context, c storage.Command) error {
	r := e.s.newRun(e.tx)
	r.moves, r.bulk = e.moves, true
	if err := c.Load(r); err != nil {
		return err
	}
	if r.err != nil {
		return r.err
	}
	w, err := c.Decide()
	if err != nil || w.Empty() {
		return err
	}
	return r.write(w, nil)
}

// View implements storage.Engine in the bulk transaction.
func (e *bulkEngine) View(_ context.Context, _ string, load func(storage.Loader) error) error {
	r := e.s.newRun(e.tx)
	if err := load(r); err != nil {
		return err
	}
	return r.err
}
