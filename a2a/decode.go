package a2a

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// MaxJSONDepth bounds the nesting of objects and arrays in a request body.
const MaxJSONDepth = 64

// SyntaxError reports a body that is not well-formed JSON (including
// invalid UTF-8). Offset is the byte where the problem was found.
type SyntaxError struct {
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("offset %d: %s", e.Offset, e.Msg) }

// ShapeError reports well-formed JSON that kfa refuses before decoding:
// duplicate object keys or nesting beyond MaxJSONDepth.
type ShapeError struct {
	Offset int
	Msg    string
}

func (e *ShapeError) Error() string { return fmt.Sprintf("offset %d: %s", e.Offset, e.Msg) }

// CheckJSON validates b as exactly one JSON value: well-formed, valid UTF-8,
// at most MaxJSONDepth deep and without duplicate keys in any object, two
// keys that differ only in case (Unicode folding included) counting as
// duplicates. It returns a *SyntaxError or a *ShapeError.
//
// encoding/json accepts duplicate keys (the last wins) and silently replaces
// invalid UTF-8; ProtoJSON rejects both, and so do we.
func CheckJSON(b []byte) error {
	c := checker{b: b}
	c.ws()
	if c.i >= len(b) {
		return &SyntaxError{Offset: c.i, Msg: "empty body, expected a JSON value"}
	}
	if err := c.value(0); err != nil {
		return err
	}
	c.ws()
	if c.i != len(b) {
		return &SyntaxError{Offset: c.i, Msg: "unexpected data after the JSON value"}
	}
	return nil
}

type checker struct {
	b []byte
	i int
}

func (c *checker) ws() {
	for c.i < len(c.b) {
		switch c.b[c.i] {
		case ' ', '\t', '\n', '\r':
			c.i++
		default:
			return
		}
	}
}

func (c *checker) syntax(msg string) error { return &SyntaxError{Offset: c.i, Msg: msg} }

func (c *checker) value(depth int) error {
	if c.i >= len(c.b) {
		return c.syntax("unexpected end of JSON")
	}
	switch ch := c.b[c.i]; {
	case ch == '{':
		return c.object(depth + 1)
	case ch == '[':
		return c.array(depth + 1)
	case ch == '"':
		_, err := c.str()
		return err
	case ch == 't':
		return c.lit("true")
	case ch == 'f':
		return c.lit("false")
	case ch == 'n':
		return c.lit("null")
	case ch == '-' || (ch >= '0' && ch <= '9'):
		return c.number()
	default:
		return c.syntax(fmt.Sprintf("invalid character %q looking for a value", rune(ch)))
	}
}

func (c *checker) lit(s string) error {
	if len(c.b)-c.i < len(s) || string(c.b[c.i:c.i+len(s)]) != s {
		return c.syntax("invalid literal, expected " + s)
	}
	c.i += len(s)
	return nil
}

func (c *checker) digits() int {
	start := c.i
	for c.i < len(c.b) && c.b[c.i] >= '0' && c.b[c.i] <= '9' {
		c.i++
	}
	return c.i - start
}

func (c *checker) number() error {
	if c.b[c.i] == '-' {
		c.i++
	}
	if c.i < len(c.b) && c.b[c.i] == '0' {
		c.i++
	} else if c.digits() == 0 {
		return c.syntax("invalid number")
	}
	if c.i < len(c.b) && c.b[c.i] == '.' {
		c.i++
		if c.digits() == 0 {
			return c.syntax("invalid number: no digits after the decimal point")
		}
	}
	if c.i < len(c.b) && (c.b[c.i] == 'e' || c.b[c.i] == 'E') {
		c.i++
		if c.i < len(c.b) && (c.b[c.i] == '+' || c.b[c.i] == '-') {
			c.i++
		}
		if c.digits() == 0 {
			return c.syntax("invalid number: no digits in the exponent")
		}
	}
	return nil
}

// str scans a string and returns its value: its bytes between the
// quotes, with any escapes decoded (so that "a" and "\u0061" compare
// equal as keys).
func (c *checker) str() ([]byte, error) {
	raw, escaped, err := c.rawStr()
	if err != nil || !escaped {
		return raw, err
	}
	return unquote(raw), nil
}

// rawStr scans a string and returns its bytes between the quotes, escapes
// still in place, and whether it has any.
func (c *checker) rawStr() (raw []byte, escaped bool, err error) {
	c.i++ // opening quote
	start := c.i
	for c.i < len(c.b) {
		ch := c.b[c.i]
		switch {
		case ch == '"':
			raw := c.b[start:c.i]
			c.i++
			return raw, escaped, nil
		case ch == '\\':
			escaped = true
			c.i++
			if c.i >= len(c.b) {
				return nil, false, c.syntax("unexpected end of JSON in string")
			}
			switch c.b[c.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				c.i++
			case 'u':
				if len(c.b)-c.i < 5 || !isHex4(c.b[c.i+1:c.i+5]) {
					return nil, false, c.syntax("invalid \\u escape in string")
				}
				c.i += 5
			default:
				return nil, false, c.syntax("invalid escape in string")
			}
		case ch < 0x20:
			return nil, false, c.syntax("control character in string (escape it)")
		case ch < utf8.RuneSelf:
			c.i++
		default:
			r, size := utf8.DecodeRune(c.b[c.i:])
			if r == utf8.RuneError && size <= 1 {
				return nil, false, c.syntax("invalid UTF-8 in string")
			}
			c.i += size
		}
	}
	return nil, false, c.syntax("unexpected end of JSON in string")
}

func isHex4(b []byte) bool {
	for _, ch := range b {
		if !(ch >= '0' && ch <= '9' || ch >= 'a' && ch <= 'f' || ch >= 'A' && ch <= 'F') {
			return false
		}
	}
	return true
}

func (c *checker) object(depth int) error {
	if depth > MaxJSONDepth {
		return &ShapeError{Offset: c.i, Msg: fmt.Sprintf("JSON nested deeper than %d levels", MaxJSONDepth)}
	}
	c.i++ // {
	c.ws()
	if c.i < len(c.b) && c.b[c.i] == '}' {
		c.i++
		return nil
	}
	// Two keys that fold alike set the same field in encoding/json, the
	// last one winning: refused (foldedKeys).
	var seen foldedKeys
	for {
		c.ws()
		if c.i >= len(c.b) || c.b[c.i] != '"' {
			return c.syntax("expected a string key in object")
		}
		keyAt := c.i
		key, err := c.str()
		if err != nil {
			return err
		}
		if err := seen.add(string(key), keyAt); err != nil {
			return err
		}
		c.ws()
		if c.i >= len(c.b) || c.b[c.i] != ':' {
			return c.syntax("expected ':' after object key")
		}
		c.i++
		c.ws()
		if err := c.value(depth); err != nil {
			return err
		}
		c.ws()
		if c.i >= len(c.b) {
			return c.syntax("unexpected end of JSON in object")
		}
		switch c.b[c.i] {
		case ',':
			c.i++
		case '}':
			c.i++
			return nil
		default:
			return c.syntax("expected ',' or '}' in object")
		}
	}
}

func (c *checker) array(depth int) error {
	if depth > MaxJSONDepth {
		return &ShapeError{Offset: c.i, Msg: fmt.Sprintf("JSON nested deeper than %d levels", MaxJSONDepth)}
	}
	c.i++ // [
	c.ws()
	if c.i < len(c.b) && c.b[c.i] == ']' {
		c.i++
		return nil
	}
	for {
		c.ws()
		if err := c.value(depth); err != nil {
			return err
		}
		c.ws()
		if c.i >= len(c.b) {
			return c.syntax("unexpected end of JSON in array")
		}
		switch c.b[c.i] {
		case ',':
			c.i++
		case ']':
			c.i++
			return nil
		default:
			return c.syntax("expected ',' or ']' in array")
		}
	}
}

// IsObject reports whether raw holds a JSON object (after leading space).
func IsObject(raw json.RawMessage) bool {
	for _, ch := range raw {
		switch ch {
		case ' ', '\t', '\n', '\r':
			continue
		case '{':
			return true
		default:
			return false
		}
	}
	return false
}

// The decoders below accept the snake_case field names ProtoJSON allows on
// input, next to the lowerCamelCase ones. When both are present the
// camelCase one wins. Each decodes into a named struct, its shape, which
// CheckFields walks to know the type's field names.

type (
	messagePlain  Message // without its UnmarshalJSON
	messageFields struct {
		messagePlain
		MessageIDSnake        *string   `json:"message_id"`
		ContextIDSnake        *string   `json:"context_id"`
		TaskIDSnake           *string   `json:"task_id"`
		ReferenceTaskIDsSnake *[]string `json:"reference_task_ids"`
	}
	partPlain  Part
	partFields struct {
		partPlain
		MediaTypeSnake *string `json:"media_type"`
	}
	configPlain  SendMessageConfiguration
	configFields struct {
		configPlain
		AcceptedOutputModesSnake        *[]string       `json:"accepted_output_modes"`
		TaskPushNotificationConfigSnake json.RawMessage `json:"task_push_notification_config"`
		HistoryLengthSnake              *int32          `json:"history_length"`
		ReturnImmediatelySnake          *bool           `json:"return_immediately"`
	}
)

func (*Message) jsonShape() any                  { return (*messageFields)(nil) }
func (*Part) jsonShape() any                     { return (*partFields)(nil) }
func (*SendMessageConfiguration) jsonShape() any { return (*configFields)(nil) }

// UnmarshalJSON implements json.Unmarshaler.
func (m *Message) UnmarshalJSON(b []byte) error {
	var in messageFields
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	m.setFromShape(&in)
	return nil
}

// setFromShape sets m from its shape (Decode and UnmarshalJSON).
func (m *Message) setFromShape(shape any) {
	in := shape.(*messageFields)
	*m = Message(in.messagePlain)
	pick(&m.MessageID, in.MessageIDSnake)
	pick(&m.ContextID, in.ContextIDSnake)
	pick(&m.TaskID, in.TaskIDSnake)
	if m.ReferenceTaskIDs == nil && in.ReferenceTaskIDsSnake != nil {
		m.ReferenceTaskIDs = *in.ReferenceTaskIDsSnake
	}
}

// UnmarshalJSON implements json.Unmarshaler.
func (p *Part) UnmarshalJSON(b []byte) error {
	var in partFields
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	p.setFromShape(&in)
	return nil
}

// setFromShape sets p from its shape (Decode and UnmarshalJSON).
func (p *Part) setFromShape(shape any) {
	in := shape.(*partFields)
	*p = Part(in.partPlain)
	pick(&p.MediaType, in.MediaTypeSnake)
	// A JSON null is no content at all.
	if string(p.Data) == "null" {
		p.Data = nil
	}
	if string(p.Metadata) == "null" {
		p.Metadata = nil
	}
}

// UnmarshalJSON implements json.Unmarshaler.
func (c *SendMessageConfiguration) UnmarshalJSON(b []byte) error {
	var in configFields
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	c.setFromShape(&in)
	return nil
}

// setFromShape sets c from its shape (Decode and UnmarshalJSON).
func (c *SendMessageConfiguration) setFromShape(shape any) {
	in := shape.(*configFields)
	*c = SendMessageConfiguration(in.configPlain)
	if c.AcceptedOutputModes == nil && in.AcceptedOutputModesSnake != nil {
		c.AcceptedOutputModes = *in.AcceptedOutputModesSnake
	}
	if c.TaskPushNotificationConfig == nil {
		c.TaskPushNotificationConfig = in.TaskPushNotificationConfigSnake
	}
	if c.HistoryLength == nil {
		c.HistoryLength = in.HistoryLengthSnake
	}
	if c.ReturnImmediately == nil {
		c.ReturnImmediately = in.ReturnImmediatelySnake
	}
}

func pick(dst *string, snake *string) {
	if *dst == "" && snake != nil {
		*dst = *snake
	}
}
