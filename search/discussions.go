package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/knowledge"
	"github.com/kfa-project/kfa/tasks"
)

// DiscussionSource is what the index reads of the discussions. store.DB
// provides it.
type DiscussionSource interface {
	ListDiscussions(ctx context.Context, q discussions.ListQuery) (discussions.Page, error)
	GetDiscussion(ctx context.Context, id string) (discussions.Discussion, error)
	ListReplies(ctx context.Context, q discussions.ReplyQuery) (discussions.ReplyPage, error)
}

// Bounds on what one discussion contributes to the index.
const (
	maxIndexedReplies = 50
	maxAnswersLen     = 100_000 // bytes of reply text
	discussionPage    = 100
)

// How discussions are kept in step, without scanning anything per query:
//
//   - Every discussion is indexed, open or answered, with its replies
//     (status and reply count stored beside them). Discussions are never
//     deleted, so the index only grows.
//   - When the index opens it reconciles once, in the background (see
//     reconcile.go): it walks the discussions (one cursor walk) and
//     re-indexes those whose status or reply count differs from the
//     indexed ones. Open does not wait for it.
//   - While it runs, DiscussionWatch (wrapped around the stores the tasks
//     and discussions services write through) names each discussion that
//     was asked or got a reply once that write commits; the follower
//     re-reads just those, at once.
//   - As a safety net for writes by a path the watch does not see, every
//     tick compares the store's discussion and answered counts (two
//     counter reads) with the indexed ones and starts a background
//     reconcile when they differ, unless one runs.

// DiscussionWatch records which discussions were asked or got a reply, so
// the index re-reads only those. It is safe for concurrent use.
type DiscussionWatch struct {
	mu     sync.Mutex
	dirty  map[string]struct{}
	signal chan struct{}
}

// NewDiscussionWatch returns an empty watch.
func NewDiscussionWatch() *DiscussionWatch {
	return &DiscussionWatch{dirty: map[string]struct{}{}, signal: make(chan struct{}, 1)}
}

// Wrap returns s with AddReply reported to the watch after it commits.
func (w *DiscussionWatch) Wrap(s discussions.Store) discussions.Store {
	return &watchedStore{Store: s, w: w}
}

// WrapTasks returns s with each ask that opens a discussion reported to
// the watch after it commits.
func (w *DiscussionWatch) WrapTasks(s tasks.Store) tasks.Store {
	return &watchedTasks{Store: s, w: w}
}

func (w *DiscussionWatch) mark(id string) {
	w.mu.Lock()
	w.dirty[id] = struct{}{}
	w.mu.Unlock()
	select {
	case w.signal <- struct{}{}:
	default:
	}
}

// take returns and forgets the discussions marked so far.
func (w *DiscussionWatch) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	ids := make([]string, 0, len(w.dirty))
	for id := range w.dirty {
		ids = append(ids, id)
	}
	clear(w.dirty)
	return ids
}

type watchedStore struct {
	discussions.Store
	w *DiscussionWatch
}

func (s *watchedStore) AddReply(ctx context.Context, r discussions.Reply, lim discussions.Limits) (discussions.ReplyResult, error) {
	res, err := s.Store.AddReply(ctx, r, lim)
	if err == nil {
		s.w.mark(r.DiscussionID)
	}
	return res, err
}

type watchedTasks struct {
	tasks.Store
	w *DiscussionWatch
}

func (s *watchedTasks) CreateAsk(ctx context.Context, c tasks.CreateAsk) (tasks.AskResult, error) {
	res, err := s.Store.CreateAsk(ctx, c)
	if err == nil && res.Created && c.JoinDiscussionID == "" {
		s.w.mark(res.Task.DiscussionID)
	}
	return res, err
}

// discCounts are how many discussions the index holds.
type discCounts struct{ all, answered int }

func (a discCounts) plus(b discCounts) discCounts {
	return discCounts{all: a.all + b.all, answered: a.answered + b.answered}
}

// indexedState is the reply count (-1 when absent) and status stored
// with discussion id.
func indexedState(idx bleve.Index, id string) (int, string) {
	doc, err := idx.Document(discussionDocID(id))
	if err != nil || doc == nil {
		return -1, ""
	}
	n, status := -1, ""
	doc.VisitFields(func(f index.Field) {
		switch f.Name() {
		case fReplies:
			if v, err := strconv.Atoi(string(f.Value())); err == nil {
				n = v
			}
		case fStatus:
			status = string(f.Value())
		}
	})
	return n, status
}

// addDiscussion puts d with its replies into b. It reads only the
// replies it keeps: the first maxIndexedReplies, in one page.
func (x *Index) addDiscussion(ctx context.Context, b *bleve.Batch, d discussions.Discussion) error {
	page, err := x.o.Discussions.ListReplies(ctx, discussions.ReplyQuery{DiscussionID: d.ID, PageSize: maxIndexedReplies})
	if err != nil {
		return fmt.Errorf("search: replies of discussion %s: %w", d.ID, err)
	}
	var body strings.Builder
	body.WriteString(d.Body)
	size := 0
	doc := discussionDoc{
		Title: d.Title, Details: d.Body, Kind: d.Kind, Product: d.Product, Environment: d.Environment,
		Status: string(d.Status), Replies: strconv.Itoa(d.ReplyCount), Created: formatTime(d.CreatedAt),
		Answered: formatTime(d.AnsweredAt),
	}
	thread := []threadReply{}
	for _, r := range page.Replies {
		if size += len(r.Body); size > maxAnswersLen {
			break
		}
		body.WriteString("\n\n")
		body.WriteString(r.Body)
		thread = append(thread, threadReply{ID: r.ID, AuthorName: r.AuthorName, Body: r.Body, CreatedAt: formatTime(r.CreatedAt)})
		if doc.Answer == "" && discussions.Qualifies(d, r) {
			doc.Answer = r.Body
		}
	}
	doc.Body = body.String()
	tb, err := json.Marshal(thread)
	if err != nil {
		return err
	}
	doc.Thread = string(tb)
	if err := b.Index(discussionDocID(d.ID), doc); err != nil {
		return fmt.Errorf("search: index discussion %s: %w", d.ID, err)
	}
	return nil
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return knowledge.FormatTime(t)
}

// syncDiscussions re-indexes the discussions the watch named, and starts
// a reconcile in the background when the store's counts moved without it
// (or the last one did not finish). The caller holds writeMu.
func (x *Index) syncDiscussions(ctx context.Context) error {
	if x.o.Discussions == nil {
		return nil
	}
	var ids []string
	if x.o.Watch != nil {
		ids = x.o.Watch.take()
	}
	if err := x.indexDiscussions(ctx, ids); err != nil {
		for _, id := range ids {
			x.o.Watch.mark(id) // retried on the next sync
		}
		return err
	}
	if x.reconciling {
		return nil // the running reconcile sets the counts when it ends
	}
	store, err := x.storeCounts(ctx)
	if err != nil {
		return err
	}
	if x.stale || store != x.discs {
		if !x.stale {
			x.o.Log.Info("discussions changed outside the watch; reconciling in the background",
				"discussions", store.all, "answered", store.answered, "indexed", x.discs.all, "indexed_answered", x.discs.answered)
		}
		x.startReconcile(ctx)
	}
	return nil
}

// storeCounts reads the store's discussion and answered counts (two
// counter reads).
func (x *Index) storeCounts(ctx context.Context) (discCounts, error) {
	var n discCounts
	for _, c := range []struct {
		status discussions.Status
		n      *int
	}{{"", &n.all}, {discussions.StatusAnswered, &n.answered}} {
		p, err := x.o.Discussions.ListDiscussions(ctx, discussions.ListQuery{Status: c.status, PageSize: 1})
		if err != nil {
			return discCounts{}, fmt.Errorf("search: count discussions: %w", err)
		}
		*c.n = p.Total
	}
	return n, nil
}

// indexDiscussions re-reads the discussions ids and indexes them. The
// caller holds writeMu.
func (x *Index) indexDiscussions(ctx context.Context, ids []string) error {
	b := x.rec.NewBatch()
	n, walked := x.discs, x.rc.n
	for _, id := range ids {
		d, err := x.o.Discussions.GetDiscussion(ctx, id)
		if errors.Is(err, discussions.ErrNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("search: read discussion %s: %w", id, err)
		}
		replies, status := indexedState(x.rec, id)
		if replies == d.ReplyCount && status == string(d.Status) {
			continue
		}
		var delta discCounts
		if replies < 0 {
			delta.all++
		}
		if status != string(discussions.StatusAnswered) && d.Status == discussions.StatusAnswered {
			delta.answered++
		}
		n = n.plus(delta)
		if x.rc.walked(id) {
			walked = walked.plus(delta)
		}
		if err := x.addDiscussion(ctx, b, d); err != nil {
			return err
		}
	}
	if b.Size() > 0 {
		if err := x.rec.Batch(b); err != nil {
			return fmt.Errorf("search: index discussions: %w", err)
		}
	}
	x.setDiscs(n)
	x.rc.n = walked
	return nil
}

// setDiscs records the indexed discussion counts. The caller holds
// writeMu.
func (x *Index) setDiscs(n discCounts) {
	x.discs = n
	x.discCount.Store(int64(n.all))
}
