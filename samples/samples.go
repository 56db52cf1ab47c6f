// Package samples holds the sample knowledge records that `kfa serve
// --seed-samples` (and so `make run`) imports into an empty database, so
// that a new user gets real answers at once. relevance.json, beside them,
// is the relevance table the search tests check them with.
package samples

import (
	_ "embed"
	"io"
	"strings"
)

//go:embed records.jsonl
var records string // a string, so no caller can change it

// Records returns the sample records as JSON Lines in the import format.
func Records() io.Reader { return strings.NewReader(records) }
