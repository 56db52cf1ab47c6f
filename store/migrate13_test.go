package store

import (
	"bytes"
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/tasks"
)

// schema12Indexes writes what schema 12 kept and schema 13 does not, as
// its writes did: every task in idx_task_all, idx_task_allst and
// idx_task_owner with their counters, every discussion and reply in
// idx_author_posts.
func schema12Indexes(tx *bolt.Tx) error {
	all, err := tx.CreateBucketIfNotExists(bucketTaskAll)
	if err != nil {
		return err
	}
	allst, err := tx.CreateBucketIfNotExists(bucketTaskAllSt)
	if err != nil {
		return err
	}
	byOwner, err := tx.CreateBucketIfNotExists(bucketTaskByOwner)
	if err != nil {
		return err
	}
	if _, err := tx.CreateBucketIfNotExists(bucketAuthorPosts); err != nil {
		return err
	}
	counts := tx.Bucket(bucketCounts)
	err = tx.Bucket(bucketTasks).ForEach(func(k, v []byte) error {
		t, err := headerOf(v)
		if err != nil {
			return err
		}
		st := []byte{stateByte(t.State)}
		if err := all.Put(tsID(t.StatusTime, k), nil); err != nil {
			return err
		}
		if err := allst.Put(cat(st, tsID(t.StatusTime, k)), nil); err != nil {
			return err
		}
		owner, _ := idBytes(t.OwnerID)
		if err := byOwner.Put(cat(owner, tsID(t.StatusTime, k)), nil); err != nil {
			return err
		}
		if err := counter(counts, counterKey(bucketTaskByOwner, owner), 1); err != nil {
			return err
		}
		if err := counter(counts, counterKey(bucketTaskAll, nil), 1); err != nil {
			return err
		}
		return counter(counts, counterKey(bucketTaskAllSt, st), 1)
	})
	if err != nil {
		return err
	}
	err = tx.Bucket(bucketDiscussions).ForEach(func(k, v []byte) error {
		d, err := decodeDiscussion(v)
		if err != nil {
			return err
		}
		author, _ := idBytes(d.AuthorID)
		return putPostV12(tx, author, bytes.Clone(k), nil)
	})
	if err != nil {
		return err
	}
	err = tx.Bucket(bucketReplies).ForEach(func(k, v []byte) error {
		r, err := decodeReply(v)
		if err != nil {
			return err
		}
		author, _ := idBytes(r.AuthorID)
		return putPostV12(tx, author, bytes.Clone(k[16:]), bytes.Clone(k[:16]))
	})
	if err != nil {
		return err
	}
	return tx.Bucket(bucketMeta).Put(metaSchema, u64(12))
}

// TestMigration13DropsOperatorIndexes: a schema 12 file loses the
// indexes and counters only the operator read, passes kfa check, and the
// operator's listings, totals and an agent's posts are what those indexes
// said they were.
func TestMigration13DropsOperatorIndexes(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	w.mutate(t, schema12Indexes)

	// What schema 12's indexes say: the tasks newest first (overall and by
	// state), the totals, and each agent's posts.
	var wantAll []string
	wantByOwner := map[string][]string{}
	wantByState := map[a2a.TaskState][]string{}
	wantTotal, wantByCount := 0, map[a2a.TaskState]int{}
	wantPosts := map[string][]string{}
	err := w.db.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketTaskAll).Cursor()
		for k, _ := c.Last(); k != nil; k, _ = c.Prev() {
			wantAll = append(wantAll, idString(k[8:]))
		}
		c = tx.Bucket(bucketTaskByOwner).Cursor()
		for k, _ := c.Last(); k != nil; k, _ = c.Prev() {
			wantByOwner[idString(k[:16])] = append(wantByOwner[idString(k[:16])], idString(k[24:]))
		}
		c = tx.Bucket(bucketTaskAllSt).Cursor()
		for k, _ := c.Last(); k != nil; k, _ = c.Prev() {
			st := taskStates[k[0]]
			wantByState[st] = append(wantByState[st], idString(k[9:]))
		}
		counts := tx.Bucket(bucketCounts)
		wantTotal = readCounter(counts, counterKey(bucketTaskAll, nil))
		for _, st := range taskStates {
			if n := readCounter(counts, counterKey(bucketTaskAllSt, []byte{stateByte(st)})); n > 0 {
				wantByCount[st] = n
			}
		}
		return tx.Bucket(bucketAuthorPosts).ForEach(func(k, _ []byte) error {
			wantPosts[idString(k[:16])] = append(wantPosts[idString(k[:16])], idString(k[16:]))
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(wantAll) != 4 || wantTotal != 4 || len(wantByOwner) != 3 || len(wantPosts) != 3 {
		t.Fatalf("the schema 12 indexes: %d tasks, total %d, posts of %d agents", len(wantAll), wantTotal, len(wantPosts))
	}

	path := w.db.Path()
	if err := w.db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := Open(path, Options{BatchDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.db.View(func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bucketTaskAll, bucketTaskAllSt, bucketTaskByOwner, bucketAuthorPosts} {
			if tx.Bucket(name) != nil {
				t.Errorf("bucket %s is still there", name)
			}
		}
		for _, family := range [][]byte{counterKey(bucketTaskAll, nil), counterKey(bucketTaskAllSt, nil), counterKey(bucketTaskByOwner, nil)} {
			if k, _ := tx.Bucket(bucketCounts).Cursor().Seek(family); bytes.HasPrefix(k, family) {
				t.Errorf("counter %q is still there", k)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := db.Check(ctx); err != nil || !rep.OK() || rep.SchemaVersion != 13 {
		t.Fatalf("check after migration: %v\n%s", err, dump(rep))
	}

	list := func(owner string, st a2a.TaskState, size int) (ids []string, total int) {
		q := tasks.ListQuery{OwnerID: owner, State: st, PageSize: size}
		for {
			page, err := db.ListTasks(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			for _, tk := range page.Tasks {
				ids = append(ids, tk.ID)
			}
			total = page.Total
			if page.Next == nil {
				return ids, total
			}
			q.After = page.Next
		}
	}
	for _, size := range []int{1, 3, 10} {
		if got, total := list("", "", size); !slices.Equal(got, wantAll) || total != wantTotal {
			t.Errorf("every task, pages of %d: %v (total %d), want %v (total %d)", size, got, total, wantAll, wantTotal)
		}
		for owner, want := range wantByOwner {
			if got, total := list(owner, "", size); !slices.Equal(got, want) || total != len(want) {
				t.Errorf("the tasks of %s, pages of %d: %v (total %d), want %v", owner, size, got, total, want)
			}
		}
		for st, want := range wantByState {
			if got, total := list("", st, size); !slices.Equal(got, want) || total != len(want) {
				t.Errorf("%s, pages of %d: %v (total %d), want %v", st, size, got, total, want)
			}
		}
	}
	st, err := db.Stats()
	if err != nil || st.Tasks != wantTotal || !maps.Equal(st.TasksByState, wantByCount) {
		t.Fatalf("stats: %d tasks, %v by state, want %d, %v (%v)", st.Tasks, st.TasksByState, wantTotal, wantByCount, err)
	}
	if st.OldestWaiting == nil || st.OldestWaiting.ID != w.waiting.ID || st.OldestWaiting.OwnerID != w.alice.ID {
		t.Fatalf("oldest waiting: %+v, want %s of %s", st.OldestWaiting, w.waiting.ID, w.alice.ID)
	}
	for agent, want := range wantPosts {
		var got []string
		after := ""
		for {
			ts, next, err := db.PostsBy(ctx, agent, after, 1)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range ts {
				got = append(got, p.ID)
			}
			if next == "" {
				break
			}
			after = next
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("posts of %s: %v, want %v", agent, got, want)
		}
	}
}
