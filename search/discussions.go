package search

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/kfa-project/kfa/discussions"
)

// DiscussionSource is what the discussions index reads. store.DB provides
// it.
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

// How the discussions index keeps in step, without scanning anything per
// query:
//
//   - Answered discussions are indexed with their replies. A discussion
//     becomes answered once and is never deleted, so the index only grows.
//   - When the index opens it reconciles once: it walks the answered
//     discussions (one cursor walk over the store's status index) and
//     re-indexes those whose reply count differs from the indexed one.
//   - While it runs, DiscussionWatch (wrapped around the store that
//     discussions.Service writes through) names each discussion that got a
//     reply; the follower re-reads just those, at once.
//   - As a safety net for replies written by a path the watch does not
//     see, every tick compares the store's answered count (one counter
//     read) with the number indexed and reconciles when they differ.

// DiscussionWatch records which discussions got a reply, so the index
// re-reads only those. It is safe for concurrent use.
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

// openDiscussions opens the discussions index and reconciles it with the
// store; rebuild starts it from scratch. The caller holds writeMu.
func (x *Index) openDiscussions(ctx context.Context, rebuild bool) error {
	if x.o.Discussions == nil {
		return nil
	}
	dir := filepath.Join(x.o.Dir, discussionsDir)
	if rebuild {
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("search: remove discussions index: %w", err)
		}
	}
	idx, _, err := openIndex(dir, x.discMapping, x.o.Log)
	if err != nil {
		return err
	}
	x.disc = idx
	if x.o.Watch != nil {
		x.o.Watch.take() // the reconcile below covers them
	}
	n, err := x.reconcileDiscussions(ctx, idx)
	x.discCount = n
	return err
}

// reconcileDiscussions indexes every answered discussion whose reply count
// differs from the one in idx (all of them, in an empty index), and
// returns the number of answered discussions.
func (x *Index) reconcileDiscussions(ctx context.Context, idx bleve.Index) (int, error) {
	q := discussions.ListQuery{Status: discussions.StatusAnswered, PageSize: discussionPage}
	count := 0
	for {
		p, err := x.o.Discussions.ListDiscussions(ctx, q)
		if err != nil {
			return 0, fmt.Errorf("search: list answered discussions: %w", err)
		}
		b := idx.NewBatch()
		for _, d := range p.Discussions {
			count++
			if indexedReplies(idx, d.ID) == d.ReplyCount {
				continue
			}
			if err := x.addDiscussion(ctx, b, d); err != nil {
				return 0, err
			}
		}
		if b.Size() > 0 {
			if err := idx.Batch(b); err != nil {
				return 0, fmt.Errorf("search: index discussions: %w", err)
			}
		}
		if p.Next == "" {
			return count, nil
		}
		q.After = p.Next
	}
}

// indexedReplies is the reply count stored with discussion id, or -1.
func indexedReplies(idx bleve.Index, id string) int {
	doc, err := idx.Document(id)
	if err != nil || doc == nil {
		return -1
	}
	n := -1
	doc.VisitFields(func(f index.Field) {
		if f.Name() == fReplies {
			if v, err := strconv.Atoi(string(f.Value())); err == nil {
				n = v
			}
		}
	})
	return n
}

// addDiscussion puts d with its replies into b. It reads only the
// replies it keeps: the first maxIndexedReplies, in one page.
func (x *Index) addDiscussion(ctx context.Context, b *bleve.Batch, d discussions.Discussion) error {
	page, err := x.o.Discussions.ListReplies(ctx, discussions.ReplyQuery{DiscussionID: d.ID, PageSize: maxIndexedReplies})
	if err != nil {
		return fmt.Errorf("search: replies of discussion %s: %w", d.ID, err)
	}
	var answers strings.Builder
	for _, r := range page.Replies {
		if answers.Len()+len(r.Body) > maxAnswersLen {
			break
		}
		answers.WriteString(r.Body)
		answers.WriteString("\n\n")
	}
	doc := discussionDoc{Title: d.Title, Body: d.Body, Answers: answers.String(), Replies: strconv.Itoa(d.ReplyCount)}
	if err := b.Index(d.ID, doc); err != nil {
		return fmt.Errorf("search: index discussion %s: %w", d.ID, err)
	}
	return nil
}

// syncDiscussions re-indexes the discussions the watch named, and
// reconciles everything when the answered count moved without it. The
// caller holds writeMu.
func (x *Index) syncDiscussions(ctx context.Context) error {
	if x.o.Discussions == nil || x.disc == nil {
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
	p, err := x.o.Discussions.ListDiscussions(ctx, discussions.ListQuery{Status: discussions.StatusAnswered, PageSize: 1})
	if err != nil {
		return fmt.Errorf("search: count answered discussions: %w", err)
	}
	if p.Total != x.discCount {
		x.o.Log.Info("answered discussions changed outside the watch; reconciling", "answered", p.Total, "indexed", x.discCount)
		n, err := x.reconcileDiscussions(ctx, x.disc)
		x.discCount = n
		return err
	}
	return nil
}

// indexDiscussions re-reads the discussions ids and indexes the answered
// ones. The caller holds writeMu.
func (x *Index) indexDiscussions(ctx context.Context, ids []string) error {
	b := x.disc.NewBatch()
	added := 0
	for _, id := range ids {
		d, err := x.o.Discussions.GetDiscussion(ctx, id)
		if errors.Is(err, discussions.ErrNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("search: read discussion %s: %w", id, err)
		}
		if d.Status != discussions.StatusAnswered {
			continue
		}
		if indexedReplies(x.disc, id) < 0 {
			added++
		}
		if err := x.addDiscussion(ctx, b, d); err != nil {
			return err
		}
	}
	if b.Size() > 0 {
		if err := x.disc.Batch(b); err != nil {
			return fmt.Errorf("search: index discussions: %w", err)
		}
	}
	x.discCount += added
	return nil
}

// flushDiscussions waits until the discussions index is on disk.
func flushDiscussions(idx bleve.Index) error {
	return flush(idx, keyFlush, []byte(time.Now().UTC().Format(time.RFC3339Nano)))
}
