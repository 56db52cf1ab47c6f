package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/oklog/ulid/v2"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/asknet"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/store/internal/storedoc"
	"github.com/kfa-project/kfa/tasks"
)

// putDiscussion writes d, new when oldStatus is "".
func putDiscussion(ctx context.Context, w execer, d *discussions.Discussion, oldStatus discussions.Status) error {
	v, err := json.Marshal(d)
	if err != nil {
		return err
	}
	if oldStatus == "" {
		_, err = w.Exec(ctx, "INSERT INTO discussions (id, status, doc, author_id, hidden) VALUES ($1, $2, $3, $4, $5)",
			d.ID, string(d.Status), v, d.AuthorID, d.Hidden)
		return err
	}
	_, err = w.Exec(ctx, "UPDATE discussions SET status = $2, doc = $3, hidden = $4 WHERE id = $1", d.ID, string(d.Status), v, d.Hidden)
	return err
}

// putReply writes r, new or not.
func putReply(ctx context.Context, w execer, r *discussions.Reply) error {
	v, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = w.Exec(ctx, `INSERT INTO replies (discussion_id, id, doc, author_id, hidden) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (discussion_id, id) DO UPDATE SET doc = excluded.doc, hidden = excluded.hidden`,
		r.DiscussionID, r.ID, v, r.AuthorID, r.Hidden)
	return err
}

// scanReply is the callback of a batched reply read into dst (nil when
// there is none).
func scanReply(dst **discussions.Reply) func(pgx.Row) error { return scanDoc(dst, decodeReply) }

// scanDoc is the callback of a batched read of one row's doc column into
// dst, decoded by decode (nil when there is no row).
func scanDoc[T any](dst **T, decode func([]byte) (T, error)) func(pgx.Row) error {
	return func(row pgx.Row) error {
		*dst = nil
		var v []byte
		err := row.Scan(&v)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		x, err := decode(v)
		if err == nil {
			*dst = &x
		}
		return err
	}
}

// GetReply implements discussions.Store.
func (s *DB) GetReply(ctx context.Context, discussionID, replyID string) (discussions.Reply, error) {
	var v []byte
	err := s.readRow(ctx, "SELECT doc FROM replies WHERE discussion_id = $1 AND id = $2", []any{discussionID, replyID}, &v)
	if errors.Is(err, pgx.ErrNoRows) {
		return discussions.Reply{}, &discussions.ReplyNotFoundError{DiscussionID: discussionID, ReplyID: replyID}
	}
	if err != nil {
		return discussions.Reply{}, err
	}
	return decodeReply(v)
}

// AcceptReply implements discussions.Store, in two round trips: BEGIN,
// the discussion under its row lock and the reply; then
// discussions.DecideAccept; then the discussion, the event and COMMIT.
func (s *DB) AcceptReply(ctx context.Context, c discussions.Accept) (discussions.AcceptOutcome, error) {
	var (
		st  discussions.AcceptState
		out discussions.AcceptOutcome
	)
	err := s.command(ctx, CmdAccept, func(b *pgx.Batch) {
		st = discussions.AcceptState{}
		b.Queue("SELECT doc FROM discussions WHERE id = $1 FOR UPDATE", c.DiscussionID).QueryRow(scanDiscussion(&st.Discussion))
		b.Queue("SELECT doc FROM replies WHERE discussion_id = $1 AND id = $2", c.DiscussionID, c.ReplyID).QueryRow(scanReply(&st.Reply))
	}, func() (func(execer) error, error) {
		var err error
		if out, err = discussions.DecideAccept(st, c); err != nil || !out.Changed {
			return nil, err
		}
		return func(w execer) error {
			if err := putDiscussion(ctx, w, &out.Discussion, st.Discussion.Status); err != nil {
				return err
			}
			return appendEvents(ctx, w, out.Events, c.At)
		}, nil
	})
	return out, err
}

// scanDiscussion is the callback of a batched discussion read into dst
// (nil when there is none).
func scanDiscussion(dst **discussions.Discussion) func(pgx.Row) error {
	return scanDoc(dst, decodeDiscussion)
}

func decodeDiscussion(v []byte) (discussions.Discussion, error) {
	var d discussions.Discussion
	if err := json.Unmarshal(v, &d); err != nil {
		return d, fmt.Errorf("postgres: decode discussion: %w", err)
	}
	return d, nil
}

// GetDiscussion implements discussions.Store in one statement.
func (s *DB) GetDiscussion(ctx context.Context, id string) (discussions.Discussion, error) {
	var v []byte
	err := s.readRow(ctx, "SELECT doc FROM discussions WHERE id = $1", []any{id}, &v)
	if errors.Is(err, pgx.ErrNoRows) {
		return discussions.Discussion{}, discussions.ErrNotFound
	}
	if err != nil {
		return discussions.Discussion{}, err
	}
	return decodeDiscussion(v)
}

// replyPage is the query of a page of q's replies (oldest first: reply
// ids are ULIDs), over $1 (the discussion), $2 (after), $3 (the limit)
// and $4 (whether hidden replies are listed).
const replyPage = "SELECT doc FROM replies WHERE discussion_id = $1 AND id > $2 AND (NOT hidden OR $4) ORDER BY id LIMIT $3"

// ListReplies implements discussions.Store in one statement.
func (s *DB) ListReplies(ctx context.Context, q discussions.ReplyQuery) (discussions.ReplyPage, error) {
	page := discussions.ReplyPage{Replies: []discussions.Reply{}}
	if _, err := ulid.ParseStrict(q.DiscussionID); err != nil {
		return page, discussions.ErrNotFound
	}
	var err error
	page.Replies, page.Next, err = pageDocs(ctx, s, q.PageSize, decodeReply, func(r discussions.Reply) string { return r.ID },
		page.Replies, replyPage, q.DiscussionID, q.After, q.PageSize+1, q.IncludeHidden)
	return page, err
}

// GetThread implements discussions.Store in one statement: the
// discussion's row and its page of replies as one array.
func (s *DB) GetThread(ctx context.Context, q discussions.ReplyQuery) (discussions.Discussion, discussions.ReplyPage, error) {
	page := discussions.ReplyPage{Replies: []discussions.Reply{}}
	if _, err := ulid.ParseStrict(q.DiscussionID); err != nil {
		return discussions.Discussion{}, page, discussions.ErrNotFound
	}
	var (
		v       []byte
		replies [][]byte
	)
	err := s.readRow(ctx, "SELECT doc, ARRAY("+replyPage+") FROM discussions WHERE id = $1",
		[]any{q.DiscussionID, q.After, q.PageSize + 1, q.IncludeHidden}, &v, &replies)
	if errors.Is(err, pgx.ErrNoRows) {
		return discussions.Discussion{}, page, discussions.ErrNotFound
	}
	if err != nil {
		return discussions.Discussion{}, page, err
	}
	d, err := decodeDiscussion(v)
	if err != nil {
		return d, page, err
	}
	page.Replies, page.Next, err = keepPage(replies, q.PageSize, decodeReply, func(r discussions.Reply) string { return r.ID }, page.Replies)
	return d, page, err
}

// decodeReply reads a reply's document.
func decodeReply(v []byte) (discussions.Reply, error) {
	var r discussions.Reply
	if err := json.Unmarshal(v, &r); err != nil {
		return r, fmt.Errorf("postgres: decode reply: %w", err)
	}
	return r, nil
}

// ListDiscussions implements discussions.Store: newest first (ids are
// ULIDs), or oldest first; the page and its total (totals.go) in one
// statement.
func (s *DB) ListDiscussions(ctx context.Context, q discussions.ListQuery) (discussions.Page, error) {
	page := discussions.Page{Discussions: []discussions.Discussion{}}
	after, cmp, order := q.After, "<", "DESC"
	if q.Oldest {
		cmp, order = ">", "ASC"
	}
	switch {
	case after == "" && q.Oldest:
		// "" is below every ULID
	case after == "":
		after = "\x7f" // above every ULID
	default:
		if _, err := ulid.ParseStrict(after); err != nil {
			return page, discussions.ErrNotFound
		}
	}
	args, where := []any{after, q.PageSize + 1}, ""
	if q.Status != "" {
		args, where = append(args, string(q.Status)), " AND status = $3"
	}
	var err error
	page.Discussions, page.Next, page.Total, err = totalPage(ctx, s, q.PageSize, decodeDiscussion,
		func(d discussions.Discussion) string { return d.ID }, page.Discussions, discussionTotal(q.Status, "$3"),
		"SELECT doc FROM discussions WHERE id "+cmp+" $1 AND NOT hidden"+where+" ORDER BY id "+order+" LIMIT $2", args...)
	return page, err
}

// AddReply implements discussions.Store, in two round trips: BEGIN and
// the loads (the author's row lock and reply window; the discussion under
// its row lock; its WORKING tasks under theirs, with their push configs;
// its members), then asknet.DecideReply, then the writes and COMMIT. The
// locks come in the order agent, discussion, tasks: replies to one
// discussion are decided one at a time, one author's replies too (so the
// reply rate holds across discussions and processes), and a cancel racing
// the reply waits, or is waited for and then skipped.
func (s *DB) AddReply(ctx context.Context, r discussions.Reply, lim discussions.Limits) (discussions.ReplyResult, error) {
	var (
		st  asknet.ReplyState
		out asknet.ReplyOutcome
	)
	err := s.command(ctx, CmdReply, func(b *pgx.Batch) {
		st = asknet.ReplyState{}
		lockAgent(b, r.AuthorID)
		loadWindow(b, windowReply, r.AuthorID, &st.Window)
		b.Queue("SELECT doc FROM discussions WHERE id = $1 FOR UPDATE", r.DiscussionID).QueryRow(scanDiscussion(&st.Discussion))
		b.Queue("SELECT "+headerColumns+" FROM tasks WHERE discussion_id = $1 AND state = $2 ORDER BY id FOR UPDATE",
			r.DiscussionID, string(a2a.TaskStateWorking)).Query(func(rows pgx.Rows) error {
			var err error
			st.Working, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (tasks.Task, error) { return scanHeader(row) })
			return err
		})
		b.Queue(`SELECT c.task_id, c.doc FROM push_configs c JOIN tasks t ON t.id = c.task_id
			WHERE t.discussion_id = $1 AND t.state = $2 ORDER BY c.task_id, c.id`, r.DiscussionID, string(a2a.TaskStateWorking)).
			Query(func(rows pgx.Rows) error {
				for rows.Next() {
					var (
						taskID string
						v      []byte
					)
					if err := rows.Scan(&taskID, &v); err != nil {
						return err
					}
					c, err := storedoc.DecodePushConfig(v)
					if err != nil {
						return err
					}
					if st.Configs == nil {
						st.Configs = map[string][]push.Config{}
					}
					st.Configs[taskID] = append(st.Configs[taskID], c)
				}
				return rows.Err()
			})
		b.Queue(`SELECT owner_id, array_agg(id ORDER BY id) FROM tasks
			WHERE discussion_id = $1 GROUP BY owner_id ORDER BY owner_id`, r.DiscussionID).Query(func(rows pgx.Rows) error {
			var err error
			st.Members, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (discussions.Member, error) {
				var m discussions.Member
				err := row.Scan(&m.AgentID, &m.TaskIDs)
				return m, err
			})
			return err
		})
	}, func() (func(execer) error, error) {
		var err error
		if out, err = asknet.DecideReply(st, r, lim); err != nil {
			return nil, err
		}
		return func(w execer) error { return s.persistReply(ctx, w, &out, st.Working) }, nil
	})
	if err != nil {
		return discussions.ReplyResult{}, err
	}
	return out.Result, nil
}

// persistReply queues what DecideReply decided: the reply, the author's
// window, the completions and their deliveries, the discussion, the inbox
// entries, the counters and the log events.
func (s *DB) persistReply(ctx context.Context, w execer, o *asknet.ReplyOutcome, working []tasks.Task) error {
	r := &o.Result.Reply
	v, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if _, err := w.Exec(ctx, "INSERT INTO replies (discussion_id, id, doc, author_id) VALUES ($1, $2, $3, $4)",
		r.DiscussionID, r.ID, v, r.AuthorID); err != nil {
		return err
	}
	if o.Post.Window != nil {
		if err := putWindow(ctx, w, windowReply, r.AuthorID, *o.Post.Window); err != nil {
			return err
		}
	}
	before := make(map[string]*tasks.Task, len(working))
	for i := range working {
		before[working[i].ID] = &working[i]
	}
	acc := deltas{}
	var artifacts []byte // the same for every task the reply completes
	for i := range o.Completed {
		t := &o.Completed[i]
		old, ok := before[t.ID]
		if !ok {
			return fmt.Errorf("postgres: the reply completed task %s, which it did not load", t.ID)
		}
		if err := moveTask(ctx, w, old, t, acc, &artifacts); err != nil {
			return err
		}
	}
	for i := range o.Deliveries {
		if err := putDelivery(ctx, w, nil, &o.Deliveries[i], acc); err != nil {
			return err
		}
	}
	if err := putDiscussion(ctx, w, &o.Post.Discussion, o.Post.OldStatus); err != nil {
		return err
	}
	if err := putInboxes(ctx, w, o.Inbox); err != nil {
		return err
	}
	if err := acc.apply(ctx, w); err != nil {
		return err
	}
	return appendEvents(ctx, w, o.Events, r.CreatedAt)
}
