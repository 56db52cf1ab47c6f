package store

import (
	"bytes"
	"encoding/binary"
	"maps"
	"slices"

	bolt "go.etcd.io/bbolt"
)

// recordCountKey is the counter of knowledge records (kept by the
// records code).
var recordCountKey = []byte("records")

// counterFamily is the name a counter key starts with, and whether this
// build knows it. Counters of families it does not know are left alone.
func counterFamily(k []byte) (name, rest []byte, known bool) {
	name, rest, _ = bytes.Cut(k, []byte{0})
	switch string(name) {
	case string(keyDiscCount), string(keyAgentCount), string(recordCountKey):
		return name, rest, true
	}
	for _, ti := range taskIndexes {
		if ti.counted && bytes.Equal(name, ti.bucket) {
			return name, rest, true
		}
	}
	return name, rest, false
}

// checkCounters compares every counter of a known family with what the
// walks counted. The walks span many transactions, so a counter that
// disagrees is counted again in one transaction before it is reported.
func (c *checker) checkCounters() error {
	err := c.view(func(tx *bolt.Tx) error {
		c.expected[string(recordCountKey)] = tx.Bucket(bucketRecords).Stats().KeyN
		return nil
	})
	if err != nil {
		return err
	}
	var suspects [][]byte
	err = c.walk(bucketCounts, func(_ *bolt.Tx, k, v []byte) {
		if _, _, known := counterFamily(k); !known {
			return
		}
		want, counted := c.expected[string(k)]
		delete(c.expected, string(k))
		if len(v) != 8 {
			c.rep.addf(VCounter, bucketCounts, k, describeCounter(k), "", "value is %d bytes, not an 8-byte count", len(v))
			return
		}
		if got := binary.BigEndian.Uint64(v); got != uint64(want) || !counted && got != 0 {
			suspects = append(suspects, bytes.Clone(k))
		}
	})
	if err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(c.expected)) {
		if c.expected[k] != 0 {
			suspects = append(suspects, []byte(k))
		}
	}
	for _, k := range suspects {
		err := c.view(func(tx *bolt.Tx) error {
			v := tx.Bucket(bucketCounts).Get(k)
			got := 0
			if len(v) == 8 {
				got = int(binary.BigEndian.Uint64(v))
			}
			counted := recount(tx, k)
			switch {
			case got == counted:
			case v == nil:
				c.rep.addf(VCounter, bucketCounts, k, describeCounter(k), "", "counter is missing (reads 0), counted %d", counted)
			default:
				c.rep.addf(VCounter, bucketCounts, k, describeCounter(k), "", "counter is %d, counted %d", got, counted)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// recount counts, in tx, what the counter k counts.
func recount(tx *bolt.Tx, k []byte) int {
	name, rest, _ := counterFamily(k)
	switch string(name) {
	case string(keyAgentCount):
		return tx.Bucket(bucketAgents).Stats().KeyN
	case string(recordCountKey):
		return tx.Bucket(bucketRecords).Stats().KeyN
	case string(keyDiscCount):
		if len(rest) == 0 {
			return tx.Bucket(bucketDiscussions).Stats().KeyN
		}
		n := 0
		_ = tx.Bucket(bucketDiscussions).ForEach(func(_, v []byte) error {
			if d, err := decodeDiscussion(v); err == nil && statusByte(d.Status) == rest[0] {
				n++
			}
			return nil
		})
		return n
	}
	n := 0
	prefixed(tx.Bucket(name), rest, func(key, _ []byte) {
		if len(key) == len(rest)+24 {
			n++
		}
	})
	return n
}
