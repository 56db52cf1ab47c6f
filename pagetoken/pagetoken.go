// Package pagetoken makes the opaque page tokens of list operations.
//
// A token carries a cursor (the key of the last item a page returned) and
// is bound, by an HMAC under a per-database secret, to the caller and the
// filters it was made for. A token replayed by someone else, reused with
// other filters, truncated or edited fails to decode.
package pagetoken

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"

	"github.com/kfa-project/kfa/input"
)

const (
	version = 1
	macLen  = 12
)

// ErrInvalid is returned for any token that does not decode under the given
// binding. It is an *input.Error for the pageToken field.
var ErrInvalid error = &input.Error{Field: "pageToken",
	Msg: "not a page token of this listing (tokens are bound to the caller and filters they were issued for)"}

// Codec encodes and decodes tokens under one secret.
type Codec struct{ key []byte }

// New returns a Codec keyed by secret.
func New(secret []byte) Codec { return Codec{key: append([]byte(nil), secret...)} }

func (c Codec) mac(binding string, cursor []byte) []byte {
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte{version})
	m.Write([]byte(binding))
	m.Write([]byte{0})
	m.Write(cursor)
	return m.Sum(nil)[:macLen]
}

// Encode returns the token for cursor under binding (the caller and the
// filters, in a canonical form the caller chooses).
func (c Codec) Encode(binding string, cursor []byte) string {
	b := make([]byte, 0, 1+len(cursor)+macLen)
	b = append(b, version)
	b = append(b, cursor...)
	b = append(b, c.mac(binding, cursor)...)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Decode returns the cursor in token if it was made under binding.
func (c Codec) Decode(binding, token string) ([]byte, error) {
	if len(token) > 512 {
		return nil, ErrInvalid
	}
	// One spelling per token: only the alphabet (the decoder would skip
	// newlines) and no stray trailing bits (Strict).
	for i := 0; i < len(token); i++ {
		c := token[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return nil, ErrInvalid
		}
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(token)
	if err != nil || len(b) < 1+macLen || b[0] != version {
		return nil, ErrInvalid
	}
	cursor, sum := b[1:len(b)-macLen], b[len(b)-macLen:]
	if !hmac.Equal(sum, c.mac(binding, cursor)) {
		return nil, ErrInvalid
	}
	return cursor, nil
}
