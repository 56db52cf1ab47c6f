package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/oklog/ulid/v2"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/store/internal/storedoc"
	"github.com/kfa-project/kfa/tasks"
)

const counterDiscussions = "d"

func discCounter(s discussions.Status) string { return "d|" + string(s) }

// putDiscussion writes d, moving its status counter from oldStatus (""
// for a new discussion).
func putDiscussion(ctx context.Context, tx pgx.Tx, d *discussions.Discussion, oldStatus discussions.Status, acc deltas) error {
	v, err := json.Marshal(d)
	if err != nil {
		return err
	}
	if oldStatus == "" {
		acc.add(counterDiscussions, 1)
		acc.add(discCounter(d.Status), 1)
		_, err = tx.Exec(ctx, "INSERT INTO discussions (id, status, doc) VALUES ($1, $2, $3)", d.ID, string(d.Status), v)
		return err
	}
	if oldStatus != d.Status {
		acc.add(discCounter(oldStatus), -1)
		acc.add(discCounter(d.Status), 1)
	}
	_, err = tx.Exec(ctx, "UPDATE discussions SET status = $2, doc = $3 WHERE id = $1", d.ID, string(d.Status), v)
	return err
}

func decodeDiscussion(v []byte) (discussions.Discussion, error) {
	var d discussions.Discussion
	if err := json.Unmarshal(v, &d); err != nil {
		return d, fmt.Errorf("postgres: decode discussion: %w", err)
	}
	return d, nil
}

func getDiscussion(ctx context.Context, tx pgx.Tx, id string, lock bool) (discussions.Discussion, error) {
	q := "SELECT doc FROM discussions WHERE id = $1"
	if lock {
		q += " FOR UPDATE"
	}
	var v []byte
	err := tx.QueryRow(ctx, q, id).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return discussions.Discussion{}, discussions.ErrNotFound
	}
	if err != nil {
		return discussions.Discussion{}, err
	}
	return decodeDiscussion(v)
}

// GetDiscussion implements discussions.Store.
func (s *DB) GetDiscussion(ctx context.Context, id string) (discussions.Discussion, error) {
	var d discussions.Discussion
	err := s.read(ctx, func(tx pgx.Tx) error {
		var err error
		d, err = getDiscussion(ctx, tx, id, false)
		return err
	})
	return d, err
}

// ListReplies implements discussions.Store: oldest first (reply ids are
// ULIDs).
func (s *DB) ListReplies(ctx context.Context, q discussions.ReplyQuery) (discussions.ReplyPage, error) {
	page := discussions.ReplyPage{Replies: []discussions.Reply{}}
	if _, err := ulid.ParseStrict(q.DiscussionID); err != nil {
		return page, discussions.ErrNotFound
	}
	var err error
	page.Replies, page.Next, err = pageDocs(ctx, s.pool, q.PageSize, decodeReply, func(r discussions.Reply) string { return r.ID },
		page.Replies, "SELECT doc FROM replies WHERE discussion_id = $1 AND id > $2 ORDER BY id LIMIT $3",
		q.DiscussionID, q.After, q.PageSize+1)
	return page, err
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
// ULIDs).
func (s *DB) ListDiscussions(ctx context.Context, q discussions.ListQuery) (discussions.Page, error) {
	page := discussions.Page{Discussions: []discussions.Discussion{}}
	err := s.read(ctx, func(tx pgx.Tx) error {
		var (
			err  error
			rows pgx.Rows
		)
		after := q.After
		if after == "" {
			after = "\x7f" // above every ULID
		} else if _, err := ulid.ParseStrict(after); err != nil {
			return discussions.ErrNotFound
		}
		if q.Status != "" {
			if page.Total, err = readCounter(ctx, tx, discCounter(q.Status)); err != nil {
				return err
			}
			rows, err = tx.Query(ctx, `SELECT doc FROM discussions WHERE status = $1 AND id < $2
				ORDER BY id DESC LIMIT $3`, string(q.Status), after, q.PageSize+1)
		} else {
			if page.Total, err = readCounter(ctx, tx, counterDiscussions); err != nil {
				return err
			}
			rows, err = tx.Query(ctx, "SELECT doc FROM discussions WHERE id < $1 ORDER BY id DESC LIMIT $2", after, q.PageSize+1)
		}
		if err != nil {
			return err
		}
		docs, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
		if err != nil {
			return err
		}
		for _, v := range docs {
			if len(page.Discussions) == q.PageSize {
				page.Next = page.Discussions[len(page.Discussions)-1].ID
				break
			}
			d, err := decodeDiscussion(v)
			if err != nil {
				return err
			}
			page.Discussions = append(page.Discussions, d)
		}
		return nil
	})
	return page, err
}

// AddReply implements discussions.Store, in one transaction: it locks the
// discussion (so replies to it are decided one at a time), checks the
// bound on replies and the author's window, stores the reply, and when it
// qualifies completes every WORKING task of the discussion but the
// replier's, under their row locks (a cancel racing it waits, or is
// waited for and then skipped), and writes the inbox entries.
func (s *DB) AddReply(ctx context.Context, r discussions.Reply, lim discussions.Limits) (discussions.ReplyResult, error) {
	var (
		res  discussions.ReplyResult
		done []tasks.Task
	)
	err := s.write(ctx, func(tx pgx.Tx) error {
		res, done = discussions.ReplyResult{Reply: r}, nil
		d, err := getDiscussion(ctx, tx, r.DiscussionID, true)
		if err != nil {
			return err
		}
		if lim.MaxReplies > 0 && d.ReplyCount >= lim.MaxReplies {
			return discussions.ErrTooManyReplies
		}
		if err := takeWindow(ctx, tx, windowReply, r.AuthorID, lim.ReplyRate, r.CreatedAt); err != nil {
			return err
		}
		v, err := json.Marshal(r)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "INSERT INTO replies (discussion_id, id, doc) VALUES ($1, $2, $3)", r.DiscussionID, r.ID, v); err != nil {
			return err
		}
		acc := deltas{}
		evs := []changelog.Event{{Kind: changelog.DiscussionReplied, ID: d.ID, Owner: r.AuthorID, Ref: r.ID, At: r.CreatedAt}}
		res.Qualifying = discussions.Qualifies(d, r)
		if res.Qualifying {
			evs[0].Note = changelog.NoteQualifying
			if done, err = completeWorking(ctx, tx, r, acc, &evs); err != nil {
				return err
			}
			for _, t := range done {
				res.CompletedTaskIDs = append(res.CompletedTaskIDs, t.ID)
			}
		}
		oldStatus := d.Status
		d.ReplyCount++
		if res.Qualifying && d.Status == discussions.StatusOpen {
			d.Status = discussions.StatusAnswered
			d.AnsweredAt = r.CreatedAt
		}
		if err := putDiscussion(ctx, tx, &d, oldStatus, acc); err != nil {
			return err
		}
		if res.Notified, err = notifyMembers(ctx, tx, d, r); err != nil {
			return err
		}
		if err := appendEvents(ctx, tx, evs, r.CreatedAt); err != nil {
			return err
		}
		return acc.apply(ctx, tx)
	})
	if err != nil {
		return discussions.ReplyResult{}, err
	}
	return res, nil
}

// completeWorking completes the discussion's WORKING tasks r answers (all
// but the replier's own), in id order, and returns them; it adds the log
// events of the transitions and their deliveries to evs.
func completeWorking(ctx context.Context, tx pgx.Tx, r discussions.Reply, acc deltas, evs *[]changelog.Event) ([]tasks.Task, error) {
	rows, err := tx.Query(ctx, "SELECT "+taskColumns+` FROM tasks
		WHERE discussion_id = $1 AND state = $2 AND owner_id <> $3 ORDER BY id FOR UPDATE`,
		r.DiscussionID, string(a2a.TaskStateWorking), r.AuthorID)
	if err != nil {
		return nil, err
	}
	working, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (taskRow, error) { return scanTask(row) })
	if err != nil {
		return nil, err
	}
	ref := tasks.ReplyRef{
		DiscussionID: r.DiscussionID, ReplyID: r.ID, AuthorID: r.AuthorID, AuthorName: r.AuthorName,
		Body: r.Body, At: r.CreatedAt,
	}
	var done []tasks.Task
	for i := range working {
		t, err := working[i].task()
		if err != nil {
			return nil, err
		}
		old := t
		if !t.CompleteByReply(ref) {
			continue
		}
		if err := updateTask(ctx, tx, &old, &t, acc); err != nil {
			return nil, err
		}
		due, err := enqueuePush(ctx, tx, &t, acc)
		if err != nil {
			return nil, err
		}
		*evs = append(append(*evs, taskMoved(&t)), due...)
		done = append(done, t)
	}
	return done, nil
}

// notifyMembers writes one inbox entry about r for every agent with a task
// on the discussion, and for its author, except r's author, in agent id
// order. It returns how many it wrote.
func notifyMembers(ctx context.Context, tx pgx.Tx, d discussions.Discussion, r discussions.Reply) (int, error) {
	rows, err := tx.Query(ctx, `SELECT owner_id, array_agg(id ORDER BY id) FROM tasks
		WHERE discussion_id = $1 GROUP BY owner_id ORDER BY owner_id`, d.ID)
	if err != nil {
		return 0, err
	}
	type member struct {
		Owner string
		Tasks []string
	}
	members, err := pgx.CollectRows(rows, pgx.RowToStructByPos[member])
	if err != nil {
		return 0, err
	}
	n := 0
	notify := func(agent string, taskIDs []string) error {
		if agent == r.AuthorID {
			return nil
		}
		e := discussions.InboxEntry{
			ID: storedoc.InboxEntryID(r.ID, agent, r.CreatedAt), AgentID: agent, DiscussionID: d.ID, ReplyID: r.ID,
			TaskIDs: taskIDs, CreatedAt: r.CreatedAt,
		}
		n++
		return putInbox(ctx, tx, e, true)
	}
	authorDone := false
	for _, m := range members {
		if !authorDone && m.Owner >= d.AuthorID {
			authorDone = true
			if m.Owner != d.AuthorID {
				if err := notify(d.AuthorID, []string{}); err != nil {
					return n, err
				}
			}
		}
		if err := notify(m.Owner, m.Tasks); err != nil {
			return n, err
		}
	}
	if !authorDone {
		if err := notify(d.AuthorID, []string{}); err != nil {
			return n, err
		}
	}
	return n, nil
}
