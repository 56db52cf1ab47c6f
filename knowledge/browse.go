package knowledge

import "time"

// Browse page sizes.
const (
	DefaultBrowseSize = 20
	MaxBrowseSize     = 100
)

// BrowseQuery lists knowledge records, newest first, narrowed to a kind
// and a product (each optional, matched ignoring case).
type BrowseQuery struct {
	Kind    string
	Product string
	// After is the cursor of the next page: BrowsePage.Next of the page
	// before ("" for the first).
	After string
	Limit int // 1..MaxBrowseSize
}

// BrowsePage is one page of records, with what the records hold to
// narrow them by.
type BrowsePage struct {
	Records []BrowseItem
	// Next is the cursor of the next page; "" on the last.
	Next string
	// Total counts the records the query matches.
	Total int
	// Kinds and Products are the values the records have, most common
	// first, with how many records have each (of every record, whatever
	// the query narrows to).
	Kinds    []Facet
	Products []Facet
}

// BrowseItem is one record of a browse page.
type BrowseItem struct {
	ID          string
	Title       string
	Kind        string
	Product     string
	Environment string
	UpdatedAt   time.Time
	// Snippet is the start of the body, as plain text.
	Snippet string
}

// Facet is one value of a field and how many records have it.
type Facet struct {
	Value string
	Count int
}
