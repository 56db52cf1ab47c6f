package store

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/discussions"
)

// describeCounter renders a counter key for people.
func describeCounter(k []byte) string {
	name, rest, found := bytes.Cut(k, []byte{0})
	if !found {
		return string(name)
	}
	if string(name) == string(keyDiscCount) && len(rest) == 1 {
		if rest[0] == statusByte(discussions.StatusAnswered) {
			return "discussions/answered"
		}
		return "discussions/open"
	}
	for ix, ti := range taskIndexes {
		if bytes.Equal(name, ti.bucket) {
			if parts, ok := describePrefix(ix, rest); ok {
				if len(parts) == 0 {
					return string(name)
				}
				return string(name) + "/" + strings.Join(parts, " ")
			}
		}
	}
	return string(name) + "/" + hex.EncodeToString(rest)
}

// describeIndexKey renders a task index key for people: its prefix parts,
// the status timestamp and the task id.
func describeIndexKey(ix int, k []byte) string {
	if len(k) < 24 {
		return hex.EncodeToString(k)
	}
	parts, ok := describePrefix(ix, k[:len(k)-24])
	if !ok {
		return hex.EncodeToString(k)
	}
	ts := fromMS(binary.BigEndian.Uint64(k[len(k)-24 : len(k)-16]))
	parts = append(parts, "ts="+a2a.FormatTime(ts), "task="+idString(k[len(k)-16:]))
	return strings.Join(parts, " ")
}

// describeIndexValue renders a task index value for people.
func describeIndexValue(ix int, v []byte) string {
	if taskIndexes[ix].value == nil || len(v) != 17 || int(v[16]) >= len(taskStates) {
		return strconv.Quote(hex.EncodeToString(v))
	}
	return "owner=" + idString(v[:16]) + " state=" + string(taskStates[v[16]])
}

// describePrefix splits a task index prefix into its named parts.
func describePrefix(ix int, p []byte) ([]string, bool) {
	var parts []string
	owner := func() bool {
		if len(p) < 16 {
			return false
		}
		parts = append(parts, "owner="+idString(p[:16]))
		p = p[16:]
		return true
	}
	ctx := func() bool {
		if len(p) < 1 || len(p) < 1+int(p[0]) {
			return false
		}
		parts = append(parts, "ctx="+strconv.Quote(string(p[1:1+int(p[0])])))
		p = p[1+int(p[0]):]
		return true
	}
	state := func() bool {
		if len(p) < 1 || int(p[0]) >= len(taskStates) {
			return false
		}
		parts = append(parts, "state="+string(taskStates[p[0]]))
		p = p[1:]
		return true
	}
	var steps []func() bool
	switch ix {
	case idxAllState:
		steps = []func() bool{state}
	case idxOwner:
		steps = []func() bool{owner}
	case idxOwnerState:
		steps = []func() bool{owner, state}
	case idxAllCtx:
		steps = []func() bool{ctx}
	}
	for _, s := range steps {
		if !s() {
			return nil, false
		}
	}
	return parts, len(p) == 0
}
