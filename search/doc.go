// Package search is kfa's full-text index over knowledge records and
// public discussions, built on bleve (BM25 scoring, an English analyser
// with stemming and the operator's synonyms, keyword fields for the kind,
// product and environment filters). Records and discussions share one
// index, so one query ranks them by the same term statistics.
//
// The index is derived data in <data>/index: the store stays the only
// source of truth. The index follows the change log (package changelog):
// it remembers the last event it applied, catches up from the log when it
// opens and while it runs (Start/Stop), in every process, on either
// store, and is rebuilt from the store whenever it is missing, corrupt,
// built by another mapping version or with other synonyms, or can no
// longer follow the log (another database, a restored backup, a log
// trimmed past it), saying why. Records and discussions are indexed again
// when the log names them (see follow.go).
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
