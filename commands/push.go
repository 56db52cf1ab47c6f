package commands

import (
	"context"
	"time"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/storage"
)

// maxTaskRows bounds what a command loads of one task's configs or
// deliveries: far more than any --push-max-configs allows, and than the
// transitions a task makes times its configs.
const maxTaskRows = 10_000

// taskRef is what the config rules need of a loaded task (nil: none).
func taskRef(t *Task) *push.TaskRef {
	if t == nil {
		return nil
	}
	return &push.TaskRef{ID: t.ID, OwnerID: t.OwnerID, State: t.State}
}

// loadOwnedTask queues the load of task id if ownerID owns it (any owner
// when ""), under its lock, its header only: another owner's task is
// loaded, and locked, as an unknown one is, not at all, and so is
// everything loaded under it.
func loadOwnedTask(l storage.Loader, id, ownerID string, dst **Task) storage.Ref {
	*dst = nil
	return l.Get(storage.Get{Type: Tasks, Key: k(id), Mode: storage.Lock, Owner: ownerID, Brief: true, Dst: dst})
}

// ownerAgent queues the load of the agent of an owner's command under a
// share lock (actingAgent), into dst; the operator's (ownerID "") has
// none.
func ownerAgent(l storage.Loader, ownerID string, dst **agents.Agent) {
	*dst = nil
	if ownerID != "" {
		actingAgent(l, ownerID, dst)
	}
}

// PutPushConfig implements push.ConfigStore: the owner under a share
// lock, the task of the config's owner under its lock and its config ids, push.DecidePut, the config.
func (c *Commands) PutPushConfig(ctx context.Context, cfg push.Config, max int) (push.Config, bool, error) {
	var (
		owner   *agents.Agent
		task    *Task
		keys    []storage.Key
		created bool
	)
	err := c.e.Run(ctx, storage.Command{Name: CmdPutConfig,
		Load: func(l storage.Loader) error {
			ownerAgent(l, cfg.OwnerID, &owner)
			ref := loadOwnedTask(l, cfg.TaskID, cfg.OwnerID, &task)
			l.Range(storage.Range{Index: PushConfigs.Keys(), Of: ref, Limit: maxTaskRows, Keys: &keys})
			return nil
		},
		Decide: func() (*storage.Writes, error) {
			st := push.PutState{Owner: owner, Task: taskRef(task)}
			for _, key := range keys {
				st.ConfigIDs = append(st.ConfigIDs, key[1])
			}
			var err error
			if created, err = push.DecidePut(st, cfg, max); err != nil {
				return nil, err
			}
			w := &storage.Writes{}
			storage.Put(w, PushConfigs, nil, &cfg)
			return w, nil
		}})
	if err != nil {
		return push.Config{}, false, err
	}
	return cfg, created, nil
}

// DeletePushConfig implements push.ConfigStore: the owner under a share
// lock, the task of ownerID under its lock, its configs, and its deliveries under their locks,
// push.DecideDelete, the config's delete and the deliveries it fails.
func (c *Commands) DeletePushConfig(ctx context.Context, ownerID, taskID, id string, at time.Time) (bool, error) {
	var (
		owner      *agents.Agent
		task       *Task
		configs    []push.Config
		deliveries []push.Delivery
		out        push.DeleteOutcome
	)
	err := c.e.Run(ctx, storage.Command{Name: CmdDeleteConfig,
		Load: func(l storage.Loader) error {
			ownerAgent(l, ownerID, &owner)
			ref := loadOwnedTask(l, taskID, ownerID, &task)
			storage.Under(l, PushConfigs.Keys(), ref, maxTaskRows, storage.Read, &configs)
			storage.Under(l, DeliveriesByTask, ref, maxTaskRows, storage.Lock, &deliveries)
			return nil
		},
		Decide: func() (*storage.Writes, error) {
			st := push.DeleteState{Owner: owner, Task: taskRef(task), Pending: deliveries}
			var cfg *push.Config
			for i := range configs {
				if configs[i].ID == id {
					cfg, st.Exists = &configs[i], true
				}
			}
			var err error
			if out, err = push.DecideDelete(st, ownerID, id, at); err != nil || !out.Deleted {
				return nil, err
			}
			loaded := make(map[string]*push.Delivery, len(deliveries))
			for i := range deliveries {
				loaded[deliveries[i].ID] = &deliveries[i]
			}
			w := &storage.Writes{}
			storage.Delete(w, PushConfigs, cfg)
			for i := range out.Failed {
				storage.Put(w, Deliveries, loaded[out.Failed[i].ID], &out.Failed[i])
			}
			return w, nil
		}})
	return out.Deleted, err
}
