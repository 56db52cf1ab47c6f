package store

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/knowledge"
	"github.com/kfa-project/kfa/moderation"
	"github.com/kfa-project/kfa/sessions"
	"github.com/kfa-project/kfa/store/internal/storedoc"
	"github.com/kfa-project/kfa/store/transfer"
)

// Dump reads the whole store into a transfer.Data, from one read
// transaction (kfa migrate; the file should belong to no running server,
// so that nothing written after the dump is left behind).
func (s *DB) Dump() (*transfer.Data, error) {
	d := &transfer.Data{}
	err := s.db.View(func(tx *bolt.Tx) error { return dumpTx(tx, d) })
	if err != nil {
		return nil, fmt.Errorf("store: dump: %w", err)
	}
	return d, nil
}

// each calls fn for every key and value of bucket name.
func each(tx *bolt.Tx, name []byte, fn func(k, v []byte) error) error {
	b := tx.Bucket(name)
	if b == nil {
		return nil
	}
	return b.ForEach(fn)
}

func dumpTx(tx *bolt.Tx, d *transfer.Data) error {
	d.Secret = append([]byte(nil), tx.Bucket(bucketMeta).Get(metaSecret)...)
	steps := []struct {
		bucket []byte
		fn     func(k, v []byte) error
	}{
		{bucketAgents, func(_, v []byte) error {
			var r agentRecord
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("decode agent: %w", err)
			}
			d.Agents = append(d.Agents, r.Agent)
			return nil
		}},
		{bucketCreds, func(k, v []byte) error {
			c, err := decodeCred(v)
			copy(c.Digest[:], k)
			d.Credentials = append(d.Credentials, c)
			return err
		}},
		{bucketTasks, func(_, v []byte) error {
			t, err := decodeTask(v)
			d.Tasks = append(d.Tasks, t)
			return err
		}},
		{bucketDiscussions, func(_, v []byte) error {
			x, err := decodeDiscussion(v)
			d.Discussions = append(d.Discussions, x)
			return err
		}},
		{bucketReplies, func(_, v []byte) error {
			x, err := decodeReply(v)
			d.Replies = append(d.Replies, x)
			return err
		}},
		{bucketInbox, func(k, v []byte) error {
			x, err := decodeInbox(v)
			x.AgentID = idString(k[:16])
			unacked := tx.Bucket(bucketInboxUnacked).Get(k) != nil
			d.Inbox = append(d.Inbox, transfer.InboxItem{Entry: x, Unacked: unacked})
			return err
		}},
		{bucketRateWindows, func(k, v []byte) error {
			if len(k) != 17 || len(v) != 8 {
				return errors.New("malformed rate window")
			}
			d.RateWindows = append(d.RateWindows, transfer.RateWindow{Kind: k[0], AgentID: idString(k[1:]),
				TAT: time.Unix(0, int64(binary.BigEndian.Uint64(v))).UTC()})
			return nil
		}},
		{bucketRecords, func(_, v []byte) error {
			var r knowledge.Record
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("decode record: %w", err)
			}
			d.Records = append(d.Records, r)
			return nil
		}},
		{bucketPushConfigs, func(_, v []byte) error {
			c, err := storedoc.DecodePushConfig(v)
			d.PushConfigs = append(d.PushConfigs, c)
			return err
		}},
		{bucketPushOutbox, func(_, v []byte) error {
			x, err := storedoc.DecodeDelivery(v)
			d.Deliveries = append(d.Deliveries, x)
			return err
		}},
		{bucketSignKeys, func(_, v []byte) error {
			k, err := storedoc.DecodeSignKey(v)
			d.SigningKeys = append(d.SigningKeys, k)
			return err
		}},
		{bucketSessions, func(k, v []byte) error {
			var dg sessions.Digest
			copy(dg[:], k)
			x, err := decodeSession(dg, v)
			d.Sessions = append(d.Sessions, x)
			return err
		}},
		{bucketModItems, func(_, v []byte) error {
			var x moderation.Item
			err := json.Unmarshal(v, &x)
			d.ModItems = append(d.ModItems, x)
			return err
		}},
		{bucketModFlags, func(_, v []byte) error {
			var x moderation.Flag
			err := json.Unmarshal(v, &x)
			d.Flags = append(d.Flags, x)
			return err
		}},
		{bucketModLog, func(_, v []byte) error {
			var x moderation.Entry
			err := json.Unmarshal(v, &x)
			d.ModLog = append(d.ModLog, x)
			return err
		}},
	}
	for _, st := range steps {
		if err := each(tx, st.bucket, st.fn); err != nil {
			return fmt.Errorf("%s: %w", st.bucket, err)
		}
	}
	return dumpFeed(tx, d)
}

// dumpFeed reads the records' change feed: the log's record events.
func dumpFeed(tx *bolt.Tx, d *transfer.Data) error {
	log := tx.Bucket(bucketLog)
	return each(tx, bucketLogRecords, func(k, _ []byte) error {
		_, r, err := decodeLogRecord(k, log.Get(k))
		if err != nil {
			return err
		}
		d.Feed = append(d.Feed, transfer.FeedEntry{ID: r.ID, Op: knowledge.ChangeOp(r.Kind), At: fromMS(uint64(r.At)), Written: fromMS(uint64(r.Written))})
		return nil
	})
}

// LoadFile makes a new kfa file at path holding d, in one transaction:
// every record, and what the store derives from them (indexes, counters,
// members, the message-id map). It refuses a path that exists.
func LoadFile(path string, d *transfer.Data) error {
	if _, err := os.Stat(path); err == nil {
		return fmt.Errorf("store: %s exists; kfa migrate writes a new file only", path)
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("store: %w", err)
	}
	s, err := Open(path, Options{})
	if err != nil {
		return err
	}
	err = s.db.Update(func(tx *bolt.Tx) error {
		tuneTx(tx)
		return loadTx(tx, d)
	})
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(path)
		return fmt.Errorf("store: load %s: %w", path, err)
	}
	return nil
}

func loadTx(tx *bolt.Tx, d *transfer.Data) error {
	if len(d.Secret) > 0 {
		if err := tx.Bucket(bucketMeta).Put(metaSecret, d.Secret); err != nil {
			return err
		}
	}
	creds := map[string][]string{}
	for _, c := range d.Credentials {
		creds[c.AgentID] = append(creds[c.AgentID], hex.EncodeToString(c.Digest[:]))
		if err := putCred(tx, c); err != nil {
			return err
		}
	}
	for _, a := range d.Agents {
		if err := tx.Bucket(bucketAgentNames).Put(agentNameKey(a.Name, a.ID), nil); err != nil {
			return err
		}
		if err := putAgent(tx, agentRecord{Agent: a, Creds: creds[a.ID]}); err != nil {
			return err
		}
		if a.Linked() {
			if err := tx.Bucket(bucketAgentIdentities).Put(identityKey(a.Identity()), []byte(a.ID)); err != nil {
				return err
			}
		}
	}
	if err := counter(tx.Bucket(bucketCounts), keyAgentCount, int64(len(d.Agents))); err != nil {
		return err
	}
	for i := range d.Discussions {
		x := &d.Discussions[i]
		if err := putDiscussion(tx, x, 0); err != nil {
			return err
		}
		dk, _ := idBytes(x.ID)
		author, ok := idBytes(x.AuthorID)
		if !ok {
			return errBadID("author", x.AuthorID)
		}
		if err := putPost(tx, author, dk, nil); err != nil {
			return err
		}
	}
	for _, r := range d.Replies {
		dk, ok := idBytes(r.DiscussionID)
		rk, ok2 := idBytes(r.ID)
		author, ok3 := idBytes(r.AuthorID)
		if !ok || !ok2 || !ok3 {
			return errBadID("reply", r.DiscussionID+"/"+r.ID)
		}
		v, err := encodeJSON(r)
		if err != nil {
			return err
		}
		if err := tx.Bucket(bucketReplies).Put(cat(dk, rk), v); err != nil {
			return err
		}
		if err := putReplyPlace(tx, author, dk, rk); err != nil {
			return err
		}
	}
	batch := newIndexBatch()
	for i := range d.Tasks {
		t := &d.Tasks[i]
		if err := putTask(tx, t); err != nil {
			return err
		}
		if err := batch.add(t, +1); err != nil {
			return err
		}
		owner, _ := idBytes(t.OwnerID)
		tid, _ := idBytes(t.ID)
		disc, ok := idBytes(t.DiscussionID)
		if !ok {
			return errBadID("discussion", t.DiscussionID)
		}
		if err := tx.Bucket(bucketTaskMsgIDs).Put(msgIDKey(owner, t.MessageID), tid); err != nil {
			return err
		}
		if err := addMember(tx, disc, owner, tid); err != nil {
			return err
		}
	}
	if err := batch.apply(tx); err != nil {
		return err
	}
	for _, e := range d.Inbox {
		if err := putInbox(tx, e.Entry, e.Unacked); err != nil {
			return err
		}
	}
	for _, w := range d.RateWindows {
		a, ok := idBytes(w.AgentID)
		if !ok {
			return errBadID("agent", w.AgentID)
		}
		if err := putWindow(tx, w.Kind, a, w.TAT); err != nil {
			return err
		}
	}
	if err := loadModeration(tx, d); err != nil {
		return err
	}
	return loadRest(tx, d)
}

// loadModeration loads the moderation items (with their queue entries),
// the flags and the audit log.
func loadModeration(tx *bolt.Tx, d *transfer.Data) error {
	for i := range d.ModItems {
		if err := putItem(tx, &d.ModItems[i]); err != nil {
			return err
		}
	}
	for i := range d.Flags {
		f := &d.Flags[i]
		ik, ok1 := idBytes(f.ItemID)
		ak, ok2 := idBytes(f.AgentID)
		if !ok1 || !ok2 {
			return errBadID("flag", f.ItemID+"/"+f.AgentID)
		}
		v, err := encodeJSON(f)
		if err != nil {
			return err
		}
		if err := tx.Bucket(bucketModFlags).Put(cat(ik, ak), v); err != nil {
			return err
		}
	}
	return putEntries(tx, d.ModLog)
}

// loadRest loads records and their feed, push configs and deliveries,
// signing keys and web sessions.
func loadRest(tx *bolt.Tx, d *transfer.Data) error {
	recs := tx.Bucket(bucketRecords)
	for _, r := range d.Records {
		v, err := json.Marshal(r)
		if err != nil {
			return err
		}
		if err := recs.Put([]byte(r.ID), v); err != nil {
			return err
		}
	}
	if err := counter(tx.Bucket(bucketCounts), keyRecordCount, int64(len(d.Records))); err != nil {
		return err
	}
	for _, e := range d.Feed {
		if err := putLogEntry(tx, logRecord{Kind: knowledge.EventKind(e.Op), ID: e.ID, At: e.At.UnixMilli(), Written: e.Written.UnixMilli()}); err != nil {
			return err
		}
	}
	for i := range d.PushConfigs {
		v, err := storedoc.EncodePushConfig(&d.PushConfigs[i])
		if err != nil {
			return err
		}
		if err := putPushConfigRecord(tx, &d.PushConfigs[i], v); err != nil {
			return err
		}
	}
	for i := range d.Deliveries {
		if err := putDelivery(tx, nil, &d.Deliveries[i]); err != nil {
			return err
		}
	}
	for i := range d.SigningKeys {
		v, err := storedoc.EncodeSignKey(&d.SigningKeys[i])
		if err != nil {
			return err
		}
		if err := tx.Bucket(bucketSignKeys).Put(signKeyKey(&d.SigningKeys[i]), v); err != nil {
			return err
		}
	}
	for _, x := range d.Sessions {
		v, err := encodeSession(&x)
		if err != nil {
			return err
		}
		if err := tx.Bucket(bucketSessions).Put(x.Digest[:], v); err != nil {
			return err
		}
		if err := tx.Bucket(bucketSessionExp).Put(sessionExpKey(x.ExpiresAt, x.Digest), nil); err != nil {
			return err
		}
	}
	return nil
}
