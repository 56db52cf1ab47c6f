package store

import (
	"bytes"
	"encoding/hex"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/discussions"
)

// Discussions: each is in the status index under its status, its reply
// count, status and answer time agree with its replies (answered at its
// earliest visible qualifying reply, open without one: the
// discussions.Answered rule, which no order of concurrent replies, hides
// and unhides can break), and the author heard of every reply by someone
// else. Then the status index and the
// replies, entry by entry.
func (c *checker) checkDiscussions() error {
	err := c.walk(bucketDiscussions, func(tx *bolt.Tx, k, v []byte) {
		if len(k) != 16 {
			c.rep.addf(VDecode, bucketDiscussions, k, hex.EncodeToString(k), "", "key is not a 16-byte id")
			return
		}
		d, err := decodeDiscussion(v)
		if err != nil {
			c.rep.addf(VDecode, bucketDiscussions, k, idString(k), "", "%v", err)
			return
		}
		c.discussion(tx, k, d)
	})
	if err != nil {
		return err
	}
	err = c.walk(bucketDiscByStatus, func(tx *bolt.Tx, k, _ []byte) {
		if len(k) != 17 {
			c.rep.addf(VDecode, bucketDiscByStatus, k, hex.EncodeToString(k), "", "key is not status (1) | discussion id (16)")
			return
		}
		id := idString(k[1:])
		status := "open"
		if k[0] == statusByte(discussions.StatusAnswered) {
			status = "answered"
		}
		desc := status + "|" + id
		v := tx.Bucket(bucketDiscussions).Get(k[1:])
		if v == nil {
			c.rep.addf(VDiscussion, bucketDiscByStatus, k, desc, "", "entry for discussion %s, which does not exist", id)
			return
		}
		d, err := decodeDiscussion(v)
		if err != nil {
			return // reported with the discussion
		}
		switch {
		case d.Hidden:
			c.rep.addf(VDiscussion, bucketDiscByStatus, k, desc, "", "entry for discussion %s, which is hidden", id)
		case statusByte(d.Status) != k[0] || (k[0] != 1 && k[0] != 2):
			c.rep.addf(VDiscussion, bucketDiscByStatus, k, desc, "", "entry says %s, the discussion is %s", status, d.Status)
		}
	})
	if err != nil {
		return err
	}
	return c.walk(bucketReplies, func(tx *bolt.Tx, k, v []byte) {
		if len(k) != 32 {
			c.rep.addf(VDecode, bucketReplies, k, hex.EncodeToString(k), "", "key is not discussion id (16) | reply id (16)")
			return
		}
		desc := idString(k[:16]) + "|" + idString(k[16:])
		r, err := decodeReply(v)
		if err != nil {
			c.rep.addf(VDecode, bucketReplies, k, desc, "", "%v", err)
			return
		}
		if r.ID != idString(k[16:]) || r.DiscussionID != idString(k[:16]) {
			c.rep.addf(VReply, bucketReplies, k, desc, "", "reply record says id %s on discussion %s", r.ID, r.DiscussionID)
		}
		if tx.Bucket(bucketDiscussions).Get(k[:16]) == nil {
			c.rep.addf(VReply, bucketReplies, k, desc, "", "reply on discussion %s, which does not exist", idString(k[:16]))
		}
		if v := tx.Bucket(bucketReplyDiscs).Get(k[16:]); !bytes.Equal(v, k[:16]) {
			c.rep.addf(VReply, bucketReplyDiscs, k[16:], desc, "", "reply_discs has %x for the reply, not its discussion", v)
		}
		if author, ok := idBytes(r.AuthorID); !ok || !bytes.Equal(tx.Bucket(bucketAuthorPosts).Get(cat(author, k[16:])), k[:16]) {
			c.rep.addf(VReply, bucketAuthorPosts, k, desc, "", "reply is missing from its author %s's posts", r.AuthorID)
		}
	})
}

// discussion checks one discussion d stored under k, with its replies.
func (c *checker) discussion(tx *bolt.Tx, k []byte, d discussions.Discussion) {
	if d.ID != idString(k) {
		c.rep.addf(VDiscussion, bucketDiscussions, k, idString(k), "", "discussion record has id %q", d.ID)
	}
	if tx.Bucket(bucketAgents).Get([]byte(d.AuthorID)) == nil {
		c.rep.addf(VDiscussion, bucketDiscussions, k, idString(k), "", "author %s does not exist", d.AuthorID)
	}
	if !discussions.KnownStatus(d.Status) {
		c.rep.addf(VDiscussion, bucketDiscussions, k, idString(k), "", "unknown status %q", d.Status)
	}
	if !d.Hidden {
		c.expected[string(keyDiscCount)]++
		c.expected[string(discCountKey(d.Status))]++
		if tx.Bucket(bucketDiscByStatus).Get(cat([]byte{statusByte(d.Status)}, k)) == nil {
			c.rep.addf(VDiscussion, bucketDiscByStatus, k, d.ID, "", "discussion %s (%s) is missing from the status index", d.ID, d.Status)
		}
	}
	author, _ := idBytes(d.AuthorID)
	if v := tx.Bucket(bucketAuthorPosts).Get(cat(author, k)); author == nil || v == nil || len(v) != 0 {
		c.rep.addf(VDiscussion, bucketAuthorPosts, k, d.ID, "", "discussion is missing from its author %s's posts", d.AuthorID)
	}

	n, hidden := 0, 0
	var answer discussions.AnswerCheck
	acceptedOK := d.AcceptedReplyID == ""
	inbox := tx.Bucket(bucketInbox)
	prefixed(tx.Bucket(bucketReplies), k, func(_, v []byte) {
		n++
		r, err := decodeReply(v)
		if err != nil {
			return // a bad reply is reported on its own
		}
		if r.Hidden {
			hidden++
		}
		if r.ID == d.AcceptedReplyID && !r.Hidden && r.AuthorID != d.AuthorID {
			acceptedOK = true
		}
		answer.Add(d, r)
		if !discussions.NotifiesAuthor(d, r) {
			return
		}
		// Someone else replied: the author was told.
		if author == nil {
			return
		}
		ek, _ := idBytes(discussions.InboxEntryID(r.ID, d.AuthorID, r.CreatedAt))
		if ik := cat(author, ek); inbox.Get(ik) == nil {
			c.rep.addf(VInbox, bucketInbox, ik, d.AuthorID+"|"+idString(ek), "",
				"agent %s was not notified of reply %s on discussion %s", d.AuthorID, r.ID, d.ID)
		}
	})
	if d.ReplyCount != n {
		c.rep.addf(VDiscussion, bucketDiscussions, k, d.ID, "", "replyCount is %d, %d replies are stored", d.ReplyCount, n)
	}
	if d.HiddenReplies != hidden {
		c.rep.addf(VDiscussion, bucketDiscussions, k, d.ID, "", "hiddenReplies is %d, %d replies are hidden", d.HiddenReplies, hidden)
	}
	if !acceptedOK {
		c.rep.addf(VDiscussion, bucketDiscussions, k, d.ID, "", "the accepted reply %s is not a public reply by someone other than the asker",
			d.AcceptedReplyID)
	}
	if p := answer.Problem(d); p != "" {
		c.rep.addf(VDiscussion, bucketDiscussions, k, d.ID, "", "%s", p)
	}
}

// checkInbox: every entry names an existing agent and reply and the
// agent's own tasks on that discussion, and is in the unacked index
// exactly when it is not acknowledged.
func (c *checker) checkInbox() error {
	err := c.walk(bucketInbox, func(tx *bolt.Tx, k, v []byte) {
		if len(k) != 32 {
			c.rep.addf(VDecode, bucketInbox, k, hex.EncodeToString(k), "", "key is not agent id (16) | entry id (16)")
			return
		}
		desc := idString(k[:16]) + "|" + idString(k[16:])
		e, err := decodeInbox(v)
		if err != nil {
			c.rep.addf(VDecode, bucketInbox, k, desc, "", "%v", err)
			return
		}
		agent := idString(k[:16])
		if e.ID != idString(k[16:]) {
			c.rep.addf(VInbox, bucketInbox, k, desc, "", "entry record has id %s", e.ID)
		}
		if tx.Bucket(bucketAgents).Get([]byte(agent)) == nil {
			c.rep.addf(VInbox, bucketInbox, k, desc, "", "entry of agent %s, which does not exist", agent)
		}
		dk, ok1 := idBytes(e.DiscussionID)
		rk, ok2 := idBytes(e.ReplyID)
		if !ok1 || !ok2 || tx.Bucket(bucketReplies).Get(cat(dk, rk)) == nil {
			c.rep.addf(VInbox, bucketInbox, k, desc, "", "entry names reply %s on discussion %s, which does not exist", e.ReplyID, e.DiscussionID)
		}
		for _, tid := range e.TaskIDs {
			t, err := taskHeader(tx, tid)
			if err != nil || t.OwnerID != agent || t.DiscussionID != e.DiscussionID {
				c.rep.addf(VInbox, bucketInbox, k, desc, tid, "entry lists task %s, which is not the agent's task on discussion %s", tid, e.DiscussionID)
			}
		}
		if isNew := tx.Bucket(bucketInboxUnacked).Get(k) != nil; isNew != e.AckedAt.IsZero() {
			if isNew {
				c.rep.addf(VInbox, bucketInboxUnacked, k, desc, "", "entry is acknowledged but still in the unacked index")
			} else {
				c.rep.addf(VInbox, bucketInboxUnacked, k, desc, "", "entry is not acknowledged but missing from the unacked index")
			}
		}
	})
	if err != nil {
		return err
	}
	return c.walk(bucketInboxUnacked, func(tx *bolt.Tx, k, _ []byte) {
		switch {
		case len(k) != 32:
			c.rep.addf(VDecode, bucketInboxUnacked, k, hex.EncodeToString(k), "", "key is not agent id (16) | entry id (16)")
		case tx.Bucket(bucketInbox).Get(k) == nil:
			c.rep.addf(VInbox, bucketInboxUnacked, k, idString(k[:16])+"|"+idString(k[16:]), "", "unacked index entry without an inbox entry")
		}
	})
}
