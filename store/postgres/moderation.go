package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/commands"
	"github.com/kfa-project/kfa/moderation"
	"github.com/kfa-project/kfa/storage"
)

// windowFlag is the flag rate's window in rate_windows.
const windowFlag = "f"

var _ moderation.Store = (*DB)(nil)

// FlagWindow implements moderation.Store.
func (s *DB) FlagWindow(ctx context.Context, agentID string) (time.Time, error) {
	var w time.Time
	err := s.read(ctx, func(tx pgx.Tx) error {
		var err error
		w, err = readWindow(ctx, tx, windowFlag, agentID)
		return err
	})
	return w, err
}

func decodeItem(v []byte) (moderation.Item, error) {
	var it moderation.Item
	if err := json.Unmarshal(v, &it); err != nil {
		return it, fmt.Errorf("postgres: decode moderation item: %w", err)
	}
	return it, nil
}

func putItem(ctx context.Context, w execer, it *moderation.Item) error {
	v, err := json.Marshal(it)
	if err != nil {
		return err
	}
	var waiting int64
	if t := it.Waiting(); !t.IsZero() {
		waiting = t.UnixMilli()
	}
	_, queued := commands.ModerationQueue.Entry(it)
	_, err = w.Exec(ctx, `INSERT INTO moderation_items (id, queued, flags, waiting_ms, doc) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (id) DO UPDATE SET queued = excluded.queued, flags = excluded.flags, waiting_ms = excluded.waiting_ms,
		doc = excluded.doc`, it.ID, queued, it.Flags, waiting, v)
	return err
}

func putEntries(ctx context.Context, w execer, es []moderation.Entry) error {
	for i := range es {
		v, err := json.Marshal(&es[i])
		if err != nil {
			return err
		}
		if _, err := w.Exec(ctx, "INSERT INTO moderation_log (id, doc) VALUES ($1, $2)", es[i].ID, v); err != nil {
			return err
		}
	}
	return nil
}

// Queue implements moderation.Store, from one snapshot: the waiting
// items in queue order (moderation_queue), then their flags and content.
func (s *DB) Queue(ctx context.Context, limit int) ([]moderation.QueueEntry, int, error) {
	var (
		out   []moderation.QueueEntry
		total int
	)
	err := s.read(ctx, func(tx pgx.Tx) error {
		out, total = nil, 0
		if err := tx.QueryRow(ctx, "SELECT count(*) FROM moderation_items WHERE queued").Scan(&total); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, "SELECT doc FROM moderation_items WHERE queued ORDER BY flags DESC, waiting_ms, id LIMIT $1", limit)
		if err != nil {
			return err
		}
		docs, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
		if err != nil {
			return err
		}
		ids := make([]string, len(docs))
		index := map[string]int{}
		for i, v := range docs {
			it, err := decodeItem(v)
			if err != nil {
				return err
			}
			out = append(out, moderation.QueueEntry{Item: it})
			ids[i], index[it.ID] = it.ID, i
		}
		if err := queueFlags(ctx, tx, ids, index, out); err != nil {
			return err
		}
		return queueContent(ctx, tx, out)
	})
	return out, total, err
}

// queueFlags adds each item's open flags, oldest first.
func queueFlags(ctx context.Context, tx pgx.Tx, ids []string, index map[string]int, out []moderation.QueueEntry) error {
	rows, err := tx.Query(ctx, "SELECT doc FROM moderation_flags WHERE item_id = ANY($1) ORDER BY item_id, agent_id", ids)
	if err != nil {
		return err
	}
	docs, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return err
	}
	for _, v := range docs {
		var f moderation.Flag
		if err := json.Unmarshal(v, &f); err != nil {
			return fmt.Errorf("postgres: decode flag: %w", err)
		}
		e := &out[index[f.ItemID]]
		if f.Round == e.Item.Round {
			e.Flags = append(e.Flags, f)
		}
	}
	for i := range out {
		slices.SortFunc(out[i].Flags, func(a, b moderation.Flag) int { return a.At.Compare(b.At) })
	}
	return nil
}

// queueContent adds each item's discussion and reply.
func queueContent(ctx context.Context, tx pgx.Tx, out []moderation.QueueEntry) error {
	for i := range out {
		it := &out[i].Item
		d, err := getDiscussion(ctx, tx, it.DiscussionID)
		if err != nil {
			return fmt.Errorf("postgres: discussion %s of moderation item %s: %w", it.DiscussionID, it.ID, err)
		}
		out[i].Discussion = d
		if it.Kind != moderation.KindReply {
			continue
		}
		var v []byte
		if err := tx.QueryRow(ctx, "SELECT doc FROM replies WHERE discussion_id = $1 AND id = $2", it.DiscussionID, it.ID).Scan(&v); err != nil {
			return fmt.Errorf("postgres: reply %s of moderation item: %w", it.ID, err)
		}
		r, err := decodeReply(v)
		if err != nil {
			return err
		}
		out[i].Reply = &r
	}
	return nil
}

// ListLog implements moderation.Store: newest first.
func (s *DB) ListLog(ctx context.Context, q moderation.LogQuery) (moderation.LogPage, error) {
	page := moderation.LogPage{Entries: []moderation.Entry{}}
	before := q.Before
	if before == "" {
		before = "\x7f" // above every ULID
	}
	var err error
	page.Entries, page.Next, err = pageDocs(ctx, s.pool, q.PageSize, func(v []byte) (moderation.Entry, error) {
		var e moderation.Entry
		if err := json.Unmarshal(v, &e); err != nil {
			return e, fmt.Errorf("postgres: decode moderation log entry: %w", err)
		}
		return e, nil
	}, func(e moderation.Entry) string { return e.ID },
		page.Entries, "SELECT doc FROM moderation_log WHERE id < $1 ORDER BY id DESC LIMIT $2", before, q.PageSize+1)
	return page, err
}

// PostsBy implements moderation.Store, from discussions_author and
// replies_author.
func (s *DB) PostsBy(ctx context.Context, agentID, after string, limit int) ([]moderation.Target, string, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, '' FROM discussions WHERE author_id = $1 AND id > $2
		UNION ALL SELECT id, discussion_id FROM replies WHERE author_id = $1 AND id > $2
		ORDER BY 1 LIMIT $3`, agentID, after, limit+1)
	if err != nil {
		return nil, "", unavailable(err)
	}
	var out []moderation.Target
	for rows.Next() {
		var t moderation.Target
		if err := rows.Scan(&t.ID, &t.DiscussionID); err != nil {
			rows.Close()
			return nil, "", err
		}
		t.Kind = moderation.KindDiscussion
		if t.DiscussionID != "" {
			t.Kind = moderation.KindReply
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, "", unavailable(err)
	}
	next := ""
	if len(out) > limit {
		out = out[:limit]
		next = out[limit-1].ID
	}
	return out, next, nil
}

// The schema's moderation items, flags and log entries.
func init() {
	mapped[commands.ModerationItems] = &table[moderation.Item]{
		kind: commands.ModerationItems, name: "moderation_items", key: []column{{"t.id", text}},
		cols: "t.doc", read: docScan(decodeItem),
		indexes: map[storage.Ix]tindex{commands.ModerationQueue: {where: "t.queued"}},
		write:   func(w *pgWrites, _, it *moderation.Item) error { return putItem(w.ctx, w.w, it) },
	}
	mapped[commands.ModerationFlags] = &table[moderation.Flag]{
		kind: commands.ModerationFlags, name: "moderation_flags", key: []column{{"t.item_id", text}, {"t.agent_id", text}},
		cols: "t.doc", read: docScan(decodeJSON[moderation.Flag]("flag")),
		write: func(w *pgWrites, _, f *moderation.Flag) error {
			v, err := json.Marshal(f)
			if err != nil {
				return err
			}
			return w.exec(`INSERT INTO moderation_flags (item_id, agent_id, round, doc) VALUES ($1, $2, $3, $4)
				ON CONFLICT (item_id, agent_id) DO UPDATE SET round = excluded.round, doc = excluded.doc`, f.ItemID, f.AgentID, f.Round, v)
		},
	}
	mapped[commands.ModerationLog] = &table[moderation.Entry]{
		kind: commands.ModerationLog, name: "moderation_log", key: []column{{"t.id", text}},
		cols: "t.doc", read: docScan(decodeJSON[moderation.Entry]("moderation log entry")),
		write: func(w *pgWrites, _, e *moderation.Entry) error { return putEntries(w.ctx, w.w, []moderation.Entry{*e}) },
	}
}

// decodeJSON decodes a JSON document.
func decodeJSON[T any](what string) func([]byte) (T, error) {
	return func(v []byte) (T, error) {
		var t T
		if err := json.Unmarshal(v, &t); err != nil {
			return t, fmt.Errorf("postgres: decode %s: %w", what, err)
		}
		return t, nil
	}
}
