package commands

import (
	"context"
	"time"

	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/knowledge"
	"github.com/kfa-project/kfa/storage"
)

// The knowledge records' commands. An import batch is large: it runs in a
// transaction of its own (storage.Command.Solo), decided once.

// recordKeys are the keys of ids.
func recordKeys(ids []string) []storage.Key {
	keys := make([]storage.Key, len(ids))
	for i, id := range ids {
		keys[i] = k(id)
	}
	return keys
}

// UpsertRecords implements knowledge.Store: the records of the batch's
// ids under their locks, knowledge.Merge for each, the records it writes
// and their events.
func (c *Commands) UpsertRecords(ctx context.Context, recs []knowledge.Record, now time.Time) ([]knowledge.Outcome, error) {
	ids := make([]string, len(recs))
	for i := range recs {
		ids[i] = recs[i].ID
	}
	keys := recordKeys(ids)
	var (
		found []knowledge.Record
		out   = make([]knowledge.Outcome, len(recs))
	)
	err := c.e.Run(ctx, storage.Command{Name: CmdUpsertRecords, Solo: true,
		Load: func(l storage.Loader) error {
			storage.All(l, Records, keys, storage.Lock, &found)
			return nil
		},
		Decide: func() (*storage.Writes, error) {
			stored := make(map[string]*knowledge.Record, len(found))
			for i := range found {
				stored[found[i].ID] = &found[i]
			}
			w := &storage.Writes{}
			for i, in := range recs {
				old := stored[in.ID]
				rec, o := knowledge.Merge(old, in, now)
				out[i] = o
				if !o.Writes() {
					continue
				}
				next := rec
				storage.Put(w, Records, old, &next)
				// A later record of the same id in the batch merges with this one.
				stored[in.ID] = &next
				w.Log(now, knowledge.UpsertedEvent(&next))
			}
			return w, nil
		}})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// DeleteRecord implements knowledge.Store: the record under its lock,
// knowledge.DecideDeletes, its delete and event; knowledge.ErrNotFound
// when there is none.
func (c *Commands) DeleteRecord(ctx context.Context, id string, at time.Time) error {
	_, missing, err := c.DeleteRecords(ctx, []string{id}, at)
	if err == nil && len(missing) > 0 {
		return knowledge.ErrNotFound
	}
	return err
}

// DeleteRecords implements knowledge.Store: the records of ids under
// their locks, knowledge.DecideDeletes, the deletes and their events.
func (c *Commands) DeleteRecords(ctx context.Context, ids []string, at time.Time) (deleted, missing []string, err error) {
	keys := recordKeys(ids)
	var found []knowledge.Record
	err = c.e.Run(ctx, storage.Command{Name: CmdDeleteRecords, Solo: true,
		Load: func(l storage.Loader) error {
			storage.All(l, Records, keys, storage.Lock, &found)
			return nil
		},
		Decide: func() (*storage.Writes, error) {
			stored := make(map[string]*knowledge.Record, len(found))
			exists := make(map[string]bool, len(found))
			for i := range found {
				stored[found[i].ID], exists[found[i].ID] = &found[i], true
			}
			var evs []changelog.Event
			deleted, missing, evs = knowledge.DecideDeletes(ids, exists, at)
			w := &storage.Writes{}
			for _, id := range deleted {
				storage.Delete(w, Records, stored[id])
			}
			w.Log(at, evs...)
			return w, nil
		}})
	if err != nil {
		return nil, nil, err
	}
	return deleted, missing, nil
}
