package search

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/highlight"
	htmlhl "github.com/blevesearch/bleve/v2/search/highlight/highlighter/html"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/kfa-project/kfa/knowledge"
)

// stored is a document's stored fields.
type stored struct {
	doc    index.Document
	fields map[string]string
}

func load(idx bleve.Index, id string) (stored, error) {
	doc, err := idx.Document(id)
	if err != nil {
		return stored{}, fmt.Errorf("search: load document %s: %w", id, err)
	}
	s := stored{doc: doc, fields: map[string]string{}}
	if doc == nil {
		return s, nil
	}
	doc.VisitFields(func(f index.Field) {
		if _, seen := s.fields[f.Name()]; !seen { // tags repeat; only single values are read
			s.fields[f.Name()] = string(f.Value())
		}
	})
	return s, nil
}

// snippet is the best passage of the first field that matched, as plain
// text, or the start of the fallback field.
func (s stored) snippet(dm *search.DocumentMatch, fields []string, fallback string) string {
	hl, err := bleve.Config.Cache.HighlighterNamed(htmlhl.Name)
	if err == nil && s.doc != nil {
		for _, f := range fields {
			if len(dm.Locations[f]) == 0 {
				continue
			}
			if frag := bestFragment(hl, dm, s.doc, f); frag != "" {
				return plainSnippet(frag)
			}
		}
	}
	return leadSnippet(s.fields[fallback])
}

func bestFragment(hl highlight.Highlighter, dm *search.DocumentMatch, doc index.Document, f string) string {
	frags := hl.BestFragmentsInField(dm, doc, f, 1)
	if len(frags) == 0 {
		return ""
	}
	return frags[0]
}

// hitOf turns a candidate into a result, its trust read at now. The
// caller holds mu for reading.
func (x *Index) hitOf(c candidate, research bool, now time.Time) (knowledge.Hit, error) {
	if c.disc {
		return x.discussionHit(c, research, now)
	}
	s := c.doc
	f := s.fields
	h := knowledge.Hit{
		Source: knowledge.SourceRecord, ID: c.dm.ID, Title: f[fTitle],
		Kind: f[fKind], Product: f[fProduct], Environment: f[fEnv], Score: c.relevance(),
		Snippet: s.snippet(c.dm, []string{fBody}, fBody),
		PageURL: x.o.PublicURL + "/records/" + url.PathEscape(c.dm.ID), URL: f[fURL],
		Signals: c.sig.hitSignals(now),
		Origin:  originOf(c.dm.ID, f),
	}
	if h.Origin != nil {
		h.PageURL = h.Origin.URL
	}
	h.UpdatedAt, _ = time.Parse(time.RFC3339Nano, f[fUpdated])
	if research {
		h.Body = f[fDetails]
	}
	return h, nil
}

// threadReply is one reply as the index stores it for research.
type threadReply struct {
	ID         string     `json:"id"`
	AuthorID   string     `json:"authorId,omitempty"`
	AuthorName string     `json:"authorName"`
	Body       string     `json:"body"`
	CreatedAt  string     `json:"createdAt"`
	Accepted   bool       `json:"accepted,omitempty"`
	Signals    signalsDoc `json:"signals"`
}

// author is agent id, named name, with the reputation the index keeps
// (nil for none). The caller holds mu for reading.
func (x *Index) author(id, name string) *knowledge.Author {
	if id == "" {
		return nil
	}
	return &knowledge.Author{ID: id, Name: name, Reputation: x.reputation(id)}
}

func (x *Index) discussionHit(c candidate, research bool, now time.Time) (knowledge.Hit, error) {
	f := c.doc.fields
	id := strings.TrimPrefix(c.dm.ID, discPrefix)
	h := knowledge.Hit{
		Source: knowledge.SourceDiscussion, ID: id, Title: f[fTitle],
		Kind: f[fKind], Product: f[fProduct], Environment: f[fEnv], Score: c.relevance(),
		PageURL: x.o.PublicURL + "/discussions/" + url.PathEscape(id),
		Status:  knowledge.StatusOpen, Origin: originOf(id, f),
		Signals: c.sig.hitSignals(now), Author: x.author(c.sig.Author, c.sig.AuthorName), AnswerReplyID: c.sig.Reply,
	}
	if h.Origin != nil {
		h.PageURL = h.Origin.URL
	}
	h.ReplyCount, _ = strconv.Atoi(f[fReplies])
	h.AcceptedReplyID = f[fAccepted]
	h.CreatedAt, _ = time.Parse(time.RFC3339Nano, f[fCreated])
	if !c.open {
		h.Status = knowledge.StatusAnswered
		h.AnsweredAt, _ = time.Parse(time.RFC3339Nano, f[fAnswered])
	}
	switch {
	case !c.open && f[fAnswer] != "":
		h.Snippet = leadSnippet(f[fAnswer])
	default:
		h.Snippet = c.doc.snippet(c.dm, []string{fBody}, fBody)
	}
	if h.Snippet == "" {
		h.Snippet = leadSnippet(h.Title)
	}
	if research {
		h.Body = f[fDetails]
		var thread []threadReply
		if err := json.Unmarshal([]byte(f[fThread]), &thread); err != nil && f[fThread] != "" {
			return knowledge.Hit{}, fmt.Errorf("search: replies of discussion %s: %w", id, err)
		}
		h.Replies = make([]knowledge.HitReply, len(thread))
		for i, r := range thread {
			h.Replies[i] = knowledge.HitReply{ID: r.ID, AuthorName: r.AuthorName, Body: r.Body, Accepted: r.Accepted,
				Signals: r.Signals.hitSignals(now), Author: x.author(r.AuthorID, r.AuthorName)}
			h.Replies[i].CreatedAt, _ = time.Parse(time.RFC3339Nano, r.CreatedAt)
		}
	}
	return h, nil
}
