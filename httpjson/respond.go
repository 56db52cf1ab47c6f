package httpjson

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/service"
)

// WriteJSON writes v as a JSON response with the given status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"error":{"code":500,"status":"INTERNAL","message":"internal error encoding the response","details":[]}}`)
	}
	writeRaw(w, status, b)
}

// writeRaw writes the JSON b and a newline, and returns b with the
// newline (so a pooled buffer keeps its capacity).
func writeRaw(w http.ResponseWriter, status int, b []byte) []byte {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)+1))
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	b = append(b, '\n')
	_, _ = w.Write(b)
	return b
}

// Response buffers of the answers built as bytes (GetTask, ListTasks),
// reused across requests: a page of tasks is tens of kilobytes.
var buffers = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// maxPooledBuffer keeps the odd huge answer from pinning its buffer.
const maxPooledBuffer = 1 << 20

func getBuffer() *[]byte { return buffers.Get().(*[]byte) }

func putBuffer(b *[]byte) {
	if cap(*b) > maxPooledBuffer {
		return
	}
	*b = (*b)[:0]
	buffers.Put(b)
}

// fail writes err as an A2A error response.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	WriteError(w, r, h.deps.Log, err)
}

// WriteError writes err as an A2A error response (google.rpc.Status body,
// and the auth and rate-limit headers its kind calls for). Internal errors
// are logged with the request id; their details never reach the client.
func WriteError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	e := service.ToError(err)
	if e.Kind.HTTPStatus >= 500 {
		log.Error("request failed", "request_id", RequestID(r.Context()), "err", err.Error())
	}
	hd := w.Header()
	switch e.Kind {
	case a2a.Unauthenticated:
		hd.Set("WWW-Authenticate", `Bearer realm="kfa", error="invalid_token", error_description="`+quoteSafe(e.Message)+`"`)
	case a2a.PermissionDenied:
		hd.Set("WWW-Authenticate", `Bearer realm="kfa", error="insufficient_scope", scope="post"`)
	case a2a.RateLimited:
		hd.Set("Retry-After", strconv.Itoa(a2a.RetryAfterSeconds(e.RetryAfter)))
	}
	WriteJSON(w, e.Kind.HTTPStatus, e.Status())
}

// quoteSafe makes s fit inside a quoted-string of an auth challenge.
func quoteSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '"' || r == '\\' || r < 0x20 || r > 0x7e {
			return '\''
		}
		return r
	}, s)
}

// readJSON reads a bounded JSON body into v: the Content-Type must be JSON,
// the body well-formed, valid UTF-8, without duplicate keys, and an object.
func (h *Handler) readJSON(w http.ResponseWriter, r *http.Request, v any) error {
	return ReadJSON(w, r, h.deps.MaxBodyBytes, v)
}

// ReadJSON reads a JSON object body of at most max bytes into v, with the
// checks of the A2A binding: JSON Content-Type, well-formed, valid UTF-8,
// no duplicate keys.
func ReadJSON(w http.ResponseWriter, r *http.Request, max int64, v any) error {
	if err := jsonContentType(r); err != nil {
		return err
	}
	body, err := readBody(w, r, max)
	if err != nil {
		return err
	}
	return decodeJSON(body, v)
}

func (h *Handler) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	return readBody(w, r, h.deps.MaxBodyBytes)
}

// ReadBody reads a request body of at most max bytes (413 beyond).
func ReadBody(w http.ResponseWriter, r *http.Request, max int64) ([]byte, error) {
	return readBody(w, r, max)
}

func readBody(w http.ResponseWriter, r *http.Request, max int64) ([]byte, error) {
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

// DecodeJSON validates and decodes a JSON object into v, naming the field of
// a type mismatch.
func DecodeJSON(body []byte, v any) error { return decodeJSON(body, v) }

// decodeJSON validates and decodes a JSON object body into v.
func decodeJSON(body []byte, v any) error {
	if err := a2a.CheckJSON(body); err != nil {
		var se *a2a.SyntaxError
		if errors.As(err, &se) {
			return a2a.Errorf(a2a.ParseError, "request body is not valid JSON: %v", err)
		}
		return a2a.Errorf(a2a.InvalidParams, "request body refused: %v", err)
	}
	if !a2a.IsObject(body) {
		return a2a.Errorf(a2a.InvalidParams, "request body must be a JSON object")
	}
	if err := json.Unmarshal(body, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			field := te.Field
			if field == "" {
				field = "body"
			}
			return a2a.BadParam(field, "must be %s, not JSON %s", jsonKind(te.Type.Kind().String()), te.Value)
		}
		return a2a.Errorf(a2a.InvalidParams, "request body does not match the expected shape: %v", err)
	}
	return nil
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
