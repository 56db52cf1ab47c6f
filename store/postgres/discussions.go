package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/oklog/ulid/v2"

	"github.com/kfa-project/kfa/commands"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/storage"
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

// The schema's discussions and replies.
func init() {
	mapped[commands.Discussions] = &table[discussions.Discussion]{
		kind: commands.Discussions, name: "discussions", key: []column{{"t.id", convText}},
		cols: "t.doc", read: docScan(decodeDiscussion),
		indexes: map[storage.Ix]tindex{
			commands.DiscussionsListed: {cols: []column{{"t.status", convText}}, where: "NOT t.hidden"},
		},
		write: func(w *pgWrites, old, d *discussions.Discussion) error {
			var was discussions.Status
			if old != nil {
				was = old.Status
			}
			return putDiscussion(w.ctx, w.w, d, was)
		},
	}
	mapped[commands.Replies] = &table[discussions.Reply]{
		kind: commands.Replies, name: "replies", key: []column{{"t.discussion_id", convText}, {"t.id", convText}},
		// A brief reply is its header, not its body: the columns, and
		// the time from the document.
		cols: "t.doc", brief: "t.id, t.discussion_id, t.author_id, t.hidden, convert_from(t.doc, 'UTF8')::json->>'createdAt'",
		read: func(row pgx.Row, brief bool) (discussions.Reply, error) {
			if !brief {
				return docScan(decodeReply)(row, false)
			}
			var (
				r  discussions.Reply
				at string
			)
			if err := row.Scan(&r.ID, &r.DiscussionID, &r.AuthorID, &r.Hidden, &at); err != nil {
				return r, err
			}
			var err error
			if r.CreatedAt, err = time.Parse(time.RFC3339Nano, at); err != nil {
				return r, fmt.Errorf("postgres: reply %s: createdAt %q: %w", r.ID, at, err)
			}
			return r, nil
		},
		indexes: map[storage.Ix]tindex{commands.RepliesByID: {cols: []column{{"t.id", convText}}}},
		write:   func(w *pgWrites, _, r *discussions.Reply) error { return putReply(w.ctx, w.w, r) },
	}
}
