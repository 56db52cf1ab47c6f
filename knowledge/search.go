package knowledge

import "time"

// Search limits.
const (
	DefaultLimit   = 3
	MaxLimit       = 5
	MaxQueryLen    = 1000 // characters
	MaxRelatedDisc = 3
)

// Query is one search.
type Query struct {
	Text        string
	Limit       int // 1..MaxLimit
	Kind        string
	Product     string
	Environment string
	// Research asks for each hit's full body and related answered discussions.
	Research bool
}

// Hit is one ranked result.
type Hit struct {
	ID          string    `json:"id"`
	Title       string    `json:"title"`
	Kind        string    `json:"kind"`
	Product     string    `json:"product,omitempty"`
	Environment string    `json:"environment,omitempty"`
	Score       float64   `json:"score"`
	Snippet     string    `json:"snippet"`
	URL         string    `json:"url,omitempty"`
	UpdatedAt   time.Time `json:"updatedAt"`
	Body        string    `json:"body,omitempty"` // research only
}

// RelatedDiscussion is an answered public discussion that matches a
// research query.
type RelatedDiscussion struct {
	ID         string `json:"id"`
	Title      string `json:"title"`
	ReplyCount int    `json:"replyCount"`
	URL        string `json:"url"`
	// Snippet is the passage of the question or its replies that matched,
	// as plain text.
	Snippet string `json:"snippet,omitempty"`
}

// Result is the answer to a Query.
type Result struct {
	Hits        []Hit
	Discussions []RelatedDiscussion // research only
}
