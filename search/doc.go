// Package search is kfa's full-text index over knowledge records and
// public discussions, built on bleve (BM25 scoring, an English analyser
// with stemming and the operator's synonyms, keyword fields for the kind,
// product and environment filters). Records and discussions share one
// index, so one query ranks them by the same term statistics.
//
// The index is derived data in <data>/index: the bbolt file stays the only
// source of truth. The index remembers the last change-feed sequence it
// applied, catches up from the feed when it opens and while it runs
// (Start/Stop), and is rebuilt from the store whenever it is missing,
// corrupt, built by another mapping version or with other synonyms, or no
// longer matches the feed (a restored backup, a feed trimmed past it).
// Discussions are indexed when asked and re-indexed when they get replies
// (see DiscussionWatch for how they are kept in step).
//
// Search decides what is an answer (relevance.go): the honest miss for a
// query nothing answers, partial matches once something does, open
// discussions only when asked closely. Queries are built programmatically
// from analysed terms: user text never reaches bleve's query-string
// syntax. Search never writes to the store.
//
// Index implements service.Searcher. The package serves nothing: it does
// not import net/http (bleve brings it in only through expvar).
package search
