package store

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	"github.com/kfa-project/kfa/commands"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/moderation"
	"github.com/kfa-project/kfa/storage"
)

// The schema's discussions, replies, moderation records, rate windows and
// agents, in the buckets they always had.

// jsonDoc decodes a JSON document.
func jsonDoc[T any](what string) func(_, v []byte) (T, error) {
	return func(_, v []byte) (T, error) {
		var t T
		if err := json.Unmarshal(v, &t); err != nil {
			return t, fmt.Errorf("store: decode %s: %w", what, err)
		}
		return t, nil
	}
}

// encodeDoc encodes a JSON document.
func encodeDoc[T any](t *T) ([]byte, error) { return json.Marshal(t) }

func init() {
	discs := &docKind[discussions.Discussion]{
		kind: commands.Discussions, bucket: bucketDiscussions, parts: []part{pULID},
		decode: func(_, v []byte) (discussions.Discussion, error) { return decodeDiscussion(v) },
		encode: encodeDoc[discussions.Discussion],
		// putDiscussionRecord writes the document with its status entry
		// and counters; a new discussion is its author's post too.
		write: func(r *run, old, d *discussions.Discussion, v []byte) error {
			if err := putDiscussionRecord(r.tx, d, v, listing(old)); err != nil {
				return err
			}
			if old != nil {
				return nil
			}
			author, ok := idBytes(d.AuthorID)
			dk, _ := idBytes(d.ID)
			if !ok {
				return errBadID("author", d.AuthorID)
			}
			return putPost(r.tx, author, dk, nil)
		},
	}
	mapped[commands.Discussions] = discs

	replies := &docKind[discussions.Reply]{
		kind: commands.Replies, bucket: bucketReplies, parts: []part{pULID, pULID},
		decode: func(_, v []byte) (discussions.Reply, error) { return decodeReply(v) },
		encode: encodeDoc[discussions.Reply],
		// A brief reply is its header: not its body.
		brief: func(_, v []byte) (discussions.Reply, error) {
			var h replyHeader
			if err := json.Unmarshal(v, &h); err != nil {
				return discussions.Reply{}, fmt.Errorf("store: decode reply: %w", err)
			}
			return discussions.Reply{ID: h.ID, DiscussionID: h.DiscussionID, AuthorID: h.AuthorID, CreatedAt: h.CreatedAt,
				Hidden: h.Hidden}, nil
		},
		// A new reply is found by its id, and is its author's post.
		onPut: func(r *run, old, rep *discussions.Reply) error {
			if old != nil {
				return nil
			}
			author, ok1 := idBytes(rep.AuthorID)
			dk, ok2 := idBytes(rep.DiscussionID)
			rk, ok3 := idBytes(rep.ID)
			if !ok1 || !ok2 || !ok3 {
				return errBadID("reply", rep.ID)
			}
			return putReplyPlace(r.tx, author, dk, rk)
		},
	}
	// RepliesByID: reply_discs, reply id (16) -> discussion id (16).
	replies.scans = map[storage.Ix]func(*run, *storage.Range, storage.Key, func(storage.Key, any) bool) error{
		commands.RepliesByID: func(r *run, q *storage.Range, prefix storage.Key, fn func(storage.Key, any) bool) error {
			pb, ok := keyBytes([]part{pULID}, prefix)
			if !ok {
				return nil
			}
			return replies.walkRefs(r, q, bucketReplyDiscs, pb, nil, true, func(ik, v []byte) (storage.Key, []byte, bool) {
				if len(ik) != 16 || len(v) != 16 {
					return nil, nil, false
				}
				return storage.K(idString(ik), idString(v), idString(ik)), cat(v, ik), true
			}, fn)
		},
	}
	mapped[commands.Replies] = replies

	mapped[commands.ModerationItems] = &docKind[moderation.Item]{
		kind: commands.ModerationItems, bucket: bucketModItems, parts: []part{pULID},
		decode: jsonDoc[moderation.Item]("moderation item"),
		encode: encodeDoc[moderation.Item],
		write:  func(r *run, _, it *moderation.Item, v []byte) error { return putItemRecord(r.tx, it, v) },
	}
	mapped[commands.ModerationFlags] = &docKind[moderation.Flag]{
		kind: commands.ModerationFlags, bucket: bucketModFlags, parts: []part{pULID, pULID},
		decode: jsonDoc[moderation.Flag]("flag"), encode: encodeDoc[moderation.Flag],
	}
	mapped[commands.ModerationLog] = &docKind[moderation.Entry]{
		kind: commands.ModerationLog, bucket: bucketModLog, parts: []part{pULID},
		decode: jsonDoc[moderation.Entry]("moderation log entry"), encode: encodeDoc[moderation.Entry],
	}

	// Windows: rate_windows, limit (1) | agent id (16) -> Unix ns (8).
	mapped[commands.Windows] = &docKind[commands.Window]{
		kind: commands.Windows, bucket: bucketRateWindows, parts: []part{{size: 1}, pULID},
		decode: func(k, v []byte) (commands.Window, error) {
			if len(k) != 17 || len(v) != 8 {
				return commands.Window{}, fmt.Errorf("store: malformed rate window %x", k)
			}
			return commands.Window{Limit: string(k[:1]), AgentID: idString(k[1:]),
				At: time.Unix(0, int64(binary.BigEndian.Uint64(v))).UTC()}, nil
		},
		decodeKey: func(k storage.Key, v []byte) (commands.Window, error) {
			if len(v) != 8 {
				return commands.Window{}, fmt.Errorf("store: malformed rate window %q", k)
			}
			return commands.Window{Limit: k[0], AgentID: k[1], At: time.Unix(0, int64(binary.BigEndian.Uint64(v))).UTC()}, nil
		},
		encode: func(w *commands.Window) ([]byte, error) { return u64(uint64(w.At.UnixNano())), nil },
	}
}

// replyHeader is what a brief read of a reply decodes: not its body.
type replyHeader struct {
	ID           string    `json:"id"`
	DiscussionID string    `json:"discussionId"`
	AuthorID     string    `json:"authorId"`
	CreatedAt    time.Time `json:"createdAt"`
	Hidden       bool      `json:"hidden"`
}
