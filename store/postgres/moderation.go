package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/commands"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/moderation"
	"github.com/kfa-project/kfa/storage"
)

// windowFlag is the flag rate's window in rate_windows.
const windowFlag = "f"

var _ moderation.Store = (*DB)(nil)

// FlagWindow implements moderation.Store in one statement.
func (s *DB) FlagWindow(ctx context.Context, agentID string) (time.Time, error) {
	return s.readWindow(ctx, windowFlag, agentID)
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

// queueRead reads the queue's total and its first $1 items in queue
// order (moderation_queue), each with its flags, its discussion and, for
// a reply, the reply: one statement, and one row even when no item
// waits.
const queueRead = `SELECT c.n, q.doc, q.flags, q.discussion, q.reply
	FROM (SELECT count(*) FROM moderation_items WHERE queued) c(n)
	LEFT JOIN LATERAL (
		SELECT i.doc, i.flags AS n, i.waiting_ms, i.id,
			ARRAY(SELECT f.doc FROM moderation_flags f WHERE f.item_id = i.id ORDER BY f.agent_id) AS flags,
			d.doc AS discussion, r.doc AS reply
		FROM (SELECT id, doc, flags, waiting_ms, convert_from(doc, 'UTF8')::jsonb AS j FROM moderation_items
			WHERE queued ORDER BY flags DESC, waiting_ms, id LIMIT $1) i
		LEFT JOIN discussions d ON d.id = i.j->>'discussionId'
		LEFT JOIN replies r ON i.j->>'kind' = 'reply' AND r.discussion_id = i.j->>'discussionId' AND r.id = i.id
	) q ON true
	ORDER BY q.n DESC, q.waiting_ms, q.id`

// Queue implements moderation.Store in one statement (queueRead).
func (s *DB) Queue(ctx context.Context, limit int) ([]moderation.QueueEntry, int, error) {
	var (
		out   []moderation.QueueEntry
		total int
	)
	err := s.readStatement(ctx, func(q rowQuerier) error {
		out, total = nil, 0
		rows, err := q.Query(ctx, queueRead, limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				n                 int64
				item, disc, reply []byte
				flags             [][]byte
			)
			if err := rows.Scan(&n, &item, &flags, &disc, &reply); err != nil {
				return err
			}
			total = int(n)
			if item == nil {
				continue // no item waits
			}
			e, err := queueEntry(item, flags, disc, reply)
			if err != nil {
				return err
			}
			out = append(out, e)
		}
		return rows.Err()
	})
	return out, total, err
}

// queueEntry decodes one item of the queue with its flags (those of its
// current round, oldest first), its discussion and its reply.
func queueEntry(item []byte, flags [][]byte, disc, reply []byte) (moderation.QueueEntry, error) {
	it, err := decodeItem(item)
	if err != nil {
		return moderation.QueueEntry{}, err
	}
	e := moderation.QueueEntry{Item: it}
	for _, v := range flags {
		var f moderation.Flag
		if err := json.Unmarshal(v, &f); err != nil {
			return e, fmt.Errorf("postgres: decode flag: %w", err)
		}
		if f.Round == it.Round {
			e.Flags = append(e.Flags, f)
		}
	}
	slices.SortFunc(e.Flags, func(a, b moderation.Flag) int { return a.At.Compare(b.At) })
	if disc == nil {
		return e, fmt.Errorf("postgres: discussion %s of moderation item %s: %w", it.DiscussionID, it.ID, discussions.ErrNotFound)
	}
	if e.Discussion, err = decodeDiscussion(disc); err != nil {
		return e, err
	}
	if it.OnReply() {
		if reply == nil {
			return e, fmt.Errorf("postgres: reply %s of moderation item: %w", it.ID, pgx.ErrNoRows)
		}
		r, err := decodeReply(reply)
		if err != nil {
			return e, err
		}
		e.Reply = &r
	}
	return e, nil
}

// ListLog implements moderation.Store: newest first.
func (s *DB) ListLog(ctx context.Context, q moderation.LogQuery) (moderation.LogPage, error) {
	page := moderation.LogPage{Entries: []moderation.Entry{}}
	before := q.Before
	if before == "" {
		before = "\x7f" // above every ULID
	}
	var err error
	page.Entries, page.Next, err = pageDocs(ctx, s, q.PageSize, func(v []byte) (moderation.Entry, error) {
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
	var out []moderation.Target
	err := s.readStatement(ctx, func(q rowQuerier) error {
		out = nil
		rows, err := q.Query(ctx, `SELECT id, '' FROM discussions WHERE author_id = $1 AND id > $2
			UNION ALL SELECT id, discussion_id FROM replies WHERE author_id = $1 AND id > $2
			ORDER BY 1 LIMIT $3`, agentID, after, limit+1)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var t moderation.Target
			if err := rows.Scan(&t.ID, &t.DiscussionID); err != nil {
				return err
			}
			t.Kind = moderation.KindDiscussion
			if t.DiscussionID != "" {
				t.Kind = moderation.KindReply
			}
			out = append(out, t)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, "", err
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
		kind: commands.ModerationItems, name: "moderation_items", key: []column{{"t.id", convText}},
		cols: "t.doc", read: docScan(decodeItem),
		indexes: map[storage.Ix]tindex{commands.ModerationQueue: {where: "t.queued"}},
		write:   func(w *pgWrites, _, it *moderation.Item) error { return putItem(w.ctx, w.w, it) },
	}
	mapped[commands.ModerationFlags] = &table[moderation.Flag]{
		kind: commands.ModerationFlags, name: "moderation_flags", key: []column{{"t.item_id", convText}, {"t.agent_id", convText}},
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
		kind: commands.ModerationLog, name: "moderation_log", key: []column{{"t.id", convText}},
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
