package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/blevesearch/bleve/v2"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/knowledge"
	"github.com/kfa-project/kfa/trust"
)

// DiscussionSource is what the index reads of the discussions. Both
// stores provide it. A discussion the log names is read with its replies
// in one read (GetThread); the walk over every discussion reads a page
// of them, then each one's replies.
type DiscussionSource interface {
	ListDiscussions(ctx context.Context, q discussions.ListQuery) (discussions.Page, error)
	GetThread(ctx context.Context, q discussions.ReplyQuery) (discussions.Discussion, discussions.ReplyPage, error)
	GetReply(ctx context.Context, discussionID, replyID string) (discussions.Reply, error)
	ListReplies(ctx context.Context, q discussions.ReplyQuery) (discussions.ReplyPage, error)
}

// Bounds on what one discussion contributes to the index.
const (
	maxIndexedReplies = 50
	maxAnswersLen     = 100_000 // bytes of reply text
	discussionPage    = 100
)

// Every discussion readers see is indexed, open or answered, with the
// replies readers see (status and reply count stored beside them); a
// hidden one is removed, and indexed again when it is shown. The change
// log names the discussions that were opened, replied to, hidden, shown
// or otherwise changed; the follower reads each once per batch, however
// many events name it, and skips one whose reply count and status the
// index already holds (an event applied again) unless the event says
// that something else changed.

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

// indexedReplies is the page of a discussion's replies the index keeps:
// the first maxIndexedReplies, the ones readers see.
func indexedReplies(id string) discussions.ReplyQuery {
	return discussions.ReplyQuery{DiscussionID: id, PageSize: maxIndexedReplies}
}

// addListed puts d, read from a page of discussions, into b with its
// replies, which it reads first: none for a discussion without visible
// replies (a new question), which has none to list.
func (x *Index) addListed(ctx context.Context, b *bleve.Batch, d discussions.Discussion) error {
	if d.VisibleReplies() == 0 {
		return x.addDiscussion(ctx, b, d, nil)
	}
	page, err := x.o.Discussions.ListReplies(ctx, indexedReplies(d.ID))
	if err != nil {
		return fmt.Errorf("search: replies of discussion %s: %w", d.ID, err)
	}
	return x.addDiscussion(ctx, b, d, page.Replies)
}

// addDiscussion puts d with replies, its indexedReplies, into b, with
// the signals of its answer and the reputations of its authors, read in
// one read.
func (x *Index) addDiscussion(ctx context.Context, b *bleve.Batch, d discussions.Discussion, replies []discussions.Reply) error {
	var kept []discussions.Reply
	size := 0
	for _, r := range replies {
		if size += len(r.Body); size > maxAnswersLen {
			break
		}
		kept = append(kept, r)
	}
	// The accepted reply is the answer, wherever it is in the thread:
	// read on its own only when it is not among the replies read.
	candidates := kept
	if d.AcceptedReplyID != "" {
		r, err := x.acceptedReply(ctx, d, kept)
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(kept, func(k discussions.Reply) bool { return k.ID == r.ID }) {
			candidates = append(slices.Clip(kept), r)
		}
	}
	items := make([]trust.Item, len(candidates))
	authors := []string{d.AuthorID}
	for i, r := range candidates {
		items[i] = trust.ReplyItem(d.ID, r.ID)
		authors = append(authors, r.AuthorID)
	}
	board, err := x.board(ctx, items, authors)
	if err != nil {
		return err
	}
	var body strings.Builder
	body.WriteString(x.md.Text(d.Body))
	doc := discussionDoc{
		Title: d.Title, Details: d.Body, Kind: d.Kind, Product: d.Product, Environment: d.Environment,
		Status: string(d.Status), Replies: strconv.Itoa(d.VisibleReplies()), Created: formatTime(d.CreatedAt),
		Answered: formatTime(d.AnsweredAt), Accepted: d.AcceptedReplyID,
	}
	thread := []threadReply{}
	for _, r := range kept {
		body.WriteString("\n\n")
		body.WriteString(x.md.Text(r.Body))
		thread = append(thread, threadReply{ID: r.ID, AuthorID: r.AuthorID, AuthorName: r.AuthorName, Body: r.Body,
			CreatedAt: formatTime(r.CreatedAt), Accepted: r.ID == d.AcceptedReplyID,
			Signals: signalsDocOf(board.Of(trust.ReplyItem(d.ID, r.ID)).Tally)})
	}
	sig := signalsDoc{Author: d.AuthorID, AuthorName: d.AuthorName}
	if a := answerOf(d, candidates, board); a != nil {
		doc.Answer = x.md.Text(a.Body)
		sig = signalsDocOf(board.Of(trust.ReplyItem(d.ID, a.ID)).Tally)
		sig.Reply, sig.Author, sig.AuthorName = a.ID, a.AuthorID, a.AuthorName
	}
	doc.Signals = sig.encode()
	doc.Body = body.String()
	tb, err := json.Marshal(thread)
	if err != nil {
		return err
	}
	doc.Thread = string(tb)
	if err := b.Index(discussionDocID(d.ID), doc); err != nil {
		return fmt.Errorf("search: index discussion %s: %w", d.ID, err)
	}
	keepReputations(b, board, authors)
	return nil
}

// acceptedReply is d's accepted reply: from replies when it is among
// them, read otherwise.
func (x *Index) acceptedReply(ctx context.Context, d discussions.Discussion, replies []discussions.Reply) (discussions.Reply, error) {
	for _, r := range replies {
		if r.ID == d.AcceptedReplyID {
			return r, nil
		}
	}
	r, err := x.o.Discussions.GetReply(ctx, d.ID, d.AcceptedReplyID)
	if err != nil {
		return r, fmt.Errorf("search: accepted reply of discussion %s: %w", d.ID, err)
	}
	return r, nil
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return knowledge.FormatTime(t)
}

// indexDiscussions reads the discussions ids as they are now and puts
// them into b, skipping those the index holds with the same reply count
// and status unless changed names them, and deletes the hidden ones. It
// returns how many more discussions the index holds after (fewer when it
// deleted more than it added). The caller holds writeMu.
func (x *Index) indexDiscussions(ctx context.Context, b *bleve.Batch, ids []string, changed map[string]bool) (int, error) {
	if x.o.Discussions == nil {
		return 0, nil
	}
	added := 0
	for _, id := range ids {
		d, page, err := x.o.Discussions.GetThread(ctx, indexedReplies(id))
		if errors.Is(err, discussions.ErrNotFound) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("search: read discussion %s: %w", id, err)
		}
		replies, status := indexedState(x.rec, id)
		if d.Hidden {
			if replies >= 0 {
				b.Delete(discussionDocID(id))
				added--
			}
			continue
		}
		if replies == d.VisibleReplies() && status == string(d.Status) && !changed[id] {
			continue
		}
		if replies < 0 {
			added++
		}
		if err := x.addDiscussion(ctx, b, d, page.Replies); err != nil {
			return 0, err
		}
	}
	return added, nil
}

// buildDiscussions indexes every discussion into idx, a page at a time,
// and returns how many it indexed.
func (x *Index) buildDiscussions(ctx context.Context, idx bleve.Index) (int, error) {
	total, after := 0, ""
	for {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		p, err := x.o.Discussions.ListDiscussions(ctx, discussions.ListQuery{PageSize: discussionPage, After: after})
		if err != nil {
			return 0, fmt.Errorf("search: list discussions: %w", err)
		}
		b := idx.NewBatch()
		for _, d := range p.Discussions {
			if err := x.addListed(ctx, b, d); err != nil {
				return 0, err
			}
		}
		if b.Size() > 0 {
			if err := idx.Batch(b); err != nil {
				return 0, fmt.Errorf("search: index discussions: %w", err)
			}
		}
		total += len(p.Discussions)
		if p.Next == "" {
			return total, nil
		}
		after = p.Next
	}
}
