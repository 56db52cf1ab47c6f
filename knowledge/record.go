package knowledge

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/kfa-project/kfa/input"
)

// Limits on a record's fields, in characters unless stated otherwise.
const (
	MaxIDLen      = 128 // bytes; ids are ASCII
	MaxKindLen    = 64
	MaxFilterLen  = 64 // product and environment
	MaxTitleLen   = 300
	MaxBodyLen    = 50_000
	MaxTags       = 20
	MaxTagLen     = 64
	MaxURLLen     = 2048    // bytes
	MaxLineBytes  = 1 << 20 // one import line, in bytes
	timeLayoutOut = "2006-01-02T15:04:05.000Z"
)

// Sentinel errors.
var (
	// ErrNotFound means no record has the id.
	ErrNotFound = errors.New("record not found")
)

// Record is one knowledge entry, as imported (one JSON line) and as stored.
// URL is text: kfa never fetches it. UpdatedAt is UTC with millisecond
// precision; zero means "not given" on import.
type Record struct {
	ID          string    `json:"id"`
	Kind        string    `json:"kind"`
	Product     string    `json:"product,omitempty"`
	Environment string    `json:"environment,omitempty"`
	Title       string    `json:"title"`
	Body        string    `json:"body"`
	Tags        []string  `json:"tags,omitempty"`
	URL         string    `json:"url,omitempty"`
	UpdatedAt   time.Time `json:"updatedAt,omitzero"`
}

// Size is r's text in bytes: what its storage and its indexing cost grow
// with. Imports and the search index bound their batches by it.
func (r *Record) Size() int {
	n := len(r.ID) + len(r.Kind) + len(r.Product) + len(r.Environment) + len(r.Title) + len(r.Body) + len(r.URL)
	for _, t := range r.Tags {
		n += len(t)
	}
	return n
}

// FormatTime writes t as kfa writes every timestamp: RFC 3339, UTC,
// milliseconds, "Z".
func FormatTime(t time.Time) string { return t.UTC().Format(timeLayoutOut) }

// Validate checks every field of r and names the first bad one.
func (r *Record) Validate() error {
	if err := ValidateID(r.ID); err != nil {
		return err
	}
	if err := word("kind", r.Kind, true, MaxKindLen); err != nil {
		return err
	}
	if err := word("product", r.Product, false, MaxFilterLen); err != nil {
		return err
	}
	if err := word("environment", r.Environment, false, MaxFilterLen); err != nil {
		return err
	}
	if err := input.Text("title", r.Title, 1, MaxTitleLen, false); err != nil {
		return err
	}
	if err := body(r.Body); err != nil {
		return err
	}
	if len(r.Tags) > MaxTags {
		return input.Errorf("tags", "%d tags, at most %d", len(r.Tags), MaxTags)
	}
	for i, t := range r.Tags {
		if err := input.Text(fmt.Sprintf("tags[%d]", i), t, 1, MaxTagLen, false); err != nil {
			return err
		}
	}
	if r.URL != "" {
		if err := ValidateURL(r.URL); err != nil {
			return err
		}
	}
	return nil
}

// ValidateID checks a record id: 1 to MaxIDLen bytes of ASCII letters,
// digits, '.', '_' and '-', starting with a letter or digit. The set keeps
// ids safe in URL paths, file names and terminal output.
func ValidateID(id string) error {
	if id == "" {
		return input.Errorf("id", "is required")
	}
	if len(id) > MaxIDLen {
		return input.Errorf("id", "%d bytes, at most %d", len(id), MaxIDLen)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if i == 0 && !alnum {
			return input.Errorf("id", "must start with a letter or digit")
		}
		if !alnum && c != '.' && c != '_' && c != '-' {
			return input.Errorf("id", "%q is not allowed; use letters, digits, '.', '_' and '-'", rune(c))
		}
	}
	return nil
}

// ValidateURL checks a record's source URL: an absolute http or https URL
// with a host and no credentials. It is stored as text and never fetched.
func ValidateURL(s string) error {
	if len(s) > MaxURLLen {
		return input.Errorf("url", "%d bytes, at most %d", len(s), MaxURLLen)
	}
	if !utf8.ValidString(s) {
		return input.Errorf("url", "not valid UTF-8")
	}
	for _, r := range s {
		if unicode.IsControl(r) || unicode.IsSpace(r) {
			return input.Errorf("url", "must not contain spaces or control characters")
		}
	}
	u, err := url.Parse(s)
	if err != nil {
		return input.Errorf("url", "not a URL: %v", errors.Unwrap(err))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return input.Errorf("url", "must be an absolute http or https URL")
	}
	if u.Host == "" {
		return input.Errorf("url", "has no host")
	}
	if u.User != nil {
		return input.Errorf("url", "must not carry a user name or password")
	}
	return nil
}

// word checks a one-line label such as kind or product.
func word(field, v string, required bool, max int) error {
	if v == "" && !required {
		return nil
	}
	if v == "" {
		return input.Errorf(field, "is required")
	}
	return input.Text(field, v, 1, max, false)
}

// body checks a record body: free text where newline and tab are the only
// control characters allowed.
func body(s string) error {
	if err := input.Text("body", s, 1, MaxBodyLen, true); err != nil {
		return err
	}
	for _, r := range s {
		if r == '\r' {
			return input.Errorf("body", "contains a carriage return (U+000D); use \\n line endings")
		}
	}
	return nil
}

// SameContent reports whether r and o hold the same record, ignoring
// UpdatedAt.
func (r *Record) SameContent(o *Record) bool {
	return r.ID == o.ID && r.Kind == o.Kind && r.Product == o.Product && r.Environment == o.Environment &&
		r.Title == o.Title && r.Body == o.Body && r.URL == o.URL && slices.Equal(r.Tags, o.Tags)
}

// Outcome is what an upsert did to one record.
type Outcome int

// Upsert outcomes.
const (
	Added     Outcome = iota + 1 // no record had the id
	Updated                      // the content or the given updatedAt changed
	Unchanged                    // identical content: nothing written, no feed entry
)

func (o Outcome) String() string {
	switch o {
	case Added:
		return "added"
	case Updated:
		return "updated"
	case Unchanged:
		return "unchanged"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// Merge decides what upserting in over existing (nil when there is none)
// does, and returns the record to store. An import line without updatedAt
// leaves an identical record unchanged, and stamps a new or changed one
// with now; a given updatedAt is kept as is.
func Merge(existing *Record, in Record, now time.Time) (Record, Outcome) {
	given := !in.UpdatedAt.IsZero()
	if existing != nil && in.SameContent(existing) && (!given || in.UpdatedAt.Equal(existing.UpdatedAt)) {
		return *existing, Unchanged
	}
	if !given {
		in.UpdatedAt = now.UTC().Truncate(time.Millisecond)
	}
	if existing == nil {
		return in, Added
	}
	return in, Updated
}
