package pagetoken

import (
	"errors"
	"testing"

	"github.com/kfa-project/kfa/input"
)

func TestRoundTripAndBinding(t *testing.T) {
	c := New([]byte("secret"))
	tok := c.Encode("tasks|alice|", []byte{1, 2, 3})
	got, err := c.Decode("tasks|alice|", tok)
	if err != nil || string(got) != "\x01\x02\x03" {
		t.Fatalf("round trip: %v %v", got, err)
	}
	for _, tc := range []struct {
		name    string
		codec   Codec
		binding string
		token   string
	}{
		{"other caller", c, "tasks|bob|", tok},
		{"other filters", c, "tasks|alice|WORKING", tok},
		{"other secret", New([]byte("other")), "tasks|alice|", tok},
		{"truncated", c, "tasks|alice|", tok[:len(tok)-1]},
		{"edited", c, "tasks|alice|", flip(tok, 3)},
		{"garbage", c, "tasks|alice|", "!!!not-base64"},
		{"empty", c, "tasks|alice|", ""},
		{"huge", c, "tasks|alice|", string(make([]byte, 600))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.codec.Decode(tc.binding, tc.token)
			if !errors.Is(err, ErrInvalid) || !errors.Is(err, input.ErrInvalid) {
				t.Fatalf("Decode = %v, want ErrInvalid", err)
			}
		})
	}
}

func FuzzDecode(f *testing.F) {
	c := New([]byte("secret"))
	f.Add(c.Encode("b", []byte("cursor")))
	f.Add("")
	f.Add("AAAA")
	f.Fuzz(func(t *testing.T, tok string) {
		cur, err := c.Decode("b", tok)
		if err == nil && c.Encode("b", cur) != tok {
			// A token that decodes must be exactly one the codec made.
			t.Fatalf("accepted a token the codec did not make: %q", tok)
		}
	})
}

// flip changes the character at i to another base64url character.
func flip(s string, i int) string {
	b := []byte(s)
	if b[i] == 'B' {
		b[i] = 'C'
	} else {
		b[i] = 'B'
	}
	return string(b)
}
