package store

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/moderation"
)

// An agent's posts, for the operator's hide of everything an agent wrote.
// Until schema 13 idx_author_posts indexed them by author, and every ask
// and every reply wrote an entry on a page of its author's range: a page
// per write for a rare operator command. Now PostsBy scans the
// discussions, then the replies, in key order, postsChunk records per
// read transaction (one long read would hold back the reuse of every page
// freed meanwhile), and its cursor is where the scan stands. A record is
// decoded only when its bytes hold the author's id. Hiding everything an
// agent wrote walks the file about once.

// postsChunk is how many records one read transaction of PostsBy looks
// at (a variable for tests).
var postsChunk = 10_000

// errBadPostsCursor is a PostsBy cursor this store did not make.
var errBadPostsCursor = errors.New("store: malformed posts cursor")

// postsScan is a position of PostsBy's scan: the bucket (0 the
// discussions, 1 the replies) and the last key looked at (nil: none yet).
type postsScan struct {
	bucket int
	key    []byte
}

var postsBuckets = [][]byte{bucketDiscussions, bucketReplies}

// String is the position as a cursor: the bucket's letter and the key in
// hex.
func (p postsScan) String() string { return string("dr"[p.bucket]) + hex.EncodeToString(p.key) }

func parsePostsScan(s string) (postsScan, error) {
	if s == "" {
		return postsScan{}, nil
	}
	b := bytes.IndexByte([]byte("dr"), s[0])
	k, err := hex.DecodeString(s[1:])
	if b < 0 || err != nil || len(k) == 0 {
		return postsScan{}, errBadPostsCursor
	}
	return postsScan{bucket: b, key: k}, nil
}

// PostsBy implements moderation.Store by scanning (see above): the
// cursor is opaque, a position of the scan.
func (s *DB) PostsBy(_ context.Context, agentID, after string, limit int) ([]moderation.Target, string, error) {
	if _, ok := idBytes(agentID); !ok || limit <= 0 {
		return nil, "", nil
	}
	pos, err := parsePostsScan(after)
	if err != nil {
		return nil, "", err
	}
	needle := []byte(`"authorId":"` + agentID + `"`)
	var (
		out  []moderation.Target
		last postsScan // the position of the last target kept
		more bool      // a match beyond the page exists
	)
	for !more && pos.bucket < len(postsBuckets) {
		end := false
		err := s.db.View(func(tx *bolt.Tx) error {
			c := tx.Bucket(postsBuckets[pos.bucket]).Cursor()
			k, v := c.First()
			if pos.key != nil {
				if k, v = c.Seek(pos.key); bytes.Equal(k, pos.key) {
					k, v = c.Next()
				}
			}
			for n := 0; k != nil && n < postsChunk; k, v = c.Next() {
				n++
				pos.key = bytes.Clone(k)
				if !bytes.Contains(v, needle) {
					continue
				}
				t, ok, err := postOf(pos.bucket, k, v, agentID)
				if err != nil || !ok {
					continue // not the author's after all, or undecodable: kfa check reports that
				}
				if len(out) == limit {
					more = true
					return nil
				}
				out, last = append(out, t), postsScan{bucket: pos.bucket, key: pos.key}
			}
			end = k == nil
			return nil
		})
		if err != nil {
			return nil, "", err
		}
		if end {
			pos = postsScan{bucket: pos.bucket + 1}
		}
	}
	if !more {
		return out, "", nil
	}
	return out, last.String(), nil
}

// postOf is the target of the record k, v of bucket b (0 discussions,
// 1 replies), and whether agentID wrote it.
func postOf(b int, k, v []byte, agentID string) (moderation.Target, bool, error) {
	if b == 0 {
		d, err := decodeDiscussion(v)
		return moderation.Target{Kind: moderation.KindDiscussion, ID: d.ID}, err == nil && d.AuthorID == agentID, err
	}
	if len(k) != 32 {
		return moderation.Target{}, false, nil
	}
	r, err := decodeReply(v)
	return moderation.Target{Kind: moderation.KindReply, ID: idString(k[16:]), DiscussionID: idString(k[:16])},
		err == nil && r.AuthorID == agentID, err
}
