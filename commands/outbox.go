package commands

import (
	"context"
	"time"

	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/storage"
)

// RecordAttempt implements push.OutboxStore: the delivery under its
// lock, push.DecideAttempt, the delivery.
func (c *Commands) RecordAttempt(ctx context.Context, id string, a push.Attempt) (push.Delivery, error) {
	var d *push.Delivery
	var out push.Delivery
	err := c.e.Run(ctx, storage.Command{Name: CmdAttempt, Bookkeeping: true,
		Load: func(l storage.Loader) error {
			storage.One(l, Deliveries, k(id), storage.Lock, &d)
			return nil
		},
		Decide: func() (*storage.Writes, error) {
			var record bool
			var err error
			if out, record, err = push.DecideAttempt(d, a); err != nil || !record {
				return nil, err
			}
			w := &storage.Writes{}
			storage.Put(w, Deliveries, d, &out)
			return w, nil
		}})
	return out, err
}

// RetryDelivery implements push.OutboxStore: the delivery under its lock
// and whether its config exists, push.DecideRetry, the delivery and its
// event. (The config is found through the delivery's fields, so the load
// takes two round trips on PostgreSQL: an operator's action.)
func (c *Commands) RetryDelivery(ctx context.Context, id string, at time.Time) (push.Delivery, error) {
	var (
		d   *push.Delivery
		cfg *push.Config
		out push.Delivery
	)
	err := c.e.Run(ctx, storage.Command{Name: CmdRetry,
		Load: func(l storage.Loader) error {
			cfg = nil
			storage.One(l, Deliveries, k(id), storage.Lock, &d)
			if err := l.Flush(); err != nil || d == nil {
				return err
			}
			storage.One(l, PushConfigs, k(d.TaskID, d.ConfigID), storage.Read, &cfg)
			return nil
		},
		Decide: func() (*storage.Writes, error) {
			next, ev, err := push.DecideRetry(d, cfg != nil, at)
			if err != nil {
				return nil, err
			}
			out = next
			w := &storage.Writes{}
			storage.Put(w, Deliveries, d, &out)
			w.Log(at, ev)
			return w, nil
		}})
	return out, err
}

// PurgeDeliveries implements push.OutboxStore: the final deliveries up to
// push.PurgeBound, of each final state in id order (under their locks),
// push.DecidePurge, their deletes.
func (c *Commands) PurgeDeliveries(ctx context.Context, before time.Time, limit int) (int, error) {
	found := make([][]push.Delivery, len(push.FinalStates))
	var doomed []push.Delivery
	err := c.e.Run(ctx, storage.Command{Name: CmdPurge, Bookkeeping: true,
		Load: func(l storage.Loader) error {
			bound := push.PurgeBound(before)
			for i, st := range push.FinalStates {
				state := DeliveryState(st)
				found[i] = found[i][:0]
				l.Range(storage.Range{Index: DeliveriesByState, Prefix: k(state), Of: storage.NoRef, To: k(state, bound),
					Limit: limit, Mode: storage.Lock, Dst: &found[i]})
			}
			return nil
		},
		Decide: func() (*storage.Writes, error) {
			var all []push.Delivery
			for _, ds := range found {
				all = append(all, ds...)
			}
			doomed = push.DecidePurge(all, before, limit)
			w := &storage.Writes{}
			for i := range doomed {
				storage.Delete(w, Deliveries, &doomed[i])
			}
			return w, nil
		}})
	return len(doomed), err
}

// ClaimDelivery is push.Claimer's claim as a command (a store whose
// destination locks can end while their sender lives implements Claimer
// with it): the delivery under its lock, push.DecideClaim, the delivery
// due at until.
func (c *Commands) ClaimDelivery(ctx context.Context, id string, at, until time.Time) (bool, error) {
	var (
		d       *push.Delivery
		claimed bool
	)
	err := c.e.Run(ctx, storage.Command{Name: CmdClaim,
		Load: func(l storage.Loader) error {
			storage.One(l, Deliveries, k(id), storage.Lock, &d)
			return nil
		},
		Decide: func() (*storage.Writes, error) {
			var out push.Delivery
			if out, claimed = push.DecideClaim(d, at, until); !claimed {
				return nil, nil
			}
			w := &storage.Writes{}
			storage.Put(w, Deliveries, d, &out)
			return w, nil
		}})
	return claimed && err == nil, err
}

var _ interface {
	RecordAttempt(context.Context, string, push.Attempt) (push.Delivery, error)
	RetryDelivery(context.Context, string, time.Time) (push.Delivery, error)
	PurgeDeliveries(context.Context, time.Time, int) (int, error)
} = (*Commands)(nil)
