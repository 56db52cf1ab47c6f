package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/kfa-project/kfa/a2a"
)

// MessageError is a JSON-RPC error kfa answers itself, before the SDK
// reads the message: the message is not JSON, or not a JSON-RPC message
// the SDK could take without ending the session (over stdio, the SDK
// ends it at the first such line).
type MessageError struct {
	// ID is the request's id; nil when it could not be read.
	ID      json.RawMessage
	Code    int
	Message string
}

func (e *MessageError) Error() string { return e.Message }

// Response is the JSON-RPC error response to the message, with a null id
// when the request's could not be read.
func (e *MessageError) Response() []byte {
	id := e.ID
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(rpcError{JSONRPC: "2.0", ID: id, Error: rpcErrorBody{Code: e.Code, Message: e.Message}})
	return b
}

// CheckMessage checks one JSON-RPC message, or a batch of them when
// batches is true, as kfa's transports read it: well-formed JSON in valid
// UTF-8 without duplicate keys (a parse error, or an invalid request or
// invalid params error naming the key), then the JSON-RPC envelope
// (jsonrpc "2.0", an id that is a string or an integer, a string method).
// What the method and params mean is left to the SDK.
func CheckMessage(b []byte, batches bool) *MessageError {
	if err := a2a.CheckJSON(b); err != nil {
		return jsonError(b, err)
	}
	trimmed := bytes.TrimLeft(b, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		if !batches {
			return &MessageError{Code: jsonrpc.CodeInvalidRequest,
				Message: "JSON-RPC batches are not supported in protocol version 2025-06-18 and later: send one message per line"}
		}
		var batch []json.RawMessage
		if err := json.Unmarshal(b, &batch); err != nil || len(batch) == 0 {
			return &MessageError{Code: jsonrpc.CodeInvalidRequest, Message: "a JSON-RPC batch must hold at least one message"}
		}
		ids := map[string]bool{}
		for i, m := range batch {
			if e := checkEnvelope(m); e != nil {
				e.Message = fmt.Sprintf("batch message %d: %s", i, e.Message)
				e.ID = nil
				return e
			}
			if id := requestID(m); id != nil && isRequest(m) {
				if ids[string(id)] {
					return &MessageError{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("the batch holds two requests with the id %s", id)}
				}
				ids[string(id)] = true
			}
		}
		return nil
	}
	return checkEnvelope(b)
}

// jsonError classifies a failed a2a.CheckJSON: a syntax error is a parse
// error; a duplicate key is invalid params when it is inside params (the
// tool arguments are there), invalid request otherwise.
func jsonError(b []byte, err error) *MessageError {
	var se *a2a.SyntaxError
	if errors.As(err, &se) {
		return &MessageError{Code: jsonrpc.CodeParseError, Message: "not valid JSON: " + err.Error()}
	}
	var sh *a2a.ShapeError
	if !errors.As(err, &sh) {
		return &MessageError{Code: jsonrpc.CodeInvalidRequest, Message: "refused: " + err.Error()}
	}
	path := keyPath(b, sh.Offset)
	if len(path) == 0 {
		return &MessageError{ID: requestID(b), Code: jsonrpc.CodeInvalidRequest, Message: "refused: " + err.Error()}
	}
	e := &MessageError{ID: requestID(b), Code: jsonrpc.CodeInvalidRequest, Message: sh.Msg}
	parent := path[:len(path)-1]
	if len(parent) > 0 {
		e.Message = strings.Join(parent, ".") + ": " + sh.Msg
	}
	if len(parent) > 0 && parent[0] == "params" {
		e.Code = jsonrpc.CodeInvalidParams
	}
	if len(parent) == 0 && path[0] == "id" {
		e.ID = nil // which of the ids would be a guess
	}
	return e
}

// keyPath is the path (object keys, array indexes) of the object key that
// starts at offset in b, a well-formed JSON value; nil when no key starts
// there.
func keyPath(b []byte, offset int) []string {
	type frame struct {
		object    bool
		expectKey bool
		key       string
		index     int
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	var stack []*frame
	path := func() []string {
		var p []string
		for _, f := range stack {
			if f.object {
				p = append(p, f.key)
			} else {
				p = append(p, strconv.Itoa(f.index))
			}
		}
		return p
	}
	// valueDone moves the enclosing container past one value.
	valueDone := func() {
		if n := len(stack); n > 0 {
			if f := stack[n-1]; f.object {
				f.expectKey = true
			} else {
				f.index++
			}
		}
	}
	for {
		before := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		after := dec.InputOffset()
		if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].expectKey {
			if key, ok := tok.(string); ok {
				f := stack[n-1]
				f.key, f.expectKey = key, false
				if int64(offset) >= before && int64(offset) < after {
					return path()
				}
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{object: true, expectKey: true})
		case json.Delim('['):
			stack = append(stack, &frame{})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			valueDone()
		default:
			valueDone()
		}
	}
}

// checkEnvelope checks one message's JSON-RPC envelope; b is well-formed
// JSON without duplicate keys.
func checkEnvelope(b []byte) *MessageError {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		return &MessageError{Code: jsonrpc.CodeInvalidRequest, Message: "a JSON-RPC message must be a JSON object"}
	}
	id := m["id"]
	if len(id) > 0 && !validID(id) {
		return &MessageError{Code: jsonrpc.CodeInvalidRequest, Message: "id must be a string, an integer or null"}
	}
	e := &MessageError{ID: requestID(b), Code: jsonrpc.CodeInvalidRequest}
	for key := range m {
		if known, ok := foldMatch(key, envelopeMembers); ok {
			e.Message = fmt.Sprintf("%+q is not a member of a JSON-RPC message: names are case-sensitive (did you mean %q?)", key, known)
			return e
		}
	}
	if v := m["jsonrpc"]; string(v) != `"2.0"` {
		e.Message = `jsonrpc must be "2.0"`
		return e
	}
	if method, ok := m["method"]; ok {
		var s string
		if json.Unmarshal(method, &s) != nil {
			e.Message = "method must be a string"
			return e
		}
	} else if len(id) == 0 || string(id) == "null" {
		e.Message = "a JSON-RPC message needs a method (a request or notification) or an id (a response)"
		return e
	}
	if string(m["method"]) == `"tools/call"` {
		var params map[string]json.RawMessage
		if json.Unmarshal(m["params"], &params) == nil {
			for key := range params {
				if known, ok := foldMatch(key, callToolParams); ok {
					e.Code = jsonrpc.CodeInvalidParams
					e.Message = fmt.Sprintf("params: %+q is not a tools/call parameter: names are case-sensitive (did you mean %q?)", key, known)
					return e
				}
			}
		}
	}
	// What the SDK reads: whatever it refuses here would end a stdio
	// session.
	if _, err := jsonrpc.DecodeMessage(b); err != nil {
		e.Message = "not a JSON-RPC 2.0 message: " + err.Error()
		return e
	}
	return nil
}

// envelopeMembers are the members of a JSON-RPC message.
var envelopeMembers = []string{"jsonrpc", "id", "method", "params", "result", "error"}

// callToolParams are the tools/call parameters kfa's tools read.
var callToolParams = []string{"name", "arguments", "_meta"}

// validID reports whether a JSON value is an id kfa can answer with: a
// string, an integer the SDK keeps exactly, or null.
func validID(raw json.RawMessage) bool {
	switch raw[0] {
	case '"':
		return true
	case 'n':
		return string(raw) == "null"
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		f, err := strconv.ParseFloat(string(raw), 64)
		return err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53
	}
	return false
}

// isRequest reports whether a message is a request or notification (it
// has a method) rather than a response.
func isRequest(b []byte) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return false
	}
	_, ok := m["method"]
	return ok
}
