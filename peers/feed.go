package peers

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/input"
	"github.com/kfa-project/kfa/knowledge"
)

// Page sizes of the change feed.
const (
	DefaultFeedPage = 100
	MaxFeedPage     = 500
	// maxFeedDiscussions bounds the discussions one page reads (each is a
	// read of its replies): a page of the discussions' snapshot holds at
	// most this many, whatever the page size.
	maxFeedDiscussions = 100
	// feedScan bounds the log events one page reads: a page of events
	// that are not public may be empty, with HasMore.
	feedScan = 2000
)

// FeedSource is what the feed reads: the change log, and the records and
// discussions as readers see them. Both stores provide it.
type FeedSource interface {
	ReadLog(ctx context.Context, after changelog.Position, limit int) ([]changelog.Event, error)
	LogState(ctx context.Context) (changelog.State, error)
	ListRecords(ctx context.Context, after string, limit int) (knowledge.RecordPage, error)
	GetRecords(ctx context.Context, ids []string) ([]*knowledge.Record, error)
	GetDiscussion(ctx context.Context, id string) (discussions.Discussion, error)
	GetReply(ctx context.Context, discussionID, replyID string) (discussions.Reply, error)
	ListReplies(ctx context.Context, q discussions.ReplyQuery) (discussions.ReplyPage, error)
	ListDiscussions(ctx context.Context, q discussions.ListQuery) (discussions.Page, error)
}

// Feed is the public change feed a kfa serves to the servers that follow
// it: everything it would show anyone (records, answered discussions with
// their visible replies), and tombstones for what was deleted or hidden.
// It never holds private data (tasks, inboxes, agents, credentials, open
// discussions, anything hidden), nor documents this server follows from
// its own peers: they are not in the log's record and discussion events.
type Feed struct {
	src  FeedSource
	base string
}

// NewFeed returns the feed of src; base is the server's public URL, the
// base of every entry's page URL.
func NewFeed(src FeedSource, base string) *Feed {
	return &Feed{src: src, base: strings.TrimRight(base, "/")}
}

// FeedPage is one page of the feed, oldest first.
type FeedPage struct {
	// Server is the serving server's public URL: the origin of every
	// entry that names none.
	Server  string
	Changes []Change
	// Next is where the next page starts.
	Next Cursor
	// HasMore says the feed holds more after Next already.
	HasMore bool
}

// Changes returns up to limit entries after c (limit 0: DefaultFeedPage).
// From the beginning it lists a snapshot (every record, then every
// answered discussion), then follows the change log from where it stood
// when the snapshot began. A cursor behind the log's trimmed point, past
// its end, or of another database is ErrCursorExpired.
func (f *Feed) Changes(ctx context.Context, c Cursor, limit int) (FeedPage, error) {
	if limit == 0 {
		limit = DefaultFeedPage
	}
	if limit < 1 || limit > MaxFeedPage {
		return FeedPage{}, input.Errorf("pageSize", "must be an integer from 1 to %d", MaxFeedPage)
	}
	st, err := f.src.LogState(ctx)
	if err != nil {
		return FeedPage{}, fmt.Errorf("read the change log's state: %w", err)
	}
	tag := epochTag(st.Epoch)
	if !c.Started {
		c = Cursor{Started: true, Phase: PhaseRecords, Pos: st.Last, Epoch: tag}
	}
	switch {
	case c.Epoch != tag:
		return FeedPage{}, fmt.Errorf("%w (it is a cursor of another database)", ErrCursorExpired)
	case st.Last.Before(c.Pos):
		return FeedPage{}, fmt.Errorf("%w (it is past the end of this server's log)", ErrCursorExpired)
	case c.Pos.Before(st.Trimmed):
		return FeedPage{}, fmt.Errorf("%w (the log was trimmed past it)", ErrCursorExpired)
	}
	p := FeedPage{Server: f.base, Next: c}
	for len(p.Changes) < limit {
		var more bool
		switch p.Next.Phase {
		case PhaseRecords:
			more, err = f.records(ctx, &p, limit-len(p.Changes))
		case PhaseDiscussions:
			more, err = f.discussions(ctx, &p, min(limit-len(p.Changes), maxFeedDiscussions))
		default:
			more, err = f.log(ctx, &p, limit-len(p.Changes))
			p.HasMore = more
			return p, err
		}
		if err != nil {
			return FeedPage{}, err
		}
		if more {
			p.HasMore = true
			return p, nil
		}
		p.Next.Phase++
		p.Next.After = ""
	}
	p.HasMore = true
	return p, nil
}

// records lists up to n records after p.Next.After into p; more says the
// snapshot holds more records.
func (f *Feed) records(ctx context.Context, p *FeedPage, n int) (bool, error) {
	rp, err := f.src.ListRecords(ctx, p.Next.After, n)
	if err != nil {
		return false, fmt.Errorf("list records after %q: %w", p.Next.After, err)
	}
	for i := range rp.Records {
		r := rp.Records[i]
		p.Changes = append(p.Changes, f.recordChange(r.ID, &r, r.UpdatedAt))
		p.Next.After = r.ID
	}
	return rp.Next != "", nil
}

// discussions lists up to n answered discussions after p.Next.After,
// newest first, into p; more says the snapshot holds more.
func (f *Feed) discussions(ctx context.Context, p *FeedPage, n int) (bool, error) {
	dp, err := f.src.ListDiscussions(ctx, discussions.ListQuery{Status: discussions.StatusAnswered, PageSize: n, After: p.Next.After})
	if err != nil {
		return false, fmt.Errorf("list answered discussions: %w", err)
	}
	for _, d := range dp.Discussions {
		ch, ok, err := f.discussionChange(ctx, d, d.CreatedAt)
		if err != nil {
			return false, err
		}
		if ok {
			p.Changes = append(p.Changes, ch)
		}
		p.Next.After = d.ID
	}
	return dp.Next != "", nil
}

// log follows the change log after p.Next.Pos into p: each record or
// discussion an event names, read as it is now, once per page. It stops
// before the event of the (n+1)th document, or after feedScan events,
// or at the log's end; more says the log holds more.
func (f *Feed) log(ctx context.Context, p *FeedPage, n int) (bool, error) {
	evs, err := f.src.ReadLog(ctx, p.Next.Pos, feedScan)
	if err != nil {
		return false, fmt.Errorf("read the change log after %s: %w", p.Next.Pos, err)
	}
	type subject struct {
		source Source
		id     string
		at     changelog.Event
	}
	var subjects []subject
	seen := map[string]int{}
	stopped := false
	for _, e := range evs {
		src, id := feedSubject(e)
		if src != "" {
			key := string(src) + "\x00" + id
			if i, ok := seen[key]; ok {
				subjects[i].at = e
			} else {
				if len(subjects) == n {
					stopped = true
					break
				}
				seen[key] = len(subjects)
				subjects = append(subjects, subject{src, id, e})
			}
		}
		p.Next.Pos = e.Pos
	}
	var recIDs []string
	for _, s := range subjects {
		if s.source == SourceRecord {
			recIDs = append(recIDs, s.id)
		}
	}
	recs := map[string]*knowledge.Record{}
	if len(recIDs) > 0 {
		got, err := f.src.GetRecords(ctx, recIDs)
		if err != nil {
			return false, fmt.Errorf("read records: %w", err)
		}
		for i, id := range recIDs {
			recs[id] = got[i]
		}
	}
	for _, s := range subjects {
		if s.source == SourceRecord {
			p.Changes = append(p.Changes, f.recordChange(s.id, recs[s.id], s.at.At))
			continue
		}
		d, err := f.src.GetDiscussion(ctx, s.id)
		if errors.Is(err, discussions.ErrNotFound) {
			continue
		}
		if err != nil {
			return false, fmt.Errorf("read discussion %s: %w", s.id, err)
		}
		if d.Hidden {
			p.Changes = append(p.Changes, Change{Source: SourceDiscussion, ID: d.ID, Op: OpDelete,
				URL: f.discussionURL(d.ID), At: s.at.At, Origin: originOf(d)})
			continue
		}
		ch, ok, err := f.discussionChange(ctx, d, s.at.At)
		if err != nil {
			return false, err
		}
		if ok {
			p.Changes = append(p.Changes, ch)
		}
	}
	return stopped || len(evs) == feedScan, nil
}

// feedSubject is the document a log event changes, as the feed lists
// it: a record, or a discussion (opened ones wait for their answer).
func feedSubject(e changelog.Event) (Source, string) {
	switch e.Kind {
	case changelog.RecordUpserted, changelog.RecordDeleted:
		return SourceRecord, e.ID
	case changelog.DiscussionReplied, changelog.DiscussionChanged:
		return SourceDiscussion, e.ID
	case changelog.ItemHidden, changelog.ItemUnhidden:
		return SourceDiscussion, e.Ref
	}
	return "", ""
}

// recordChange is the entry of record id, r as it is now (nil: deleted
// at at).
func (f *Feed) recordChange(id string, r *knowledge.Record, at time.Time) Change {
	ch := Change{Source: SourceRecord, ID: id, Op: OpDelete, URL: f.base + "/records/" + url.PathEscape(id), At: at}
	if r != nil {
		ch.Op, ch.Record, ch.At = OpUpsert, r, r.UpdatedAt
	}
	return ch
}

// discussionChange is the entry of d, visible, changed at at: its thread
// when it is answered; ok is false for an open one, which the feed does
// not hold.
func (f *Feed) discussionChange(ctx context.Context, d discussions.Discussion, at time.Time) (Change, bool, error) {
	if d.Status != discussions.StatusAnswered {
		return Change{}, false, nil
	}
	rp, err := f.src.ListReplies(ctx, discussions.ReplyQuery{DiscussionID: d.ID, PageSize: MaxThreadReplies})
	if err != nil {
		return Change{}, false, fmt.Errorf("read the replies of discussion %s: %w", d.ID, err)
	}
	var accepted *discussions.Reply
	if d.AcceptedReplyID != "" {
		r, err := f.src.GetReply(ctx, d.ID, d.AcceptedReplyID)
		switch {
		case err == nil && !r.Hidden:
			accepted = &r
		case err != nil && !errors.Is(err, discussions.ErrReplyNotFound):
			return Change{}, false, fmt.Errorf("read the accepted reply of discussion %s: %w", d.ID, err)
		}
	}
	t := ThreadOf(d, accepted, rp.Replies)
	ch := Change{Source: SourceDiscussion, ID: d.ID, Op: OpUpsert, URL: f.discussionURL(d.ID), At: t.ChangedAt(),
		Origin: originOf(d), Thread: &t}
	if at.After(ch.At) {
		ch.At = at
	}
	return ch, true, nil
}

func (f *Feed) discussionURL(id string) string { return f.base + "/discussions/" + url.PathEscape(id) }

// originOf is where d was asked first, when a peer forwarded it here.
func originOf(d discussions.Discussion) *Origin {
	if d.Origin == nil || d.Origin.Server == "" {
		return nil
	}
	return &Origin{Server: d.Origin.Server, ID: d.Origin.ID}
}
