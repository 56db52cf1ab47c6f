package store

import (
	"encoding/binary"
	"time"

	"github.com/oklog/ulid/v2"
)

func u64(v uint64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, v)
	return b
}

// idBytes parses a ULID string into its 16 bytes. ok is false for anything
// that is not a ULID, which callers treat as "no such record".
func idBytes(s string) ([]byte, bool) {
	if len(s) != ulid.EncodedSize {
		return nil, false
	}
	id, err := ulid.ParseStrict(s)
	if err != nil {
		return nil, false
	}
	return id[:], true
}

// appendID appends the 16 bytes of ULID s to b; ok is false for anything
// that is not a ULID.
func appendID(b []byte, s string) ([]byte, bool) {
	if len(s) != ulid.EncodedSize {
		return b, false
	}
	id, err := ulid.ParseStrict(s)
	if err != nil {
		return b, false
	}
	return append(b, id[:]...), true
}

func idString(b []byte) string {
	var id ulid.ULID
	copy(id[:], b)
	return id.String()
}

// ms is the millisecond timestamp used in index keys.
func ms(t time.Time) uint64 { return uint64(t.UnixMilli()) }

func fromMS(v uint64) time.Time { return time.UnixMilli(int64(v)).UTC() }

// cat concatenates key parts into a new slice.
func cat(parts ...[]byte) []byte {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	out := make([]byte, 0, n)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// counter adds delta to the uint64 counter at key in b.
func counter(b interface {
	Get([]byte) []byte
	Put([]byte, []byte) error
	Delete([]byte) error
}, key []byte, delta int64) error {
	var v int64
	if cur := b.Get(key); len(cur) == 8 {
		v = int64(binary.BigEndian.Uint64(cur))
	}
	v += delta
	if v <= 0 {
		return b.Delete(key)
	}
	return b.Put(key, u64(uint64(v)))
}

func readCounter(b interface{ Get([]byte) []byte }, key []byte) int {
	if cur := b.Get(key); len(cur) == 8 {
		return int(binary.BigEndian.Uint64(cur))
	}
	return 0
}
