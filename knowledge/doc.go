// Package knowledge owns knowledge records: their shape and validation, the
// import of JSON Lines files, and the query and result types of search.
//
// Records are curated by the operator and searched by everyone. A record's
// URL is stored as text and never fetched; its body is never executed.
// The package imports neither net/http nor bbolt.
package knowledge
