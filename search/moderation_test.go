package search

import (
	"context"
	"strings"
	"testing"

	"github.com/kfa-project/kfa/knowledge"
	"github.com/kfa-project/kfa/moderation"
)

// TestAcceptedAndHidden: of two discussions that ask and answer alike,
// the one whose asker accepted a reply ranks first and shows that reply;
// a hidden discussion or reply leaves the index with the event that hid
// it, and comes back when shown.
func TestAcceptedAndHidden(t *testing.T) {
	ctx := context.Background()
	f := setup(t, "")
	c := newCommunity(t, f)
	mod := moderation.NewService(f.db, moderation.Policy{}, now)
	op := moderation.Actor{Kind: moderation.ActorOperator, Name: "test"}
	const (
		question = "How do I rotate the quokka signing keys?"
		first    = "Restart the quokka daemon first."
		second   = "Run quokka rotate with the signing key flag."
	)
	var ids []string
	for range 2 {
		id := c.ask(t, question, "")
		c.reply(t, c.other, id, first)
		c.reply(t, c.other, id, second)
		ids = append(ids, id)
	}
	plain, accepted := ids[0], ids[1]
	_, page, err := c.discs.Get(ctx, accepted, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.discs.Accept(ctx, c.asker.ID, accepted, page.Replies[1].ID); err != nil {
		t.Fatal(err)
	}
	find := func(what string) map[string]knowledge.Hit {
		t.Helper()
		if err := f.idx.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		res := searchQ(t, f.idx, knowledge.Query{Text: "rotate quokka signing keys", Limit: 5})
		out := map[string]knowledge.Hit{}
		var order []string
		for _, h := range res.Hits {
			out[h.ID] = h
			order = append(order, h.ID)
		}
		t.Logf("%s: %v", what, order)
		return out
	}
	hits := find("after the accept")
	res := searchQ(t, f.idx, knowledge.Query{Text: "rotate quokka signing keys", Limit: 5})
	if len(res.Hits) != 2 || res.Hits[0].ID != accepted || res.Hits[0].Score <= res.Hits[1].Score {
		t.Fatalf("hits %+v: want the discussion with an accepted reply first", res.Hits)
	}
	if h := hits[accepted]; h.AcceptedReplyID != page.Replies[1].ID || !strings.HasPrefix(h.Snippet, "Run quokka rotate") {
		t.Fatalf("the accepted discussion's hit: %+v", h)
	}
	if h := hits[plain]; h.AcceptedReplyID != "" || !strings.HasPrefix(h.Snippet, "Restart the quokka") {
		t.Fatalf("the other discussion's hit: %+v", h)
	}

	if _, err := mod.Hide(ctx, op, moderation.Target{ID: plain}, "spam"); err != nil {
		t.Fatal(err)
	}
	if hits := find("after hiding a discussion"); len(hits) != 1 {
		t.Fatalf("the hidden discussion is still found: %+v", hits)
	}
	if _, err := mod.Hide(ctx, op, moderation.Target{ID: page.Replies[1].ID}, "wrong"); err != nil {
		t.Fatal(err)
	}
	hits = find("after hiding the accepted reply")
	if h := hits[accepted]; h.AcceptedReplyID != "" || !strings.HasPrefix(h.Snippet, "Restart the quokka") || h.ReplyCount != 1 {
		t.Fatalf("after hiding the accepted reply: %+v", h)
	}
	res = searchQ(t, f.idx, knowledge.Query{Text: "rotate quokka signing keys", Limit: 5, Research: true})
	for _, r := range res.Hits[0].Replies {
		if r.Body == second {
			t.Fatalf("research shows the hidden reply: %+v", res.Hits[0].Replies)
		}
	}
	for _, id := range []string{plain, page.Replies[1].ID} {
		if _, err := mod.Unhide(ctx, op, moderation.Target{ID: id}, "reviewed"); err != nil {
			t.Fatal(err)
		}
	}
	hits = find("after unhiding both")
	if len(hits) != 2 || hits[accepted].AcceptedReplyID != page.Replies[1].ID || hits[accepted].ReplyCount != 2 {
		t.Fatalf("after unhiding: %+v", hits)
	}
}
