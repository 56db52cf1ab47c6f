package store_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/store"
	"github.com/kfa-project/kfa/store/storetest"
	"github.com/kfa-project/kfa/tasks"
)

func openTemp(t testing.TB) *store.DB {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), store.FileName), store.Options{BatchDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// TestConformance runs the shared store suite against bbolt, and kfa
// check on every store it leaves behind.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Store { return checkAtCleanup(t, openTemp(t)) })
}

// TestConcurrent races callers against the limits on bbolt: one process
// holds the file, so both handles are the same store.
func TestConcurrent(t *testing.T) {
	storetest.RunConcurrent(t, func(t *testing.T) (storetest.Store, storetest.Store) {
		s := checkAtCleanup(t, openTemp(t))
		return s, s
	})
}

func TestOpenLockedFileFails(t *testing.T) {
	path := filepath.Join(t.TempDir(), store.FileName)
	db, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, err = store.Open(path, store.Options{LockTimeout: 100 * time.Millisecond})
	if !errors.Is(err, store.ErrLocked) {
		t.Fatalf("second open: %v, want ErrLocked", err)
	}
	if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "kfa serve") {
		t.Fatalf("error should name the file and the likely holder: %v", err)
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), store.FileName)
	db, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SetSchemaVersionForTest(store.SchemaVersion() + 1); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	_, err = store.Open(path, store.Options{})
	if !errors.Is(err, store.ErrTooNew) || !strings.Contains(err.Error(), "newer kfa") {
		t.Fatalf("open newer file: %v", err)
	}
}

func TestReopenKeepsDataAndSecret(t *testing.T) {
	path := filepath.Join(t.TempDir(), store.FileName)
	db, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	secret := db.Secret()
	svc := agents.NewService(db, time.Now)
	c, err := svc.Create(context.Background(), "alice", []agents.Scope{agents.ScopeRead})
	if err != nil {
		t.Fatal(err)
	}
	before, err := db.Digest()
	if err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	db, err = store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	after, err := db.Digest()
	if err != nil {
		t.Fatal(err)
	}
	if before != after || string(db.Secret()) != string(secret) || len(secret) != 32 {
		t.Fatal("reopening changed the file or its secret")
	}
	if _, err := agents.NewService(db, time.Now).Authenticate(context.Background(), c.Token); err != nil {
		t.Fatalf("token after reopen: %v", err)
	}
}

func TestReadsAndRefusalsWriteNothing(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	now := time.Now
	ag := agents.NewService(db, now)
	tk := tasks.NewService(db, tasks.Limits{MaxOpen: 1}, db.Secret(), now)
	ds := discussions.NewService(db, discussions.Limits{}, db.Secret(), now)
	c, _ := ag.Create(ctx, "alice", []agents.Scope{agents.ScopePost})
	text := "q"
	in := tasks.AskInput{Asker: tasks.Asker{ID: c.Agent.ID, Name: "alice"}, Question: "q",
		Message: a2a.Message{MessageID: "m1", Role: a2a.RoleUser, Parts: []a2a.Part{{Text: &text}}}}
	first, _, err := tk.Ask(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	_, _, _ = tk.Cancel(ctx, c.Agent.ID, first.ID) // leave one canceled task around
	in.Message.MessageID = "m2"
	if _, _, err := tk.Ask(ctx, in); err != nil {
		t.Fatal(err)
	}
	before, err := db.Digest()
	if err != nil {
		t.Fatal(err)
	}
	tooMany := in
	tooMany.Message.MessageID = "m3"
	badJoin := in
	badJoin.Message.MessageID = "m4"
	badJoin.JoinDiscussionID = "01JD0000000000000000000000"
	for name, op := range map[string]func() error{
		"get":             func() error { _, err := tk.Get(ctx, c.Agent.ID, first.ID); return err },
		"list":            func() error { _, err := tk.List(ctx, c.Agent.ID, tasks.ListParams{}); return err },
		"retry":           func() error { _, _, err := tk.Ask(ctx, in); return err },
		"cancel canceled": func() error { _, _, err := tk.Cancel(ctx, c.Agent.ID, first.ID); return err },
		"discussions":     func() error { _, err := ds.List(ctx, "", new(10), ""); return err },
		"inbox":           func() error { _, err := ds.Inbox(ctx, c.Agent.ID, false, new(10), ""); return err },
		"authenticate":    func() error { _, err := ag.Authenticate(ctx, c.Token); return err },
		"over max open":   func() error { _, _, err := tk.Ask(ctx, tooMany); return ignore(err) },
		"join unknown":    func() error { _, _, err := tk.Ask(ctx, badJoin); return ignore(err) },
		"reply unknown": func() error {
			_, err := ds.Reply(ctx, discussions.Author{ID: c.Agent.ID}, "01JD0000000000000000000000", "x")
			return ignore(err)
		},
		"cancel missing": func() error {
			_, _, err := tk.Cancel(ctx, c.Agent.ID, "01JD0000000000000000000000")
			return ignore(err)
		},
	} {
		if err := op(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if after, err := db.Digest(); err != nil || after != before {
			t.Fatalf("%s changed the store (%v)", name, err)
		}
	}
}

// ignore drops the expected refusal of an operation whose point is that
// it wrote nothing.
func ignore(error) error { return nil }
