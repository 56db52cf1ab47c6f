// Package search is kfa's full-text index over knowledge records and
// answered public discussions, built on bleve (BM25 scoring, an English
// analyzer with stemming, keyword fields for the kind, product and
// environment filters).
//
// The index is derived data in <data>/index: the bbolt file stays the only
// source of truth. The records index remembers the last change-feed
// sequence it applied, catches up from the feed when it opens and while it
// runs (Start/Stop), and is rebuilt from the records whenever it is
// missing, corrupt, built by another mapping version, or no longer matches
// the feed (a restored backup). Answered discussions are indexed beside it
// (see DiscussionWatch for how they are kept in step).
//
// Queries are built programmatically from analysed terms: user text never
// reaches bleve's query-string syntax. Search never writes to the store.
//
// Index implements service.Searcher. The package serves nothing: it does
// not import net/http (bleve brings it in only through expvar).
package search
