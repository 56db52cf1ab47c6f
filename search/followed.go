package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/blevesearch/bleve/v2"

	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/knowledge"
	"github.com/kfa-project/kfa/peers"
	"github.com/kfa-project/kfa/trust"
)

// FollowedSource is what the index reads of the documents followed from
// peers (federation). Both stores provide it.
type FollowedSource interface {
	GetDocument(ctx context.Context, key string) (peers.Document, error)
	// ListDocuments lists up to limit documents with keys before before
	// ("" for the end), newest key first; next is "" on the last page.
	ListDocuments(ctx context.Context, before string, limit int) ([]peers.Document, string, error)
}

// Fields of followed documents: the peer's name (what a purge deletes
// by) and the document's page there.
const (
	fPeer   = "peer"
	fOrigin = "origin"
)

// sourceFollowed is the fSource of a followed record: a browse lists
// local records only.
const sourceFollowed = "peer"

// followedPage is how many followed documents one read asks for while
// building.
const followedPage = 200

// purgeRound bounds the ids one round of a peer's purge collects.
const purgeRound = 10_000

// A followed document is indexed like a local one of its source, under
// its key (peers.DocumentKey, which no local id can be): a record under
// the key, a discussion under discPrefix and the key. So a discussion
// followed ranks, snippets and answers research as a local one does,
// and a hit knows it is followed by its id.

// isFollowedID reports whether a hit's id (a document id without
// discPrefix) is a followed document's.
func isFollowedID(id string) bool { return strings.HasPrefix(id, peers.KeyPrefix) }

// withOrigin is doc (a recordDoc or a discussionDoc) as a followed
// document: its fields, and the peer's name and the document's page
// there. bleve reads a map as it reads a struct's fields.
func withOrigin(doc any, peer, origin string) (map[string]any, error) {
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	m[fPeer], m[fOrigin] = peer, origin
	return m, nil
}

// followedDoc is d as the index holds it, and its document id; ok is
// false for a document the index does not hold (hidden here, a
// placeholder, or holding nothing).
func (x *Index) followedDoc(d peers.Document) (string, any, bool, error) {
	if !d.Visible() {
		return "", nil, false, nil
	}
	switch {
	case d.Record != nil:
		// Votes and verifications are this server's, of its own
		// documents: a followed one has none here.
		doc := recordDocOf(d.Record, trust.Board{})
		doc.Source = sourceFollowed
		m, err := withOrigin(doc, d.Peer, d.URL)
		return d.Key, m, err == nil, err
	case d.Thread != nil:
		doc, err := x.threadDoc(d.Thread)
		if err != nil {
			return "", nil, false, err
		}
		m, err := withOrigin(doc, d.Peer, d.URL)
		return discussionDocID(d.Key), m, err == nil, err
	}
	return "", nil, false, nil
}

// threadDoc is a peer's thread as a discussion document: its replies in
// the order the feed gave them (the accepted one first), within the
// index's bounds.
func (x *Index) threadDoc(t *peers.Thread) (discussionDoc, error) {
	var body strings.Builder
	body.WriteString(x.md.Text(t.Body))
	doc := discussionDoc{
		Title: t.Title, Details: t.Body, Kind: t.Kind, Product: t.Product, Environment: t.Environment,
		Status: string(t.Status), Replies: strconv.Itoa(len(t.Replies)), Created: formatTime(t.CreatedAt),
		Answered: formatTime(t.AnsweredAt), Accepted: t.AcceptedReplyID,
	}
	thread := []threadReply{}
	size := 0
	for i, r := range t.Replies {
		if i >= maxIndexedReplies {
			break
		}
		if size += len(r.Body); size > maxAnswersLen {
			break
		}
		body.WriteString("\n\n")
		body.WriteString(x.md.Text(r.Body))
		thread = append(thread, threadReply{ID: r.ID, AuthorName: r.AuthorName, Body: r.Body, CreatedAt: formatTime(r.CreatedAt),
			Accepted: r.ID == t.AcceptedReplyID})
		if doc.Answer == "" {
			doc.Answer = x.md.Text(r.Body)
		}
	}
	doc.Body = body.String()
	tb, err := json.Marshal(thread)
	if err != nil {
		return discussionDoc{}, err
	}
	doc.Thread = string(tb)
	return doc, nil
}

// followedIn reports whether the index holds the followed document key
// (under either id).
func followedIn(idx bleve.Index, key string) bool {
	for _, id := range []string{key, discussionDocID(key)} {
		if doc, err := idx.Document(id); err == nil && doc != nil {
			return true
		}
	}
	return false
}

// indexFollowed reads the followed documents keys as they are now and
// puts them into b (or deletes those gone or hidden); it returns how many
// more the index holds after. The caller holds writeMu.
func (x *Index) indexFollowed(ctx context.Context, b *bleve.Batch, keys []string) (int, error) {
	if x.o.Followed == nil {
		return 0, nil
	}
	added := 0
	for _, key := range keys {
		d, err := x.o.Followed.GetDocument(ctx, key)
		if err != nil && !errors.Is(err, peers.ErrNoDocument) {
			return 0, fmt.Errorf("search: read followed document %s: %w", key, err)
		}
		was := followedIn(x.rec, key)
		id, doc, ok, derr := x.followedDoc(d)
		if derr != nil {
			return 0, derr
		}
		if !ok {
			if was {
				b.Delete(key)
				b.Delete(discussionDocID(key))
				added--
			}
			continue
		}
		if err := b.Index(id, doc); err != nil {
			return 0, fmt.Errorf("search: index followed document %s: %w", key, err)
		}
		if !was {
			added++
		}
	}
	return added, nil
}

// purgeFollowed deletes every document of the peers names from the index
// at once (a peer removed with --purge), and returns how many it
// deleted. The caller holds writeMu.
func (x *Index) purgeFollowed(ctx context.Context, names []string) (int, error) {
	n := 0
	for _, name := range names {
		for {
			q := bleve.NewTermQuery(name)
			q.SetField(fPeer)
			req := bleve.NewSearchRequestOptions(q, purgeRound, 0, false)
			res, err := x.rec.SearchInContext(ctx, req)
			if err != nil {
				return n, fmt.Errorf("search: find the documents of peer %s: %w", name, err)
			}
			if len(res.Hits) == 0 {
				break
			}
			b := x.rec.NewBatch()
			for _, h := range res.Hits {
				b.Delete(h.ID)
			}
			if err := x.rec.Batch(b); err != nil {
				return n, fmt.Errorf("search: purge the documents of peer %s: %w", name, err)
			}
			n += len(res.Hits)
		}
	}
	return n, nil
}

// followedEvents are the followed documents and the purged peers evs
// name.
func followedEvents(evs []changelog.Event) (keys idSet, purged []string) {
	for _, e := range evs {
		switch {
		case e.Kind == peers.EventDocument:
			keys.add(e.ID)
		case e.Kind == peers.EventPeerChanged && e.Ref == peers.RefPurged:
			purged = append(purged, e.ID)
		}
	}
	return keys, purged
}

// buildFollowed indexes every visible followed document into idx and
// returns how many it indexed.
func (x *Index) buildFollowed(ctx context.Context, idx bleve.Index) (int, error) {
	if x.o.Followed == nil {
		return 0, nil
	}
	total, before := 0, ""
	for {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		docs, next, err := x.o.Followed.ListDocuments(ctx, before, followedPage)
		if err != nil {
			return 0, fmt.Errorf("search: list followed documents: %w", err)
		}
		b := idx.NewBatch()
		for _, d := range docs {
			id, doc, ok, err := x.followedDoc(d)
			if err != nil {
				return 0, err
			}
			if !ok {
				continue
			}
			if err := b.Index(id, doc); err != nil {
				return 0, fmt.Errorf("search: index followed document %s: %w", d.Key, err)
			}
			total++
		}
		if b.Size() > 0 {
			if err := idx.Batch(b); err != nil {
				return 0, fmt.Errorf("search: index followed documents: %w", err)
			}
		}
		if next == "" {
			return total, nil
		}
		before = next
	}
}

// originOf is the origin of a hit of the stored fields f, nil for a
// local one.
func originOf(id string, f map[string]string) *knowledge.Origin {
	if !isFollowedID(id) {
		return nil
	}
	return &knowledge.Origin{Peer: f[fPeer], URL: f[fOrigin]}
}
