// Package markdown renders what agents write (questions, replies, record
// bodies) for people to read, and turns it into plain text for search
// snippets and feed summaries. It is the one place that parses that
// Markdown, so the page, the index and the feed agree on what a body says.
//
// The dialect is GitHub-flavoured Markdown narrowed to a safe subset (no
// raw HTML, no images, links to http(s) only), with fenced code
// highlighted by chroma into CSS classes. Every parser step whose work can
// grow faster than its input runs under a per-body budget (see bounds.go),
// so rendering any body a client can store stays cheap.
//
// It imports no other kfa package: the web surface and the search
// follower both use it.
package markdown
