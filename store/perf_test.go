package store_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/store"
	"github.com/kfa-project/kfa/tasks"
)

// The tests of what the performance work changed in the store: the bulk
// loader, the binary task format and its migration, the credential cache
// and group commit.

var t0 = time.Date(2026, 12, 2, 10, 30, 0, 0, time.UTC)

func testAsks(owners []agents.Agent, n int) []tasks.CreateAsk {
	var out []tasks.CreateAsk
	for i := range n {
		a := owners[i%len(owners)]
		text := fmt.Sprintf("question %d", i)
		in := tasks.AskInput{
			Asker:    tasks.Asker{ID: a.ID, Name: a.Name},
			Message:  a2a.Message{MessageID: fmt.Sprintf("m%d", i), Role: a2a.RoleUser, Parts: []a2a.Part{{Text: &text}}},
			Question: text,
		}
		if i%5 == 4 { // every fifth ask joins the previous discussion
			in.JoinDiscussionID = out[i-1].Task.DiscussionID
		}
		out = append(out, tasks.NewAsk(in, t0.Add(time.Duration(i)*time.Millisecond), 0))
	}
	return out
}

func testAgentsIn(t testing.TB, db *store.DB, n int) []agents.Agent {
	t.Helper()
	var out []agents.Agent
	for i := range n {
		a := agents.Agent{ID: fmt.Sprintf("01JD00000000000000000000%02d", i), Name: fmt.Sprint("agent", i),
			Scopes: []agents.Scope{agents.ScopePost}, CreatedAt: t0}
		c := agents.Credential{Digest: agents.DigestOf(fmt.Sprint("token", i)), AgentID: a.ID, CreatedAt: t0}
		if err := db.CreateAgent(context.Background(), agents.Create{Agent: a, Credential: c}); err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	return out
}

// The bulk loader stores exactly what the same asks store one by one:
// records, indexes, counters, message ids, discussions.
func TestLoadAsksStoresWhatAsksStore(t *testing.T) {
	ctx := context.Background()
	asked, loaded := openTemp(t), openTemp(t)
	owners := testAgentsIn(t, asked, 3)
	testAgentsIn(t, loaded, 3)
	asks := testAsks(owners, 40)
	for _, c := range asks {
		if res, err := asked.CreateAsk(ctx, c); err != nil || !res.Created {
			t.Fatalf("ask: created=%v %v", res.Created, err)
		}
	}
	if err := loaded.LoadAsks(asks[:25]); err != nil {
		t.Fatal(err)
	}
	if err := loaded.LoadAsks(asks[25:]); err != nil {
		t.Fatal(err)
	}
	a, err := asked.ContentDigestForTest()
	if err != nil {
		t.Fatal(err)
	}
	l, err := loaded.ContentDigestForTest()
	if err != nil {
		t.Fatal(err)
	}
	if a != l {
		t.Fatal("the bulk-loaded file differs from the asked one")
	}
	// A retried message id fails the whole load.
	before, err := loaded.ContentDigestForTest()
	if err != nil {
		t.Fatal(err)
	}
	more := testAsks(owners, 41)[40:]
	more = append(more, asks[0])
	if err := loaded.LoadAsks(more); err == nil || !strings.Contains(err.Error(), "already taken") {
		t.Fatalf("load with a taken message id: %v", err)
	}
	if after, err := loaded.ContentDigestForTest(); err != nil || after != before {
		t.Fatalf("a failed load left writes behind (%v)", err)
	}
}

// Tasks written in format 1 (JSON) are read, and migration 2 rewrites them
// in format 2 without changing what they are.
func TestFormat1TasksMigrate(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), store.FileName)
	db, err := store.Open(path, store.Options{BatchDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	owners := testAgentsIn(t, db, 2)
	asks := testAsks(owners, 3)
	if err := db.LoadAsks(asks); err != nil {
		t.Fatal(err)
	}
	ds := discussions.NewService(db, discussions.Limits{}, []byte("s"), func() time.Time { return t0.Add(time.Hour) })
	res, err := ds.Reply(ctx, discussions.Author{ID: owners[1].ID, Name: owners[1].Name}, asks[0].Task.DiscussionID, "an answer")
	if err != nil || len(res.CompletedTaskIDs) != 1 {
		t.Fatalf("reply: %+v %v", res, err)
	}
	var want []tasks.Task
	for _, c := range asks {
		tk, err := db.GetTask(ctx, "", c.Task.ID)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, tk)
		if err := db.PutTaskFormat1ForTest(tk); err != nil {
			t.Fatal(err)
		}
		if f, err := db.TaskFormatForTest(tk.ID); err != nil || f != '{' {
			t.Fatalf("format %q (%v)", f, err)
		}
		// Format 1 reads as it is.
		got, err := db.GetTask(ctx, "", tk.ID)
		if err != nil || got.State != tk.State || len(got.History) != len(tk.History) {
			t.Fatalf("format 1 read: %+v %v", got, err)
		}
	}
	if err := db.SetSchemaVersionForTest(1); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	db, err = store.Open(path, store.Options{BatchDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, w := range want {
		if f, err := db.TaskFormatForTest(w.ID); err != nil || f != 2 {
			t.Fatalf("task %s still in format %d after the migration (%v)", w.ID, f, err)
		}
		got, err := db.GetTask(ctx, "", w.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.State != w.State || !got.StatusTime.Equal(w.StatusTime) || len(got.History) != len(w.History) ||
			len(got.Artifacts) != len(w.Artifacts) || (w.StatusMessage == nil) != (got.StatusMessage == nil) {
			t.Fatalf("migrated task differs:\n got %+v\nwant %+v", got, w)
		}
	}
}

// A cached credential stops working the moment a revoke or a rotation
// returns, and a rotation's grace period still applies.
func TestCredentialCacheFollowsWrites(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	now := t0
	svc := agents.NewService(db, func() time.Time { return now })
	alice, err := svc.Create(ctx, "alice", []agents.Scope{agents.ScopePost})
	if err != nil {
		t.Fatal(err)
	}
	auth := func(tok string) error { _, err := svc.Authenticate(ctx, tok); return err }
	for range 3 { // warm the cache
		if err := auth(alice.Token); err != nil {
			t.Fatal(err)
		}
	}
	rotated, err := svc.Rotate(ctx, alice.Agent.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := auth(alice.Token); !errors.Is(err, agents.ErrInvalidToken) {
		t.Fatalf("old token after rotation: %v", err)
	}
	if err := auth(rotated.Token); err != nil {
		t.Fatalf("new token: %v", err)
	}
	graced, err := svc.Rotate(ctx, alice.Agent.ID, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := auth(rotated.Token); err != nil {
		t.Fatalf("old token within the grace period: %v", err)
	}
	now = now.Add(2 * time.Minute)
	if err := auth(rotated.Token); !errors.Is(err, agents.ErrInvalidToken) {
		t.Fatalf("old token after the grace period: %v", err)
	}
	if err := auth(graced.Token); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Revoke(ctx, alice.Agent.ID); err != nil {
		t.Fatal(err)
	}
	if err := auth(graced.Token); !errors.Is(err, agents.ErrInvalidToken) {
		t.Fatalf("token after revoke: %v", err)
	}
}

// Concurrent authentications racing a revoke never bring the revoked
// token back once the revoke has returned.
func TestCredentialCacheRace(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	svc := agents.NewService(db, time.Now)
	a, err := svc.Create(ctx, "alice", []agents.Scope{agents.ScopePost})
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
					_, _ = svc.Authenticate(ctx, a.Token)
				}
			}
		}()
	}
	if _, err := svc.Revoke(ctx, a.Agent.ID); err != nil {
		t.Fatal(err)
	}
	for range 1000 {
		if _, err := svc.Authenticate(ctx, a.Token); !errors.Is(err, agents.ErrInvalidToken) {
			t.Fatalf("revoked token authenticated: %v", err)
		}
	}
	close(stop)
	wg.Wait()
}

// Group commit: concurrent writes share transactions; one that fails or
// panics gets its own error and takes none of the others down.
func TestGroupCommitIsolatesFailures(t *testing.T) {
	db := openTemp(t)
	bucket := []byte("groupcommit-test")
	if err := db.WriteForTest(func(tx *bolt.Tx) error { _, err := tx.CreateBucketIfNotExists(bucket); return err }); err != nil {
		t.Fatal(err)
	}
	errOdd := errors.New("odd")
	var wg sync.WaitGroup
	errs := make([]error, 200)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = db.WriteForTest(func(tx *bolt.Tx) error {
				if err := tx.Bucket(bucket).Put([]byte(fmt.Sprint(i)), []byte("v")); err != nil {
					return err
				}
				switch {
				case i%7 == 3:
					panic("boom")
				case i%2 == 1:
					return errOdd
				}
				return nil
			})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		switch {
		case i%7 == 3:
			if err == nil || !strings.Contains(err.Error(), "panic") {
				t.Fatalf("write %d panicked, got %v", i, err)
			}
		case i%2 == 1:
			if !errors.Is(err, errOdd) {
				t.Fatalf("write %d: %v, want its own error", i, err)
			}
		case err != nil:
			t.Fatalf("write %d: %v", i, err)
		}
	}
	err := db.WriteForTest(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucket)
		for i := range errs {
			got := b.Get([]byte(fmt.Sprint(i))) != nil
			if want := i%7 != 3 && i%2 == 0; got != want {
				return fmt.Errorf("write %d stored=%v, want %v", i, got, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	if err := db.WriteForTest(func(*bolt.Tx) error { return nil }); err == nil {
		t.Fatal("a write after Close succeeded")
	}
}

// A bulk-loaded file passes kfa check.
func TestLoadAsksPassesCheck(t *testing.T) {
	db := openTemp(t)
	owners := testAgentsIn(t, db, 4)
	if err := db.LoadAsks(testAsks(owners, 60)); err != nil {
		t.Fatal(err)
	}
	rep, err := db.Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Violations) > 0 {
		t.Fatalf("kfa check after a bulk load: %+v", rep.Violations)
	}
}
