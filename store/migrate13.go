package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/discussions"
)

// reanswerDiscussions (migration 13) answers every discussion by its
// earliest visible qualifying reply (discussions.Answered). Until schema
// 13 a discussion was answered at the time of the qualifying reply that
// committed first, which concurrent replies could make a later one, and
// it stayed answered when every answer was hidden; kfa check now holds
// discussions to the rule, so a file written before must meet it. A
// discussion that moves (in the status index and counts too) gets a
// discussion.changed event, so that the search index re-reads it.
func reanswerDiscussions(tx *bolt.Tx) error {
	type moved struct {
		d   discussions.Discussion
		was byte
	}
	var changed []moved
	replies := tx.Bucket(bucketReplies).Cursor()
	err := tx.Bucket(bucketDiscussions).ForEach(func(k, v []byte) error {
		d, err := decodeDiscussion(v)
		if err != nil {
			return fmt.Errorf("discussion %s: %w", idString(k), err)
		}
		var rs []discussions.Reply
		for rk, rv := replies.Seek(k); rk != nil && bytes.HasPrefix(rk, k); rk, rv = replies.Next() {
			var h replyHeader
			if err := json.Unmarshal(rv, &h); err != nil {
				return fmt.Errorf("reply %s: %w", idString(rk[len(k):]), err)
			}
			rs = append(rs, discussions.Reply{ID: h.ID, AuthorID: h.AuthorID, CreatedAt: h.CreatedAt, Hidden: h.Hidden})
		}
		nd := discussions.Answered(d, discussions.FirstAnswer(d, rs))
		if nd.Status != d.Status || !nd.AnsweredAt.Equal(d.AnsweredAt) {
			changed = append(changed, moved{nd, listing(&d)})
		}
		return nil
	})
	if err != nil {
		return err
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	for _, m := range changed {
		if err := putDiscussion(tx, &m.d, m.was); err != nil {
			return err
		}
		e := discussions.StatusEvent(&m.d, now)
		if err := putLogEntry(tx, logRecord{Kind: e.Kind, ID: e.ID, Ref: e.Ref, Note: e.Note, At: e.At.UnixMilli(),
			Written: now.UnixMilli()}); err != nil {
			return err
		}
	}
	return nil
}
