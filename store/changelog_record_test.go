package store

import (
	"encoding/json"
	"testing"

	"github.com/kfa-project/kfa/changelog"
)

// A log entry is written in the binary form and read back whole; an
// entry written as JSON before schema 13 still reads; a damaged one is an
// error, never a wrong event.
func TestLogRecordForms(t *testing.T) {
	key := u64(42)
	for _, r := range []logRecord{
		{Kind: changelog.TaskCreated, ID: "01JD0Z6X8Q4Y4K2V1T3S5R7P9N", Owner: "01JD0Z6X8Q4Y4K2V1T3S5R7P9M", At: 1764671400123, Written: 1764671400124},
		{Kind: changelog.DiscussionReplied, ID: "d", Ref: "r", Note: "qualifying", At: -5, Written: 0},
		{Kind: changelog.RecordDeleted, ID: "ünïcode id"},
	} {
		v := encodeLogRecord(r)
		if v[0] == '{' {
			t.Fatalf("a binary entry starts like JSON: %x", v)
		}
		seq, got, err := decodeLogRecord(key, v)
		if err != nil || seq != 42 || got != r {
			t.Fatalf("binary %+v: read %+v (seq %d, %v)", r, got, seq, err)
		}
		old, _ := json.Marshal(r)
		if _, got, err := decodeLogRecord(key, old); err != nil || got != r {
			t.Fatalf("JSON %s: read %+v (%v)", old, got, err)
		}
		for n := range len(v) - 1 {
			if _, got, err := decodeLogRecord(key, v[:n]); err == nil {
				t.Fatalf("%d of %d bytes read as %+v", n, len(v), got)
			}
		}
		if _, _, err := decodeLogRecord(key, append(v, 0)); err == nil {
			t.Fatal("an entry with a byte too many was read")
		}
	}
}
