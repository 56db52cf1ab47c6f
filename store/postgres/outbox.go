package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/oklog/ulid/v2"

	"github.com/kfa-project/kfa/commands"
	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/storage"
	"github.com/kfa-project/kfa/store/internal/storedoc"
)

const counterPushPending = "push|pending"

// stateCode is a state's code in push_deliveries.state (the schema's).
func stateCode(s push.State) string { return commands.DeliveryState(s) }

// due reports whether d is due (the schema's DeliveriesDue: the pending
// ones): counted, and given a next attempt.
func due(d *push.Delivery) bool {
	_, ok := commands.DeliveriesDue.Entry(d)
	return ok
}

// putDelivery writes d, which was old (nil for a new delivery), moving
// the pending counter in acc.
func putDelivery(ctx context.Context, tx execer, old, d *push.Delivery, acc deltas) error {
	v, err := storedoc.EncodeDelivery(d)
	if err != nil {
		return err
	}
	if old != nil && due(old) {
		acc.add(counterPushPending, -1)
	}
	if due(d) {
		acc.add(counterPushPending, 1)
	}
	var next *int64
	if due(d) {
		ms := d.NextAt.UnixMilli()
		next = &ms
	}
	if old == nil {
		_, err = tx.Exec(ctx, `INSERT INTO push_deliveries (id, task_id, state, next_ms, destination, doc)
			VALUES ($1, $2, $3, $4, $5, $6)`, d.ID, d.TaskID, stateCode(d.State), next, d.Destination, v)
		return err
	}
	_, err = tx.Exec(ctx, "UPDATE push_deliveries SET state = $2, next_ms = $3, doc = $4 WHERE id = $1",
		d.ID, stateCode(d.State), next, v)
	return err
}

// dueWalk is the skip scan of DueDestinations: each step is one probe of
// push_deliveries_destination for the first pending delivery of the next
// destination, whose next_ms is that destination's earliest. It stops
// once it found $3 destinations due at $2 and not in $5, or visited $4.
const dueWalk = `WITH RECURSIVE walk(destination, next_ms, visited, found) AS (
    SELECT f.destination, f.next_ms, 1, (f.next_ms <= $2 AND f.destination <> ALL($5))::int
    FROM (SELECT destination, next_ms FROM push_deliveries
          WHERE state = 'p' AND destination > $1 ORDER BY destination, next_ms LIMIT 1) f
  UNION ALL
    SELECT nx.destination, nx.next_ms, w.visited + 1, w.found + (nx.next_ms <= $2 AND nx.destination <> ALL($5))::int
    FROM walk w, LATERAL (SELECT destination, next_ms FROM push_deliveries
          WHERE state = 'p' AND destination > w.destination ORDER BY destination, next_ms LIMIT 1) nx
    WHERE w.found < $3 AND w.visited < $4
)
SELECT destination, next_ms FROM walk ORDER BY visited`

// DueDestinations implements push.OutboxStore in one query (dueWalk).
func (s *DB) DueDestinations(ctx context.Context, q push.DueQuery) ([]string, string, error) {
	if q.Limit <= 0 {
		return nil, q.After, nil
	}
	skip := q.Skip
	if skip == nil {
		skip = []string{}
	}
	visits := push.MaxDueScan * q.Limit
	type step struct {
		Destination string
		NextMS      int64
	}
	var steps []step
	err := s.readStatement(ctx, func(rq rowQuerier) error {
		rows, err := rq.Query(ctx, dueWalk, q.After, q.Now.UnixMilli(), q.Limit, visits, skip)
		if err != nil {
			return err
		}
		steps, err = pgx.CollectRows(rows, pgx.RowToStructByPos[step])
		return err
	})
	if err != nil {
		return nil, "", err
	}
	skipped := make(map[string]bool, len(skip))
	for _, d := range skip {
		skipped[d] = true
	}
	var out []string
	for _, st := range steps {
		if st.NextMS <= q.Now.UnixMilli() && !skipped[st.Destination] {
			out = append(out, st.Destination)
		}
	}
	if len(out) < q.Limit && len(steps) < visits {
		return out, "", nil // the walk ran out of destinations
	}
	return out, steps[len(steps)-1].Destination, nil
}

// DueDeliveries implements push.OutboxStore, from
// push_deliveries_destination, in one statement.
func (s *DB) DueDeliveries(ctx context.Context, dest string, now time.Time, limit int) ([]push.Delivery, error) {
	return readDocs(ctx, s, storedoc.DecodeDelivery, `SELECT doc FROM push_deliveries
		WHERE state = 'p' AND destination = $1 AND next_ms <= $2 ORDER BY next_ms, id LIMIT $3`, dest, now.UnixMilli(), limit)
}

// NextDue implements push.OutboxStore.
func (s *DB) NextDue(ctx context.Context) (time.Time, bool, error) {
	var ms *int64
	if err := s.readRow(ctx, "SELECT min(next_ms) FROM push_deliveries WHERE state = 'p'", nil, &ms); err != nil {
		return time.Time{}, false, err
	}
	if ms == nil {
		return time.Time{}, false, nil
	}
	return fromMS(*ms), true, nil
}

// Claim implements push.Claimer: its destination locks are session
// locks, which a failover ends while their senders live.
func (s *DB) Claim(ctx context.Context, id string, at, until time.Time) (bool, error) {
	return s.ClaimDelivery(ctx, id, at, until)
}

var _ push.Claimer = (*DB)(nil)

// Delivery implements push.OutboxStore in one statement.
func (s *DB) Delivery(ctx context.Context, id string) (push.Delivery, error) {
	ds, err := readDocs(ctx, s, storedoc.DecodeDelivery, "SELECT doc FROM push_deliveries WHERE id = $1", id)
	if err != nil {
		return push.Delivery{}, err
	}
	if len(ds) == 0 {
		return push.Delivery{}, push.ErrDeliveryNotFound
	}
	return ds[0], nil
}

// Deliveries implements push.OutboxStore: newest first (ids are ULIDs of
// the transition's time).
func (s *DB) Deliveries(ctx context.Context, q push.DeliveryQuery) (push.DeliveryPage, error) {
	page := push.DeliveryPage{Deliveries: []push.Delivery{}}
	after := q.After
	if after == "" {
		after = "\x7f"
	} else if _, err := ulid.ParseStrict(after); err != nil {
		return page, push.ErrDeliveryNotFound
	}
	query, args := "SELECT doc FROM push_deliveries WHERE id < $1", []any{after}
	if q.TaskID != "" {
		query += " AND task_id = $2"
		args = append(args, q.TaskID)
	}
	if q.State != "" {
		query += fmt.Sprintf(" AND state = $%d", len(args)+1)
		args = append(args, stateCode(q.State))
	}
	query += fmt.Sprintf(" ORDER BY id DESC LIMIT $%d", len(args)+1)
	args = append(args, q.PageSize+1)
	var err error
	page.Deliveries, page.Next, err = pageDocs(ctx, s, q.PageSize, storedoc.DecodeDelivery, func(d push.Delivery) string { return d.ID },
		page.Deliveries, query, args...)
	return page, err
}

// OutboxStats implements push.OutboxStore in one statement.
func (s *DB) OutboxStats(ctx context.Context) (push.OutboxStats, error) {
	var (
		st      push.OutboxStats
		pending int64
		oldest  *string
	)
	err := s.readRow(ctx, `SELECT COALESCE((SELECT n FROM counters WHERE name = $1), 0),
		(SELECT id FROM push_deliveries WHERE state = 'p' ORDER BY id LIMIT 1)`, []any{counterPushPending}, &pending, &oldest)
	if err != nil {
		return st, err
	}
	st.Pending = int(pending)
	if oldest != nil {
		id, err := ulid.ParseStrict(*oldest)
		if err != nil {
			return st, err
		}
		st.OldestPending = ulid.Time(id.Time()).UTC()
	}
	return st, nil
}

var _ push.OutboxStore = (*DB)(nil)

// The schema's Deliveries, in push_deliveries.
func init() {
	mapped[commands.Deliveries] = &table[push.Delivery]{
		kind: commands.Deliveries, name: "push_deliveries", key: []column{{"t.id", convText}},
		cols: "t.doc", read: docScan(storedoc.DecodeDelivery),
		indexes: map[storage.Ix]tindex{
			commands.DeliveriesByTask:  {cols: []column{{"t.task_id", convText}}},
			commands.DeliveriesByState: {cols: []column{{"t.state", convText}}},
		},
		write: func(w *pgWrites, old, d *push.Delivery) error { return putDelivery(w.ctx, w.w, old, d, w.acc) },
		remove: func(w *pgWrites, old *push.Delivery) error {
			if due(old) {
				w.acc.add(counterPushPending, -1)
			}
			return w.exec("DELETE FROM push_deliveries WHERE id = $1", old.ID)
		},
	}
}
