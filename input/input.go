// Package input validates untrusted text that agents send: lengths in
// characters, UTF-8 validity, control characters, identifier syntax. Its
// Error names the offending field, so every binding can answer with a
// precise InvalidParams error. It has no dependencies beyond the standard
// library and holds no product rules.
package input

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kfa-project/kfa/internal/english"
)

// ErrInvalid is wrapped by every Error: errors.Is(err, ErrInvalid) is true
// for any validation failure.
var ErrInvalid = errors.New("invalid input")

// Error is invalid input in one named field.
type Error struct {
	Field string // dotted path as the client wrote it, e.g. "message.messageId"
	Msg   string
}

func (e *Error) Error() string { return e.Field + ": " + e.Msg }

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (e *Error) Unwrap() error { return ErrInvalid }

// Errorf returns an *Error for field.
func Errorf(field, format string, args ...any) error {
	return &Error{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Text checks free text: valid UTF-8, not blank when min > 0, within
// [min, max] characters, and free of control characters (newline, carriage
// return and tab are allowed when multiline).
func Text(field, s string, min, max int, multiline bool) error {
	if !utf8.ValidString(s) {
		return &Error{field, "not valid UTF-8"}
	}
	if min > 0 && strings.TrimSpace(s) == "" {
		return &Error{field, "must not be empty"}
	}
	n := utf8.RuneCountInString(s)
	if n < min {
		return &Error{field, fmt.Sprintf("%s, at least %d", english.Count(n, "character", "characters"), min)}
	}
	if n > max {
		return &Error{field, fmt.Sprintf("%s, at most %d", english.Count(n, "character", "characters"), max)}
	}
	for _, r := range s {
		if multiline && (r == '\n' || r == '\r' || r == '\t') {
			continue
		}
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return &Error{field, fmt.Sprintf("contains the control character %U", r)}
		}
	}
	return nil
}

// ID checks a client-chosen identifier: 1..max bytes of valid UTF-8 with no
// spaces or control characters.
func ID(field, v string, max int) error {
	if v == "" {
		return &Error{field, "is required"}
	}
	if len(v) > max {
		return &Error{field, fmt.Sprintf("%d bytes, at most %d", len(v), max)}
	}
	if !utf8.ValidString(v) {
		return &Error{field, "not valid UTF-8"}
	}
	for _, r := range v {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return &Error{field, "must not contain spaces or control characters"}
		}
	}
	return nil
}

// PageSize is the size of the page a client asked for: def when it named
// none (asked is nil), otherwise asked, which must be between 1 and max.
// Every listing checks its page size here, so pageSize means the same on
// every surface (0 is refused, not read as "the default").
func PageSize(asked *int, def, max int) (int, error) {
	if asked == nil {
		return def, nil
	}
	if *asked < 1 || *asked > max {
		return 0, &Error{"pageSize", fmt.Sprintf("must be between 1 and %d", max)}
	}
	return *asked, nil
}
