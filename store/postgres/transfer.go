package postgres

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/knowledge"
	"github.com/kfa-project/kfa/moderation"
	"github.com/kfa-project/kfa/sessions"
	"github.com/kfa-project/kfa/store/internal/storedoc"
	"github.com/kfa-project/kfa/store/transfer"
	"github.com/kfa-project/kfa/tasks"
)

// dataTables are the tables that hold kfa data (not the schema's own
// rows): a database with a row in any of them is not empty.
var dataTables = []string{"agents", "agent_identities", "credentials", "tasks", "discussions", "replies", "inbox", "rate_windows",
	"records", "change_log", "push_configs", "push_deliveries", "signing_keys", "web_sessions",
	"moderation_items", "moderation_flags", "moderation_log"}

// Empty reports why the database is not empty ("" when it is): the
// tables holding rows and how many.
func (s *DB) Empty(ctx context.Context) (string, error) {
	var held []string
	for _, t := range dataTables {
		var n int64
		if err := s.pool.QueryRow(ctx, "SELECT count(*) FROM "+t).Scan(&n); err != nil {
			return "", fmt.Errorf("postgres: count %s: %w", t, err)
		}
		if n > 0 {
			held = append(held, fmt.Sprintf("%d rows in %s", n, t))
		}
	}
	return strings.Join(held, ", "), nil
}

// Load copies d into the database, which must be empty (Empty), in one
// transaction: rows by COPY, then the counters behind totalSize, counted
// from what was loaded. The database's secret becomes d's, so page tokens
// made before the move stay valid; a process already running on the
// database keeps the old one until it restarts.
func (s *DB) Load(ctx context.Context, d *transfer.Data) error {
	why, err := s.Empty(ctx)
	if err != nil {
		return err
	}
	if why != "" {
		return fmt.Errorf("postgres: the database already holds kfa data (%s); kfa migrate copies into an empty database only", why)
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error { return load(ctx, tx, d) })
	if err != nil {
		return fmt.Errorf("postgres: load: %w", err)
	}
	if len(d.Secret) > 0 {
		s.secret = append([]byte(nil), d.Secret...)
	}
	return nil
}

// copyRows runs COPY into table for n rows made by row.
func copyRows(ctx context.Context, tx pgx.Tx, table string, cols []string, n int, row func(i int) ([]any, error)) error {
	if n == 0 {
		return nil
	}
	_, err := tx.CopyFrom(ctx, pgx.Identifier{table}, cols, pgx.CopyFromSlice(n, row))
	if err != nil {
		return fmt.Errorf("copy %s: %w", table, err)
	}
	return nil
}

func load(ctx context.Context, tx pgx.Tx, d *transfer.Data) error {
	if len(d.Secret) > 0 {
		if _, err := tx.Exec(ctx, "UPDATE kfa_meta SET value = $1 WHERE key = 'secret'", hex.EncodeToString(d.Secret)); err != nil {
			return err
		}
	}
	acc := deltas{}
	var linked []agents.Agent
	for _, a := range d.Agents {
		if a.Linked() {
			linked = append(linked, a)
		}
	}
	steps := []struct {
		table string
		cols  []string
		n     int
		row   func(i int) ([]any, error)
	}{
		{"agents", []string{"id", "doc", "name_key"}, len(d.Agents), func(i int) ([]any, error) {
			v, err := json.Marshal(d.Agents[i])
			return []any{d.Agents[i].ID, v, agents.NameKey(d.Agents[i].Name)}, err
		}},
		{"agent_identities", []string{"issuer", "subject", "agent_id"}, len(linked), func(i int) ([]any, error) {
			a := linked[i]
			return []any{a.Issuer, a.Subject, a.ID}, nil
		}},
		{"credentials", []string{"digest", "agent_id", "doc"}, len(d.Credentials), func(i int) ([]any, error) {
			c := d.Credentials[i]
			v, err := json.Marshal(c)
			return []any{c.Digest[:], c.AgentID, v}, err
		}},
		{"discussions", []string{"id", "status", "doc", "author_id", "hidden"}, len(d.Discussions), func(i int) ([]any, error) {
			x := d.Discussions[i]
			v, err := json.Marshal(x)
			return []any{x.ID, string(x.Status), v, x.AuthorID, x.Hidden}, err
		}},
		{"replies", []string{"discussion_id", "id", "doc", "author_id", "hidden"}, len(d.Replies), func(i int) ([]any, error) {
			x := d.Replies[i]
			v, err := json.Marshal(x)
			return []any{x.DiscussionID, x.ID, v, x.AuthorID, x.Hidden}, err
		}},
		{"moderation_items", []string{"id", "queued", "flags", "waiting_ms", "doc"}, len(d.ModItems), func(i int) ([]any, error) {
			x := d.ModItems[i]
			v, err := json.Marshal(x)
			var waiting int64
			if t := x.Waiting(); !t.IsZero() {
				waiting = t.UnixMilli()
			}
			return []any{x.ID, x.Queued, x.Flags, waiting, v}, err
		}},
		{"moderation_flags", []string{"item_id", "agent_id", "round", "doc"}, len(d.Flags), func(i int) ([]any, error) {
			x := d.Flags[i]
			v, err := json.Marshal(x)
			return []any{x.ItemID, x.AgentID, x.Round, v}, err
		}},
		{"moderation_log", []string{"id", "doc"}, len(d.ModLog), func(i int) ([]any, error) {
			x := d.ModLog[i]
			v, err := json.Marshal(x)
			return []any{x.ID, v}, err
		}},
		{"tasks", []string{"id", "context_id", "owner_id", "discussion_id", "message_id", "state", "status_ms", "created_ms",
			"w_head", "w_status", "w_artifacts", "w_metadata", "w_history", "w_nhistory"}, len(d.Tasks), func(i int) ([]any, error) {
			t := &d.Tasks[i]
			countTask(acc, t, 1)
			w, err := tasks.EncodeWire(t)
			return []any{t.ID, t.ContextID, t.OwnerID, t.DiscussionID, t.MessageID, string(t.State), t.StatusTime.UnixMilli(),
				t.CreatedAt.UnixMilli(), nz(w.Head), nz(w.Status), nz(w.Artifacts), nz(w.Metadata), nz(w.History), int32(w.NHistory)}, err
		}},
		{"inbox", []string{"agent_id", "id", "acked", "doc"}, len(d.Inbox), func(i int) ([]any, error) {
			e := d.Inbox[i]
			v, err := json.Marshal(e.Entry)
			return []any{e.Entry.AgentID, e.Entry.ID, !e.Unacked, v}, err
		}},
		{"rate_windows", []string{"kind", "agent_id", "tat_ns"}, len(d.RateWindows), func(i int) ([]any, error) {
			w := d.RateWindows[i]
			return []any{string(w.Kind), w.AgentID, w.TAT.UnixNano()}, nil
		}},
		{"records", []string{"id", "doc"}, len(d.Records), func(i int) ([]any, error) {
			acc.add(counterRecords, 1)
			v, err := json.Marshal(d.Records[i])
			return []any{d.Records[i].ID, v}, err
		}},
		{"change_log", []string{"kind", "subject", "at_ms", "written_ms"}, len(d.Feed), func(i int) ([]any, error) {
			e := d.Feed[i]
			return []any{string(knowledge.EventKind(e.Op)), e.ID, e.At.UnixMilli(), e.Written.UnixMilli()}, nil
		}},
		{"push_configs", []string{"task_id", "id", "doc"}, len(d.PushConfigs), func(i int) ([]any, error) {
			c := d.PushConfigs[i]
			v, err := storedoc.EncodePushConfig(&c)
			return []any{c.TaskID, c.ID, v}, err
		}},
		{"push_deliveries", []string{"id", "task_id", "state", "next_ms", "destination", "doc"}, len(d.Deliveries), func(i int) ([]any, error) {
			x := &d.Deliveries[i]
			var next *int64
			if due(x) {
				acc.add(counterPushPending, 1)
				ms := x.NextAt.UnixMilli()
				next = &ms
			}
			v, err := storedoc.EncodeDelivery(x)
			return []any{x.ID, x.TaskID, stateCode(x.State), next, x.Destination, v}, err
		}},
		{"signing_keys", []string{"created_ms", "id", "doc"}, len(d.SigningKeys), func(i int) ([]any, error) {
			k := d.SigningKeys[i]
			v, err := storedoc.EncodeSignKey(&k)
			return []any{k.CreatedAt.UnixMilli(), k.ID, v}, err
		}},
		{"web_sessions", []string{"digest", "expires_ms", "doc"}, len(d.Sessions), func(i int) ([]any, error) {
			x := d.Sessions[i]
			v, err := encodeSession(x)
			return []any{x.Digest[:], x.ExpiresAt.UnixMilli(), v}, err
		}},
	}
	for _, st := range steps {
		if err := copyRows(ctx, tx, st.table, st.cols, st.n, st.row); err != nil {
			return err
		}
	}
	return acc.apply(ctx, tx)
}

// Dump reads the whole database into a transfer.Data, from one snapshot.
func (s *DB) Dump(ctx context.Context) (*transfer.Data, error) {
	d := &transfer.Data{Secret: s.Secret()}
	err := s.readSnapshot(ctx, func(tx pgx.Tx) error { return dump(ctx, tx, d) })
	if err != nil {
		return nil, fmt.Errorf("postgres: dump: %w", err)
	}
	return d, nil
}

// each runs query and calls fn with each row.
func each(ctx context.Context, tx pgx.Tx, query string, fn func(rows pgx.Rows) error) error {
	rows, err := tx.Query(ctx, query)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

func dump(ctx context.Context, tx pgx.Tx, d *transfer.Data) error {
	var v []byte
	steps := []struct {
		query string
		fn    func(rows pgx.Rows) error
	}{
		{"SELECT doc FROM agents ORDER BY id", func(rows pgx.Rows) error {
			if err := rows.Scan(&v); err != nil {
				return err
			}
			a, err := decodeAgent(v)
			d.Agents = append(d.Agents, a)
			return err
		}},
		{"SELECT digest, doc FROM credentials ORDER BY digest", func(rows pgx.Rows) error {
			var (
				c  agents.Credential
				dg []byte
			)
			if err := rows.Scan(&dg, &v); err != nil {
				return err
			}
			copy(c.Digest[:], dg)
			err := json.Unmarshal(v, &c)
			d.Credentials = append(d.Credentials, c)
			return err
		}},
		{"SELECT " + taskColumns + " FROM tasks ORDER BY id", func(rows pgx.Rows) error {
			r, err := scanTask(rows)
			if err != nil {
				return err
			}
			t, err := r.task()
			d.Tasks = append(d.Tasks, t)
			return err
		}},
		{"SELECT doc FROM discussions ORDER BY id", func(rows pgx.Rows) error {
			if err := rows.Scan(&v); err != nil {
				return err
			}
			x, err := decodeDiscussion(v)
			d.Discussions = append(d.Discussions, x)
			return err
		}},
		{"SELECT doc FROM replies ORDER BY discussion_id, id", func(rows pgx.Rows) error {
			var x discussions.Reply
			if err := rows.Scan(&v); err != nil {
				return err
			}
			err := json.Unmarshal(v, &x)
			d.Replies = append(d.Replies, x)
			return err
		}},
		{"SELECT doc FROM moderation_items ORDER BY id", func(rows pgx.Rows) error {
			if err := rows.Scan(&v); err != nil {
				return err
			}
			x, err := decodeItem(v)
			d.ModItems = append(d.ModItems, x)
			return err
		}},
		{"SELECT doc FROM moderation_flags ORDER BY item_id, agent_id", func(rows pgx.Rows) error {
			var x moderation.Flag
			if err := rows.Scan(&v); err != nil {
				return err
			}
			err := json.Unmarshal(v, &x)
			d.Flags = append(d.Flags, x)
			return err
		}},
		{"SELECT doc FROM moderation_log ORDER BY id", func(rows pgx.Rows) error {
			var x moderation.Entry
			if err := rows.Scan(&v); err != nil {
				return err
			}
			err := json.Unmarshal(v, &x)
			d.ModLog = append(d.ModLog, x)
			return err
		}},
		{"SELECT agent_id, acked, doc FROM inbox ORDER BY agent_id, id", func(rows pgx.Rows) error {
			var (
				agent string
				acked bool
			)
			if err := rows.Scan(&agent, &acked, &v); err != nil {
				return err
			}
			e, err := decodeInbox(agent, v)
			d.Inbox = append(d.Inbox, transfer.InboxItem{Entry: e, Unacked: !acked})
			return err
		}},
		{"SELECT kind, agent_id, tat_ns FROM rate_windows ORDER BY kind, agent_id", func(rows pgx.Rows) error {
			var (
				kind, agent string
				ns          int64
			)
			if err := rows.Scan(&kind, &agent, &ns); err != nil {
				return err
			}
			if len(kind) != 1 {
				return fmt.Errorf("rate window kind %q", kind)
			}
			d.RateWindows = append(d.RateWindows, transfer.RateWindow{Kind: kind[0], AgentID: agent, TAT: time.Unix(0, ns).UTC()})
			return nil
		}},
	}
	steps = append(steps, dumpRest(d, &v)...)
	for _, st := range steps {
		if err := each(ctx, tx, st.query, st.fn); err != nil {
			return fmt.Errorf("%s: %w", st.query, err)
		}
	}
	return nil
}

// dumpRest reads records and the feed, push configs and deliveries,
// signing keys and web sessions.
func dumpRest(d *transfer.Data, v *[]byte) []struct {
	query string
	fn    func(rows pgx.Rows) error
} {
	return []struct {
		query string
		fn    func(rows pgx.Rows) error
	}{
		{"SELECT doc FROM records ORDER BY id", func(rows pgx.Rows) error {
			if err := rows.Scan(v); err != nil {
				return err
			}
			r, err := decodeRecord(*v)
			d.Records = append(d.Records, r)
			return err
		}},
		{"SELECT kind, subject, at_ms, written_ms FROM change_log WHERE " + recordKinds + " ORDER BY tx, seq", func(rows pgx.Rows) error {
			var (
				at, written int64
				kind, id    string
			)
			if err := rows.Scan(&kind, &id, &at, &written); err != nil {
				return err
			}
			d.Feed = append(d.Feed, transfer.FeedEntry{ID: id, Op: knowledge.ChangeOp(changelog.Kind(kind)), At: fromMS(at), Written: fromMS(written)})
			return nil
		}},
		{"SELECT doc FROM push_configs ORDER BY task_id, id", func(rows pgx.Rows) error {
			if err := rows.Scan(v); err != nil {
				return err
			}
			c, err := storedoc.DecodePushConfig(*v)
			d.PushConfigs = append(d.PushConfigs, c)
			return err
		}},
		{"SELECT doc FROM push_deliveries ORDER BY id", func(rows pgx.Rows) error {
			if err := rows.Scan(v); err != nil {
				return err
			}
			x, err := storedoc.DecodeDelivery(*v)
			d.Deliveries = append(d.Deliveries, x)
			return err
		}},
		{"SELECT doc FROM signing_keys ORDER BY created_ms, id", func(rows pgx.Rows) error {
			if err := rows.Scan(v); err != nil {
				return err
			}
			k, err := storedoc.DecodeSignKey(*v)
			d.SigningKeys = append(d.SigningKeys, k)
			return err
		}},
		{"SELECT digest, doc FROM web_sessions ORDER BY digest", func(rows pgx.Rows) error {
			var (
				dg []byte
				dd sessions.Digest
			)
			if err := rows.Scan(&dg, v); err != nil {
				return err
			}
			copy(dd[:], dg)
			x, err := decodeSession(dd, *v)
			d.Sessions = append(d.Sessions, x)
			return err
		}},
	}
}
