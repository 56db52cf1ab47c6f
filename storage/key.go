package storage

import (
	"bytes"
	"encoding/binary"
	"strings"
	"time"
)

// Key is a record's key, or an index entry's: its parts, in order. Keys
// sort part by part, each part bytewise, so a shorter key sorts before
// every key it is a prefix of; a range is every key that starts with a
// prefix.
type Key []string

// K makes a key of parts.
func K(parts ...string) Key { return Key(parts) }

// Uint is v as a key part that sorts as the number does (8 bytes, big
// endian).
func Uint(v uint64) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], v)
	return string(b[:])
}

// ParseUint is the number of a part Uint made (0 for any other).
func ParseUint(part string) uint64 {
	if len(part) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64([]byte(part))
}

// Millis is t as a key part that sorts in time order (Unix milliseconds,
// as Uint; times before 1970 sort first).
func Millis(t time.Time) string { return Uint(uint64(t.UnixMilli())) }

// ParseMillis is the time of a part Millis made.
func ParseMillis(part string) time.Time { return time.UnixMilli(int64(ParseUint(part))).UTC() }

// HasPrefix reports whether k starts with every part of p.
func (k Key) HasPrefix(p Key) bool {
	if len(p) > len(k) {
		return false
	}
	for i := range p {
		if k[i] != p[i] {
			return false
		}
	}
	return true
}

// Compare orders keys part by part (-1, 0, +1).
func (k Key) Compare(o Key) int {
	for i := range min(len(k), len(o)) {
		if c := strings.Compare(k[i], o[i]); c != 0 {
			return c
		}
	}
	switch {
	case len(k) < len(o):
		return -1
	case len(k) > len(o):
		return 1
	}
	return 0
}

// Encode is k as bytes that sort as k does, and in which a prefix of
// parts is a prefix of bytes: each part's bytes, a zero byte escaped as
// 0x00 0xFF, then the terminator 0x00 0x01. The stores keep the kinds
// they have no mapping for under these bytes.
func (k Key) Encode() []byte {
	n := 0
	for _, p := range k {
		n += len(p) + 2
	}
	b := make([]byte, 0, n)
	for _, p := range k {
		for i := 0; i < len(p); i++ {
			if p[i] == 0 {
				b = append(b, 0, 0xff)
				continue
			}
			b = append(b, p[i])
		}
		b = append(b, 0, 1)
	}
	return b
}

// DecodeKey is the key Encode made of b; ok is false for bytes Encode
// cannot make.
func DecodeKey(b []byte) (k Key, ok bool) {
	var part []byte
	for i := 0; i < len(b); i++ {
		if b[i] != 0 {
			part = append(part, b[i])
			continue
		}
		if i+1 == len(b) {
			return nil, false
		}
		i++
		switch b[i] {
		case 0xff:
			part = append(part, 0)
		case 1:
			k = append(k, string(part))
			part = part[:0]
		default:
			return nil, false
		}
	}
	if len(part) > 0 {
		return nil, false
	}
	return k, true
}

// PrefixEnd is the smallest encoding greater than every encoding that
// starts with prefix (an Encode of at least one part): its terminator's
// last byte, plus one.
func PrefixEnd(prefix []byte) []byte {
	if len(prefix) == 0 {
		return nil
	}
	end := bytes.Clone(prefix)
	end[len(end)-1]++
	return end
}
