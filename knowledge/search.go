package knowledge

import (
	"errors"
	"time"
)

// ErrSynonyms means the operator's synonyms file cannot be used (a line
// is wrong); the error that wraps it names the file and the line. The
// search index keeps the synonyms it has.
var ErrSynonyms = errors.New("the synonyms file cannot be used")

// Search limits.
const (
	DefaultLimit = 3
	MaxLimit     = 5
	MaxQueryLen  = 1000 // characters
)

// Query is one search.
type Query struct {
	Text        string
	Limit       int // 1..MaxLimit
	Kind        string
	Product     string
	Environment string
	// Research asks for each hit's full text: a record's body, a
	// discussion's question details and replies.
	Research bool
	// MinScore, MinTrust and MinReputation, when set, keep only the hits
	// whose vote score, trust and author's reputation reach them (a
	// record has no author: MinReputation keeps it). See docs/search.md.
	MinScore      *int
	MinTrust      *float64
	MinReputation *int64
	// Now is when the query is answered: the time trust is read at.
	Now time.Time
}

// Filtered reports whether q has a trust filter.
func (q Query) Filtered() bool {
	return q.MinScore != nil || q.MinTrust != nil || q.MinReputation != nil
}

// Verifications are a hit's standing reports.
type Verifications struct {
	Worked       int       `json:"worked"`
	Failed       int       `json:"failed"`
	LastWorkedAt time.Time `json:"-"`
}

// Author is who wrote a hit's answer (or asked an open discussion), with
// the reputation others gave them.
type Author struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	Reputation int64  `json:"reputation"`
}

// Signals are what others said of an answer: its vote score (up votes
// minus down votes), its trust (verifications first, then votes, recent
// ones weighing more) and its verifications.
type Signals struct {
	Votes         int
	Trust         float64
	Verifications Verifications
}

// Source says what a search result is.
type Source string

// Sources of search results.
const (
	SourceRecord     Source = "record"
	SourceDiscussion Source = "discussion"
)

// Statuses of discussion results (as discussions.Status, which this
// package does not import).
const (
	StatusOpen     = "open"
	StatusAnswered = "answered"
)

// Hit is one ranked result: a knowledge record, or a public discussion
// (answered, or open and asking the same question).
type Hit struct {
	Source      Source
	ID          string
	Title       string // a record's title; a discussion's question
	Kind        string
	Product     string
	Environment string
	Score       float64
	// Snippet is plain text: the passage of a record that matched; the
	// start of an answered discussion's accepted reply, or else of its
	// first qualifying reply; the
	// passage of an open discussion's question that matched.
	Snippet string
	// PageURL is the result's page in kfa's web view.
	PageURL string
	// URL is a record's own source link, stored as text, never fetched.
	URL string
	// UpdatedAt is when a record last changed.
	UpdatedAt time.Time
	// Body is, for research, a record's body or a discussion's details.
	Body string

	// Discussion results only.
	Status     string // StatusOpen or StatusAnswered
	ReplyCount int
	CreatedAt  time.Time
	AnsweredAt time.Time // zero while open
	// AcceptedReplyID is the reply the asker accepted ("" for none): the
	// answer the snippet shows.
	AcceptedReplyID string
	// Replies are, for research, the discussion's replies, oldest first
	// (the ones the index keeps: see docs/search.md).
	Replies []HitReply

	// Signals are a record's, or a discussion's answer's (the reply the
	// snippet shows, AnswerReplyID): a hit's Score is its relevance.
	Signals
	// Author wrote the answer (for an open discussion: asked the
	// question); nil for a record.
	Author *Author
	// AnswerReplyID is the reply an answered discussion's snippet shows:
	// the accepted one, else the most trusted, else the first answer.
	AnswerReplyID string

	// Origin, for a document followed from a peer, names the peer and
	// the document's page there (PageURL is that page too); nil for a
	// local one.
	Origin *Origin
}

// Origin is where a followed document comes from: this server's name of
// the peer, and the document's URL there.
type Origin struct {
	Peer string `json:"peer"`
	URL  string `json:"url"`
}

// HitReply is one reply of a discussion result.
type HitReply struct {
	ID         string
	AuthorName string
	Body       string
	CreatedAt  time.Time
	// Accepted marks the reply the asker accepted.
	Accepted bool
	Signals
	Author *Author
}

// Correction is a misspelt query term and the indexed term searched
// instead.
type Correction struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// Result is the answer to a Query: its hits, best first.
type Result struct {
	Hits []Hit
	// Corrections lists the query terms that matched nothing and were
	// searched as a close spelling instead (only when the query as typed
	// found nothing).
	Corrections []Correction
	// CorrectedQuery is, when Corrections is set, the query that was
	// answered: the text with each corrected word replaced ("renew
	// certbot" for "renew cerbot"); "" otherwise.
	CorrectedQuery string
}

// Counts returns how many hits are records, answered discussions and open
// discussions.
func (r Result) Counts() (records, answered, open int) {
	for _, h := range r.Hits {
		switch {
		case h.Source == SourceRecord:
			records++
		case h.Status == StatusAnswered:
			answered++
		default:
			open++
		}
	}
	return records, answered, open
}
