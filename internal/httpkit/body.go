package httpkit

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"

	"github.com/kfa-project/kfa/a2a"
)

// DefaultMaxBodyBytes is the bound on a request body (256 KiB) when the
// operator sets none (--max-body-bytes): the one place the default is
// written, for the server's config and every surface.
const DefaultMaxBodyBytes int64 = 256 << 10

// BodyLimit is max, or DefaultMaxBodyBytes when max is not positive (a
// surface built without a limit).
func BodyLimit(max int64) int64 {
	if max <= 0 {
		return DefaultMaxBodyBytes
	}
	return max
}

// JSONContentType checks that a request's Content-Type is JSON
// (application/json or application/a2a+json).
func JSONContentType(r *http.Request) error {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return a2a.Errorf(a2a.ContentTypeNotSupported, "missing Content-Type; send application/json or application/a2a+json")
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || (mt != "application/json" && mt != "application/a2a+json") {
		return a2a.Errorf(a2a.ContentTypeNotSupported, "Content-Type %q is not supported; send application/json or application/a2a+json",
			Truncate(ct, 64))
	}
	return nil
}

// ReadJSON reads a JSON object body of at most max bytes into v, with the
// checks of the A2A binding: JSON Content-Type, well-formed, valid UTF-8,
// no duplicate keys.
func ReadJSON(w http.ResponseWriter, r *http.Request, max int64, v any) error {
	if err := JSONContentType(r); err != nil {
		return err
	}
	body, err := ReadBody(w, r, max)
	if err != nil {
		return err
	}
	return DecodeJSON(body, v)
}

// ReadBody reads a request body of at most max bytes (413 beyond).
func ReadBody(w http.ResponseWriter, r *http.Request, max int64) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return nil, a2a.Errorf(a2a.PayloadTooLarge, "request body is larger than %d bytes", tooBig.Limit)
	}
	if err != nil {
		return nil, a2a.Errorf(a2a.InvalidRequest, "reading the request body failed: %v", err)
	}
	return body, nil
}

// DecodeJSON validates and decodes a JSON object into v, naming the field
// of a type mismatch, and refusing a key that names a field of v other
// than exactly (encoding/json would take "MESSAGEID" for messageId). The
// body is read once: a2a.Decode checks it as it decodes.
func DecodeJSON(body []byte, v any) error {
	err := a2a.Decode(body, v)
	var (
		se *a2a.SyntaxError
		sh *a2a.ShapeError
		te *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &se):
		return a2a.Errorf(a2a.ParseError, "request body is not valid JSON: %v", err)
	case errors.As(err, &sh):
		return a2a.Errorf(a2a.InvalidParams, "request body refused: %v", err)
	case !a2a.IsObject(body):
		return a2a.Errorf(a2a.InvalidParams, "request body must be a JSON object")
	case err == nil:
		return nil
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			field = "body"
		}
		return a2a.BadParam(field, "must be %s, not JSON %s", jsonKind(te.Type.Kind().String()), te.Value)
	}
	var fe *a2a.FieldError
	if errors.As(err, &fe) {
		return fe.Param("")
	}
	// A type that refuses a field itself (api.ReplyRequest) has said what
	// is wrong, in the caller's words: pass that on as it is.
	if e, ok := a2a.AsError(err); ok {
		return e
	}
	return a2a.Errorf(a2a.InvalidParams, "request body does not match the expected shape: %v", err)
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "slice", "array":
		return "an array"
	case "struct", "map", "ptr":
		return "an object"
	case "int", "int32", "int64", "uint", "uint32", "uint64":
		return "an integer"
	case "float64", "float32":
		return "a number"
	}
	return "of another type"
}
