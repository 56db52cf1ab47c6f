package store

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/knowledge"
)

// TestMigrateFeedToLog: a schema-7 file's records feed (entries written
// before the log existed, then entries written beside it) becomes the
// log's record events, once each, in feed order and with their written
// times; the log's other events follow; the feed bucket goes; the file
// passes kfa check.
func TestMigrateFeedToLog(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), FileName)
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.UpsertRecords(ctx, []knowledge.Record{rec("c", "C")}, t1); err != nil {
		t.Fatal(err)
	}
	// Lay the file out as schema 7 did: a feed bucket holding a, b (from
	// before the log), a's deletion and c (written beside the log, whose
	// own record event for c is there too), an agent's event in the log.
	err = db.db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketLogRecords, bucketLogRecordIDs, bucketLogDroppable, bucketLogCursors} {
			if err := tx.DeleteBucket(b); err != nil {
				return err
			}
		}
		if err := putLogEntry(tx, logRecord{Kind: changelog.AgentCreated, ID: "agent-1", At: t1.UnixMilli(), Written: t1.UnixMilli()}); err != nil {
			return err
		}
		feed, err := tx.CreateBucket(bucketFeed)
		if err != nil {
			return err
		}
		for i, f := range []feedRecord{
			{ID: "a", Op: knowledge.OpUpsert, At: t0.UnixMilli()}, // before write times were kept
			{ID: "b", Op: knowledge.OpUpsert, At: t0.UnixMilli(), Written: t0.UnixMilli()},
			{ID: "a", Op: knowledge.OpDelete, At: t0.UnixMilli(), Written: t0.UnixMilli()},
			{ID: "c", Op: knowledge.OpUpsert, At: t1.UnixMilli(), Written: t1.UnixMilli()},
		} {
			v, _ := json.Marshal(f)
			if err := feed.Put(u64(uint64(i+1)), v); err != nil {
				return err
			}
		}
		if err := tx.Bucket(bucketMeta).Put(metaFeedTrimmed, u64(0)); err != nil {
			return err
		}
		return tx.Bucket(bucketMeta).Put(metaSchema, u64(7))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if db, err = Open(path, Options{}); err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	evs, err := db.ReadLog(ctx, changelog.Position{}, 100)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		got = append(got, string(e.Kind)+" "+e.ID)
	}
	want := "record.upserted a,record.upserted b,record.deleted a,record.upserted c,agent.created agent-1"
	if strings.Join(got, ",") != want {
		t.Fatalf("log after migrating:\n%s\nwant\n%s", strings.Join(got, ","), want)
	}
	_, chs, err := db.Changes(ctx, changelog.Position{}, 100)
	if err != nil || len(chs) != 4 || chs[3].ID != "c" || chs[3].Record == nil || chs[1].Pos.Seq != 2 {
		t.Fatalf("records feed after migrating: %+v, %v", chs, err)
	}
	err = db.db.View(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketFeed) != nil || tx.Bucket(bucketMeta).Get(metaFeedTrimmed) != nil {
			t.Error("the feed bucket or its trimmed mark is still there")
		}
		v := tx.Bucket(bucketLog).Get(u64(1))
		var r logRecord
		if err := json.Unmarshal(v, &r); err != nil || r.Written != t0.UnixMilli() {
			t.Errorf("a's entry written at %d, want its updatedAt %d (no write time was kept)", r.Written, t0.UnixMilli())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The carried entries trim by the records rule: a's upsert and
	// deletion go, b and c stay (and the agent's, the newest event).
	if n, err := db.TrimLog(ctx, t1.Add(time.Hour)); err != nil || n != 2 {
		t.Fatalf("trim after migrating: %d, %v; want a's two entries", n, err)
	}
	if rep, err := db.Check(ctx); err != nil || !rep.OK() || rep.SchemaVersion != SchemaVersion() {
		t.Fatalf("check after migrating: %v\n%s", err, dump(rep))
	}
}
