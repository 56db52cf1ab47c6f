package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/moderation"
)

// windowFlag is the flag rate's window in rate_windows.
const windowFlag = "f"

var _ moderation.Store = (*DB)(nil)

// FlagWindow implements moderation.Store in one statement.
func (s *DB) FlagWindow(ctx context.Context, agentID string) (time.Time, error) {
	return s.readWindow(ctx, windowFlag, agentID)
}

// loadTarget queues the loads of target t: its discussion under the row
// lock (for a reply named by id alone, the reply's discussion), the
// reply, and the item. A Kind left empty loads either: the discussion of
// that id, or the reply of that id and its discussion.
func loadTarget(b *pgx.Batch, t moderation.Target, d **discussions.Discussion, r **discussions.Reply, it **moderation.Item) {
	switch {
	case t.Kind == moderation.KindReply && t.DiscussionID != "":
		b.Queue("SELECT doc FROM discussions WHERE id = $1 FOR UPDATE", t.DiscussionID).QueryRow(scanDiscussion(d))
	case t.Kind == moderation.KindDiscussion:
		b.Queue("SELECT doc FROM discussions WHERE id = $1 FOR UPDATE", t.ID).QueryRow(scanDiscussion(d))
	default:
		b.Queue(`SELECT doc FROM discussions WHERE id = $1 OR id = (SELECT discussion_id FROM replies WHERE id = $1)
			FOR UPDATE`, t.ID).QueryRow(scanDiscussion(d))
	}
	*r = nil
	if t.Kind != moderation.KindDiscussion {
		b.Queue("SELECT doc FROM replies WHERE id = $1 AND ($2 = '' OR discussion_id = $2)", t.ID, t.DiscussionID).
			QueryRow(scanReply(r))
	}
	b.Queue("SELECT doc FROM moderation_items WHERE id = $1", t.ID).QueryRow(scanDoc(it, decodeItem))
}

func decodeItem(v []byte) (moderation.Item, error) {
	var it moderation.Item
	if err := json.Unmarshal(v, &it); err != nil {
		return it, fmt.Errorf("postgres: decode moderation item: %w", err)
	}
	return it, nil
}

// FlagItem implements moderation.Store, in two round trips: BEGIN and
// the loads (the agent's row lock and flag window; the item's discussion
// under its row lock, the reply, the item, and whether the agent flagged
// it), then moderation.DecideFlag, then the writes and COMMIT. Every
// flag on one discussion's items is decided under that discussion's
// lock, so the threshold hides an item once, whichever process the flags
// come through.
func (s *DB) FlagItem(ctx context.Context, c moderation.FlagCommand, p moderation.Policy) (moderation.FlagResult, error) {
	var (
		st  moderation.FlagState
		out moderation.FlagOutcome
	)
	err := s.command(ctx, CmdFlag, func(b *pgx.Batch) {
		st = moderation.FlagState{}
		lockAgent(b, c.AgentID)
		loadWindow(b, windowFlag, c.AgentID, &st.Window)
		loadTarget(b, c.Target, &st.Discussion, &st.Reply, &st.Item)
		b.Queue("SELECT EXISTS (SELECT 1 FROM moderation_flags WHERE item_id = $1 AND agent_id = $2)", c.Target.ID, c.AgentID).
			QueryRow(func(row pgx.Row) error { return row.Scan(&st.Flagged) })
	}, func() (func(execer) error, error) {
		var err error
		if out, err = moderation.DecideFlag(st, c, p); err != nil || out.Result.AlreadyFlagged {
			return nil, err
		}
		return func(w execer) error {
			v, err := json.Marshal(&out.Flag)
			if err != nil {
				return err
			}
			if _, err := w.Exec(ctx, "INSERT INTO moderation_flags (item_id, agent_id, round, doc) VALUES ($1, $2, $3, $4)",
				out.Flag.ItemID, out.Flag.AgentID, out.Flag.Round, v); err != nil {
				return err
			}
			if out.Window != nil {
				if err := putWindow(ctx, w, windowFlag, c.AgentID, *out.Window); err != nil {
					return err
				}
			}
			return persistModeration(ctx, w, &out.Item, out.Content, out.Entries, out.Events, c.At)
		}, nil
	})
	return out.Result, err
}

// persistModeration queues an item, the content a command changed, its
// audit entries and its events.
func persistModeration(ctx context.Context, w execer, it *moderation.Item, c moderation.Content,
	es []moderation.Entry, evs []changelog.Event, at time.Time) error {
	if err := putItem(ctx, w, it); err != nil {
		return err
	}
	if c.Discussion != nil {
		if err := putDiscussion(ctx, w, c.Discussion, c.Discussion.Status); err != nil {
			return err
		}
	}
	if c.Reply != nil {
		if err := putReply(ctx, w, c.Reply); err != nil {
			return err
		}
	}
	if err := putEntries(ctx, w, es); err != nil {
		return err
	}
	return appendEvents(ctx, w, evs, at)
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
	_, err = w.Exec(ctx, `INSERT INTO moderation_items (id, queued, flags, waiting_ms, doc) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (id) DO UPDATE SET queued = excluded.queued, flags = excluded.flags, waiting_ms = excluded.waiting_ms,
		doc = excluded.doc`, it.ID, it.Queued, it.Flags, waiting, v)
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

// Moderate implements moderation.Store, in two round trips: BEGIN and
// the loads (the discussion under its row lock, the reply, the item),
// then moderation.DecideModerate, then the writes and COMMIT.
func (s *DB) Moderate(ctx context.Context, c moderation.Command) (moderation.Result, error) {
	var (
		st  moderation.State
		out moderation.Outcome
	)
	err := s.command(ctx, CmdModerate, func(b *pgx.Batch) {
		st = moderation.State{}
		loadTarget(b, c.Target, &st.Discussion, &st.Reply, &st.Item)
	}, func() (func(execer) error, error) {
		cmd := c
		if cmd.Target.Kind == "" {
			cmd.Target.Kind = moderation.KindReply
			if st.Discussion != nil && st.Discussion.ID == c.Target.ID {
				cmd.Target.Kind, st.Reply = moderation.KindDiscussion, nil
			}
		}
		var err error
		if out, err = moderation.DecideModerate(st, cmd); err != nil {
			if c.Target.Kind == "" {
				err = &moderation.ItemNotFoundError{ID: c.Target.ID} // it was looked for as either
			}
			return nil, err
		}
		if !out.Result.Changed {
			return nil, nil
		}
		return func(w execer) error {
			return persistModeration(ctx, w, &out.Item, out.Content, out.Entries, out.Events, c.At)
		}, nil
	})
	return out.Result, err
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
	if it.Kind == moderation.KindReply {
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
