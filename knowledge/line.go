package knowledge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kfa-project/kfa/input"
)

// LineError is one rejected import line.
type LineError struct {
	Line    int    `json:"line"`            // 1-based
	Field   string `json:"field,omitempty"` // the offending field, when one is to blame
	Message string `json:"message"`
}

func (e *LineError) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("line %d: %s: %s", e.Line, e.Field, e.Message)
	}
	return fmt.Sprintf("line %d: %s", e.Line, e.Message)
}

// importLine is the JSON shape of one import line. Pointers tell a missing
// field from an empty one.
type importLine struct {
	ID          *string  `json:"id"`
	Kind        *string  `json:"kind"`
	Product     *string  `json:"product"`
	Environment *string  `json:"environment"`
	Title       *string  `json:"title"`
	Body        *string  `json:"body"`
	Tags        []string `json:"tags"`
	URL         *string  `json:"url"`
	UpdatedAt   *string  `json:"updatedAt"`
}

// ParseLine reads one import line (without its newline) into a valid
// record. Its error is a *LineError numbered n. Unknown fields are refused,
// so a misspelt field (updated_at) is reported instead of dropped.
func ParseLine(n int, line []byte) (Record, error) {
	fail := func(field, format string, args ...any) (Record, error) {
		return Record{}, &LineError{Line: n, Field: field, Message: fmt.Sprintf(format, args...)}
	}
	if len(line) > MaxLineBytes {
		return fail("", "line is %d bytes, at most %d", len(line), MaxLineBytes)
	}
	if !utf8.Valid(line) {
		return fail("", "not valid UTF-8")
	}
	var l importLine
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return fail(jsonField(err), "%s", jsonProblem(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return fail("", "unexpected data after the JSON object; put one record on each line")
	}
	for _, req := range []struct {
		name string
		v    *string
	}{{"id", l.ID}, {"kind", l.Kind}, {"title", l.Title}, {"body", l.Body}} {
		if req.v == nil {
			return fail(req.name, "is required")
		}
	}
	r := Record{ID: *l.ID, Kind: *l.Kind, Title: *l.Title, Body: *l.Body, Tags: l.Tags}
	for _, opt := range []struct {
		src *string
		dst *string
	}{{l.Product, &r.Product}, {l.Environment, &r.Environment}, {l.URL, &r.URL}} {
		if opt.src != nil {
			*opt.dst = *opt.src
		}
	}
	if l.UpdatedAt != nil {
		t, err := time.Parse(time.RFC3339Nano, *l.UpdatedAt)
		if err != nil {
			return fail("updatedAt", "%q is not an RFC 3339 time such as 2026-12-02T10:30:00Z", *l.UpdatedAt)
		}
		if t.IsZero() || t.Year() < 1970 {
			return fail("updatedAt", "%q is before 1970", *l.UpdatedAt)
		}
		r.UpdatedAt = t.UTC().Truncate(time.Millisecond)
	}
	if err := r.Validate(); err != nil {
		var ie *input.Error
		if errors.As(err, &ie) {
			return fail(ie.Field, "%s", ie.Msg)
		}
		return fail("", "%v", err)
	}
	return r, nil
}

// jsonField names the field a decoding error is about, when it knows.
func jsonField(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return te.Field
	}
	if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return strings.Trim(f, `"`)
	}
	return ""
}

// jsonProblem describes a decoding error without Go type names.
func jsonProblem(err error) string {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		want := "a string"
		if te.Field == "tags" {
			want = "an array of strings"
		}
		if te.Field == "" {
			return "must be a JSON object"
		}
		return fmt.Sprintf("must be %s, not JSON %s", want, te.Value)
	case errors.As(err, &se):
		return fmt.Sprintf("not valid JSON at byte %d: %s", se.Offset, strings.TrimPrefix(se.Error(), "json: "))
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "not valid JSON: unexpected end of line"
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return "unknown field; a record has id, kind, product, environment, title, body, tags, url and updatedAt"
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}
