package mcpserver

// The four tools, by name. There are exactly these.
const (
	ToolSearch     = "search"
	ToolFetch      = "fetch"
	ToolGetChanges = "get_changes"
	ToolWhoami     = "whoami"
)

// ToolNames lists the four tools.
var ToolNames = []string{ToolSearch, ToolFetch, ToolGetChanges, ToolWhoami}

// Sources of a search result or a fetched document.
const (
	SourceRecord     = "record"
	SourceDiscussion = "discussion"
)

// SearchInput is the arguments of search.
type SearchInput struct {
	Query       string `json:"query" jsonschema:"What to look for: an error message, a question or keywords, in plain words."`
	Limit       int    `json:"limit,omitempty" jsonschema:"How many results to return, 1 to 5 (default 3)."`
	Kind        string `json:"kind,omitempty" jsonschema:"Only records of this kind, e.g. fix, howto, reference."`
	Product     string `json:"product,omitempty" jsonschema:"Only records about this product, e.g. bbolt, kfa."`
	Environment string `json:"environment,omitempty" jsonschema:"Only records for this environment, e.g. linux, docker."`
	// The trust filters keep only the hits that reach them.
	MinScore      *int     `json:"minScore,omitempty" jsonschema:"Only answers whose vote score (up votes minus down votes) is at least this."`
	MinTrust      *float64 `json:"minTrust,omitempty" jsonschema:"Only answers whose trust (verifications first, then votes, recent ones weighing more) is at least this."`
	MinReputation *int64   `json:"minReputation,omitempty" jsonschema:"Only answers whose author's reputation is at least this; records, which have no author, pass."`
}

// SearchOutput is the answer of search. An empty list is an honest miss:
// nothing in the knowledge base matches.
type SearchOutput struct {
	Results []SearchResult `json:"results" jsonschema:"The hits, best first; empty when nothing matches."`
	// CorrectedQuery is set when misspelt words were read as close
	// spellings: the query the results answer.
	CorrectedQuery string `json:"correctedQuery,omitempty" jsonschema:"Set when nothing matched a misspelt word as typed: the query the results answer, with that word read as the closest indexed spelling."`
}

// SearchResult is one hit: a knowledge record, or a public discussion.
type SearchResult struct {
	ID      string  `json:"id" jsonschema:"The id to pass to fetch for the full text."`
	Title   string  `json:"title"`
	URL     string  `json:"url" jsonschema:"The kfa page of this result: the link to cite."`
	Snippet string  `json:"snippet" jsonschema:"The passage that matched, as plain text."`
	Source  string  `json:"source" jsonschema:"record or discussion."`
	Score   float64 `json:"score" jsonschema:"Relevance; higher is better, comparable within one answer only."`

	Kind        string `json:"kind,omitempty"`
	Product     string `json:"product,omitempty"`
	Environment string `json:"environment,omitempty"`
	// SourceURL is a record's own link (stored as text, never fetched by kfa).
	SourceURL string `json:"sourceUrl,omitempty" jsonschema:"A record's own source link, as the operator imported it."`
	UpdatedAt string `json:"updatedAt,omitempty" jsonschema:"When a record last changed (RFC 3339, UTC)."`

	// Discussion results only.
	Status     string `json:"status,omitempty" jsonschema:"A discussion's status: open or answered."`
	ReplyCount *int   `json:"replyCount,omitempty" jsonschema:"How many replies a discussion has."`
	CreatedAt  string `json:"createdAt,omitempty" jsonschema:"When a discussion was asked (RFC 3339, UTC)."`
	AnsweredAt string `json:"answeredAt,omitempty" jsonschema:"When an answered discussion's earliest visible qualifying reply came (RFC 3339, UTC)."`
	// AcceptedReplyID is the reply the asker accepted: the answer the
	// snippet shows.
	AcceptedReplyID string `json:"acceptedReplyId,omitempty" jsonschema:"The reply the discussion's asker accepted as the answer; the snippet shows it."`
	// AnswerReplyID is the reply the snippet shows.
	AnswerReplyID string `json:"answerReplyId,omitempty" jsonschema:"The reply an answered discussion's snippet shows: the accepted one, else the most trusted answer."`

	// What others said of the answer (a record, or a discussion's answer).
	Votes         int                 `json:"votes" jsonschema:"The answer's vote score: up votes minus down votes."`
	Trust         float64             `json:"trust" jsonschema:"The answer's trust: verifications first, then votes, recent ones weighing more."`
	Verifications SearchVerifications `json:"verifications" jsonschema:"How many agents reported that the answer worked, or failed."`
	Author        *SearchAuthor       `json:"author,omitempty" jsonschema:"Who wrote a discussion's answer (who asked an open one), with their reputation."`

	// Origin names the peer a followed document comes from (federation).
	Origin *Origin `json:"origin,omitempty" jsonschema:"For a document followed from another kfa server (a peer): the peer's name here and the document's URL there. A local result has none."`
}

// SearchVerifications are a result's standing reports.
type SearchVerifications struct {
	Worked       int    `json:"worked"`
	Failed       int    `json:"failed"`
	LastWorkedAt string `json:"lastWorkedAt,omitempty" jsonschema:"When an agent last reported that the answer worked (RFC 3339, UTC)."`
}

// SearchAuthor is who wrote a result's answer.
type SearchAuthor struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	Reputation int64  `json:"reputation"`
}

// Origin is where a followed document comes from.
type Origin struct {
	Peer string `json:"peer" jsonschema:"This server's name for the peer."`
	URL  string `json:"url" jsonschema:"The document's page on the peer."`
}

// FetchInput is the arguments of fetch.
type FetchInput struct {
	ID string `json:"id" jsonschema:"The id of a search result: a record id or a discussion id."`
}

// FetchOutput is one whole document: a record's body, or a discussion's
// question and its replies.
type FetchOutput struct {
	ID       string        `json:"id"`
	Title    string        `json:"title"`
	Text     string        `json:"text" jsonschema:"The full text: a record's body, or a discussion's question followed by its replies."`
	URL      string        `json:"url" jsonschema:"The kfa page of this document: the link to cite."`
	Metadata FetchMetadata `json:"metadata"`
}

// FetchMetadata describes a fetched document.
type FetchMetadata struct {
	Source      string   `json:"source" jsonschema:"record or discussion."`
	Kind        string   `json:"kind,omitempty"`
	Product     string   `json:"product,omitempty"`
	Environment string   `json:"environment,omitempty"`
	Tags        []string `json:"tags,omitempty"`
	SourceURL   string   `json:"sourceUrl,omitempty" jsonschema:"A record's own source link, as the operator imported it (never fetched by kfa)."`
	UpdatedAt   string   `json:"updatedAt,omitempty"`

	Status     string `json:"status,omitempty"`
	ReplyCount *int   `json:"replyCount,omitempty"`
	// ShownReplies is how many replies Text holds when it could not hold
	// them all.
	ShownReplies *int   `json:"shownReplies,omitempty" jsonschema:"How many of the replies the text holds, when it could not hold them all."`
	AuthorName   string `json:"authorName,omitempty"`
	CreatedAt    string `json:"createdAt,omitempty"`
	AnsweredAt   string `json:"answeredAt,omitempty"`
	// AcceptedReplyID is the reply the asker accepted as the answer.
	AcceptedReplyID string `json:"acceptedReplyId,omitempty" jsonschema:"The reply the discussion's asker accepted as the answer."`

	// Origin names the peer a followed document comes from (federation).
	Origin *Origin `json:"origin,omitempty" jsonschema:"For a document followed from another kfa server (a peer): the peer's name here and the document's URL there."`
}

// ChangesInput is the arguments of get_changes.
type ChangesInput struct {
	Cursor string `json:"cursor,omitempty" jsonschema:"Where to resume: a nextCursor or a change's cursor from an earlier answer; empty starts at the beginning."`
	Limit  int    `json:"limit,omitempty" jsonschema:"How many changes to return, 1 to 500 (default 100)."`
}

// ChangesOutput is one page of the records' change feed, oldest first.
type ChangesOutput struct {
	Changes    []Change `json:"changes"`
	NextCursor string   `json:"nextCursor" jsonschema:"Resumes right after the last change returned (where this call started, when none was)."`
	HasMore    bool     `json:"hasMore" jsonschema:"True when more changes follow nextCursor already."`
}

// Change is one entry of the change feed: a record written or deleted.
type Change struct {
	ID        string `json:"id" jsonschema:"The record id."`
	Op        string `json:"op" jsonschema:"upsert (added or changed: fetch it) or delete."`
	UpdatedAt string `json:"updatedAt" jsonschema:"The record's updatedAt for an upsert, the time of a delete (RFC 3339, UTC)."`
	Cursor    string `json:"cursor" jsonschema:"Resumes right after this change."`
}

// WhoamiInput is the arguments of whoami: none.
type WhoamiInput struct{}

// WhoamiOutput tells who the caller's bearer token belongs to.
type WhoamiOutput struct {
	Authenticated bool     `json:"authenticated"`
	AgentID       string   `json:"agentId,omitempty"`
	Name          string   `json:"name,omitempty"`
	Scopes        []string `json:"scopes,omitempty"`
	// ResourceMetadata, for an anonymous caller of a server that accepts
	// an OAuth provider's tokens, is the MCP endpoint's protected resource
	// metadata (RFC 9728): where a client that wants an identity finds
	// the provider.
	ResourceMetadata string `json:"resourceMetadata,omitempty"`
}
