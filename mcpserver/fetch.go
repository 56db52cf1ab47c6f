package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/oklog/ulid/v2"

	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/input"
	"github.com/kfa-project/kfa/knowledge"
	"github.com/kfa-project/kfa/peers"
	"github.com/kfa-project/kfa/service"
)

// maxFetchText bounds the text of a fetched discussion, in bytes: replies
// that do not fit are counted, not shown (the page has them all).
const maxFetchText = 256 << 10

// fetch returns a record or a discussion by id. Discussion ids are ULIDs;
// a ULID that names no discussion may still be a record's id.
func (t *tools) fetch(ctx context.Context, in FetchInput) (FetchOutput, error) {
	id := in.ID
	if _, err := ulid.ParseStrict(id); err == nil {
		// One page of the oldest replies: the text is bounded anyway, and
		// the discussion's page has them all.
		d, replies, err := t.d.Service.GetDiscussion(ctx, id, service.RepliesQuery{PageSize: new(discussions.MaxPageSize)})
		if err == nil {
			return t.discussionDoc(d, replies.Replies), nil
		}
		if !errors.Is(err, discussions.ErrNotFound) {
			return FetchOutput{}, t.fail(ctx, err)
		}
	}
	if peers.IsDocumentKey(id) {
		d, err := t.d.Service.Followed(ctx, id)
		if errors.Is(err, peers.ErrNoDocument) {
			return FetchOutput{}, toolErrorf(OutcomeNotFound, "no document followed from a peer has the id %q; pass the id of a search result", id)
		}
		if err != nil {
			return FetchOutput{}, t.fail(ctx, err)
		}
		return followedDoc(d), nil
	}
	r, err := t.d.Service.Record(ctx, id)
	if errors.Is(err, knowledge.ErrNotFound) || errors.Is(err, input.ErrInvalid) {
		return FetchOutput{}, toolErrorf(OutcomeNotFound,
			"no record or discussion has the id %q; pass the id of a search result", id)
	}
	if err != nil {
		return FetchOutput{}, t.fail(ctx, err)
	}
	return t.recordDoc(r), nil
}

func (t *tools) recordDoc(r knowledge.Record) FetchOutput {
	return FetchOutput{
		ID: r.ID, Title: r.Title, Text: r.Body, URL: t.recordURL(r.ID),
		Metadata: FetchMetadata{
			Source: SourceRecord, Kind: r.Kind, Product: r.Product, Environment: r.Environment,
			Tags: r.Tags, SourceURL: r.URL, UpdatedAt: knowledge.FormatTime(r.UpdatedAt),
		},
	}
}

// discussionDoc is a discussion as one text: the question, then each
// reply with its author and time, oldest first.
func (t *tools) discussionDoc(d discussions.Discussion, replies []discussions.Reply) FetchOutput {
	var b strings.Builder
	fmt.Fprintf(&b, "Question by %s, %s:\n%s\n", d.AuthorName, knowledge.FormatTime(d.CreatedAt), d.Title)
	if d.Body != "" {
		fmt.Fprintf(&b, "\n%s\n", d.Body)
	}
	n := max(d.VisibleReplies(), len(replies))
	shown := 0
	for i, r := range replies {
		accepted := ""
		if r.ID == d.AcceptedReplyID {
			accepted = " (the answer the asker accepted)"
		}
		entry := fmt.Sprintf("\nReply %d of %d%s, by %s, %s:\n%s\n", i+1, n, accepted, r.AuthorName, knowledge.FormatTime(r.CreatedAt), r.Body)
		if b.Len()+len(entry) > maxFetchText {
			break
		}
		b.WriteString(entry)
		shown++
	}
	md := FetchMetadata{
		Source: SourceDiscussion, Kind: d.Kind, Product: d.Product, Environment: d.Environment,
		Status: string(d.Status), ReplyCount: &n, AuthorName: d.AuthorName, CreatedAt: knowledge.FormatTime(d.CreatedAt),
		AcceptedReplyID: d.AcceptedReplyID,
	}
	if !d.AnsweredAt.IsZero() {
		md.AnsweredAt = knowledge.FormatTime(d.AnsweredAt)
	}
	url := t.discussionURL(d.ID)
	if shown < n {
		fmt.Fprintf(&b, "\n(%d more replies do not fit here; read them all at %s)\n", n-shown, url)
		md.ShownReplies = &shown
	}
	return FetchOutput{ID: d.ID, Title: d.Title, Text: b.String(), URL: url, Metadata: md}
}

// followedDoc is a document followed from a peer, as fetch shows it: a
// record's body, or a thread's question and replies, with its origin; its
// URL is its page on the peer.
func followedDoc(d peers.Document) FetchOutput {
	o := &Origin{Peer: d.Peer, URL: d.URL}
	if r := d.Record; r != nil {
		return FetchOutput{ID: d.Key, Title: r.Title, Text: r.Body, URL: d.URL, Metadata: FetchMetadata{
			Source: SourceRecord, Kind: r.Kind, Product: r.Product, Environment: r.Environment, Tags: r.Tags, SourceURL: r.URL,
			UpdatedAt: knowledge.FormatTime(r.UpdatedAt), Origin: o}}
	}
	th := d.Thread
	var b strings.Builder
	fmt.Fprintf(&b, "Question by %s, %s:\n%s\n", th.AuthorName, knowledge.FormatTime(th.CreatedAt), th.Title)
	if th.Body != "" {
		fmt.Fprintf(&b, "\n%s\n", th.Body)
	}
	n := len(th.Replies)
	for i, r := range th.Replies {
		accepted := ""
		if r.ID == th.AcceptedReplyID {
			accepted = " (the answer the asker accepted)"
		}
		entry := fmt.Sprintf("\nReply %d of %d%s, by %s, %s:\n%s\n", i+1, n, accepted, r.AuthorName, knowledge.FormatTime(r.CreatedAt), r.Body)
		if b.Len()+len(entry) > maxFetchText {
			break
		}
		b.WriteString(entry)
	}
	md := FetchMetadata{Source: SourceDiscussion, Kind: th.Kind, Product: th.Product, Environment: th.Environment,
		Status: string(th.Status), ReplyCount: &n, AuthorName: th.AuthorName, CreatedAt: knowledge.FormatTime(th.CreatedAt),
		AcceptedReplyID: th.AcceptedReplyID, Origin: o}
	if !th.AnsweredAt.IsZero() {
		md.AnsweredAt = knowledge.FormatTime(th.AnsweredAt)
	}
	return FetchOutput{ID: d.Key, Title: th.Title, Text: b.String(), URL: d.URL, Metadata: md}
}
