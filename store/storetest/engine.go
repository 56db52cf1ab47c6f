package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/storage"
)

// The seam's conformance (package storage): what every store's primitives
// must do, on kinds no store maps, so that a new kind runs on every store
// without code in any. The commands (package commands) run on these
// primitives and on the kinds each store maps; the rest of the suite
// tests them through the domain's services.

// note is a test kind: an owner's note on a topic, with a score.
type note struct {
	Owner string `json:"owner"`
	ID    string `json:"id"`
	Topic string `json:"topic"`
	Score int    `json:"score"`
}

var (
	notes = storage.NewKind("storetest.note", func(n *note) storage.Key { return storage.K(n.Owner, n.ID) }, storage.Codec[note]{
		Encode: func(n *note) ([]byte, error) { return json.Marshal(n) },
		Decode: func(_ storage.Key, v []byte) (note, error) {
			var n note
			err := json.Unmarshal(v, &n)
			return n, err
		},
	}).Owned(func(n *note) string { return n.Owner })
	// notesByTopic counts each topic's notes.
	notesByTopic = notes.Index("storetest.note.topic", func(n *note) (storage.Key, bool) { return storage.K(n.Topic), true }).Counted()
	// notesHigh lists the notes scored 10 or more, by score.
	notesHigh = notes.Index("storetest.note.high", func(n *note) (storage.Key, bool) {
		return storage.K(storage.Uint(uint64(n.Score))), n.Score >= 10
	})
	// topics are the topics, each under its name (a key of one part, as
	// the notes' leading part in notesByTopic).
	topics = storage.NewKind("storetest.topic", func(t *topic) storage.Key { return storage.K(t.Name) }, storage.Codec[topic]{
		Encode: func(t *topic) ([]byte, error) { return []byte(t.Name), nil },
		Decode: func(k storage.Key, _ []byte) (topic, error) { return topic{Name: k[0]}, nil },
	})
)

type topic struct{ Name string }

// putNotes writes ns, new, in one command.
func putNotes(t *testing.T, e storage.Engine, ns ...note) {
	t.Helper()
	err := e.Run(context.Background(), storage.Command{Name: "storetest", Load: func(storage.Loader) error { return nil },
		Decide: func() (*storage.Writes, error) {
			w := &storage.Writes{}
			for i := range ns {
				storage.Put(w, notes, nil, &ns[i])
			}
			return w, nil
		}})
	if err != nil {
		t.Fatalf("put notes: %v", err)
	}
}

// getNote reads one note (nil when none) in a read.
func getNote(t *testing.T, e storage.Engine, owner, id string) *note {
	t.Helper()
	var n *note
	if err := e.View(context.Background(), "storetest", func(l storage.Loader) error {
		storage.One(l, notes, storage.K(owner, id), storage.Read, &n)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// viewRange reads a range of ix in a read.
func viewRange(t *testing.T, e storage.Engine, ix *storage.Index[note], prefix storage.Key, limit int, reverse bool) []note {
	t.Helper()
	var out []note
	if err := e.View(context.Background(), "storetest", func(l storage.Loader) error {
		l.Range(storage.Range{Index: ix, Prefix: prefix, Of: storage.NoRef, Limit: limit, Reverse: reverse, Dst: &out})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func noteIDs(ns []note) string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = n.ID
	}
	return strings.Join(out, ",")
}

// testEngine: records by key and by owner, ranges of keys and of indexes
// (bounded, reversed, keys only, under another load's keys), counted and
// partial indexes kept through puts and deletes, plan counters, events,
// and a refusal that writes nothing.
func testEngine(t *testing.T, open Opener) {
	s := open(t)
	ctx := context.Background()
	putNotes(t, s,
		note{Owner: "ann", ID: "1", Topic: "go", Score: 3},
		note{Owner: "ann", ID: "2", Topic: "sql", Score: 12},
		note{Owner: "ann", ID: "3", Topic: "go", Score: 15},
		note{Owner: "bob", ID: "1", Topic: "go\x00zero", Score: 1},
	)

	if n := getNote(t, s, "ann", "2"); n == nil || n.Score != 12 {
		t.Fatalf("get ann/2 = %+v", n)
	}
	if n := getNote(t, s, "ann", "9"); n != nil {
		t.Fatalf("get a missing note = %+v, want none", n)
	}
	var mine, theirs *note
	if err := s.View(ctx, "storetest", func(l storage.Loader) error {
		storage.Owned(l, notes, storage.K("ann", "1"), "ann", storage.Read, &mine)
		storage.Owned(l, notes, storage.K("ann", "1"), "bob", storage.Read, &theirs)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if mine == nil || theirs != nil {
		t.Fatalf("owned get: the owner's = %+v, another's = %+v (want the note, then none)", mine, theirs)
	}

	for _, tc := range []struct {
		name    string
		ix      *storage.Index[note]
		prefix  storage.Key
		limit   int
		reverse bool
		want    string
	}{
		{"an owner's", notes.Keys(), storage.K("ann"), 10, false, "1,2,3"},
		{"an owner's, bounded", notes.Keys(), storage.K("ann"), 2, false, "1,2"},
		{"an owner's, reversed", notes.Keys(), storage.K("ann"), 2, true, "3,2"},
		{"a topic's", notesByTopic, storage.K("go"), 10, false, "1,3"},
		{"a part that holds a zero byte", notesByTopic, storage.K("go\x00zero"), 10, false, "1"},
		{"no part: every entry", notesByTopic, nil, 10, false, "1,3,1,2"},
		{"a partial index", notesHigh, nil, 10, false, "2,3"},
		{"nothing", notesByTopic, storage.K("rust"), 10, false, ""},
	} {
		if got := noteIDs(viewRange(t, s, tc.ix, tc.prefix, tc.limit, tc.reverse)); got != tc.want {
			t.Errorf("range %s = %q, want %q", tc.name, got, tc.want)
		}
	}

	var byKeys []note
	if err := s.View(ctx, "storetest", func(l storage.Loader) error {
		storage.All(l, notes, []storage.Key{storage.K("bob", "1"), storage.K("ann", "9"), storage.K("ann", "2"), storage.K("ann", "2")},
			storage.Read, &byKeys)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got := noteIDs(byKeys); got != "2,1" || byKeys[1].Owner != "bob" {
		t.Fatalf("notes by keys = %q, want ann/2 then bob/1 (key order, each once, none for a missing key)", got)
	}

	var keys []storage.Key
	var goCount, sqlCount int
	if err := s.View(ctx, "storetest", func(l storage.Loader) error {
		storage.Entries(l, notesByTopic, storage.K("go"), 10, &keys)
		l.Count(notesByTopic, storage.K("go"), &goCount)
		l.Count(notesByTopic, storage.K("sql"), &sqlCount)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(keys) != "[[go ann 1] [go ann 3]]" || goCount != 2 || sqlCount != 1 {
		t.Fatalf("entries of go = %q, counts go %d sql %d; want [[go ann 1] [go ann 3]], 2, 1", keys, goCount, sqlCount)
	}

	// A move: ann/1 to sql at 20 (into the partial index); ann/3 deleted
	// (out of both); a counter and an event, in one command.
	before := logLen(t, s)
	var pending *storage.Writes
	err := s.Run(ctx, storage.Command{Name: "storetest", Load: func(l storage.Loader) error {
		var a1, a3 *note
		storage.One(l, notes, storage.K("ann", "1"), storage.Lock, &a1)
		storage.One(l, notes, storage.K("ann", "3"), storage.Lock, &a3)
		if err := l.Flush(); err != nil {
			return err
		}
		if a1 == nil || a3 == nil {
			return errors.New("notes ann/1 and ann/3 are not there")
		}
		moved := *a1
		moved.Topic, moved.Score = "sql", 20
		pending = &storage.Writes{}
		storage.Put(pending, notes, a1, &moved)
		storage.Delete(pending, notes, a3)
		pending.Add("storetest.moves", 2)
		pending.Log(time.UnixMilli(1000).UTC(), changelog.Event{Kind: changelog.Kind("storetest.moved"), ID: "ann/1", At: time.UnixMilli(1000).UTC()})
		return nil
	}, Decide: func() (*storage.Writes, error) { return pending, nil }})
	if err != nil {
		t.Fatal(err)
	}
	if got := noteIDs(viewRange(t, s, notesByTopic, storage.K("go"), 10, false)); got != "" {
		t.Errorf("go after the move = %q, want none", got)
	}
	if got := noteIDs(viewRange(t, s, notesHigh, nil, 10, false)); got != "2,1" {
		t.Errorf("the partial index after the move = %q, want 2,1 (by score)", got)
	}
	var moves int64
	if err := s.View(ctx, "storetest", func(l storage.Loader) error {
		l.Count(notesByTopic, storage.K("go"), &goCount)
		l.Count(notesByTopic, storage.K("sql"), &sqlCount)
		l.Counter("storetest.moves", &moves)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if goCount != 0 || sqlCount != 2 || moves != 2 {
		t.Errorf("after the move: go %d, sql %d, moves %d; want 0, 2, 2", goCount, sqlCount, moves)
	}
	if n := logLen(t, s); n != before+1 {
		t.Errorf("the log holds %d events, want %d", n, before+1)
	}

	// A refusal writes nothing, whatever its plan had queued.
	refused := errors.New("storetest: refused")
	err = s.Run(ctx, storage.Command{Name: "storetest", Load: func(storage.Loader) error { return nil },
		Decide: func() (*storage.Writes, error) { return nil, refused }})
	if !errors.Is(err, refused) {
		t.Fatalf("a refusal = %v, want it as it was", err)
	}
	// A put of a new record over one that exists fails on every store.
	if err := s.Run(ctx, storage.Command{Name: "storetest", Load: func(storage.Loader) error { return nil },
		Decide: func() (*storage.Writes, error) {
			w := &storage.Writes{}
			storage.Put(w, notes, nil, &note{Owner: "ann", ID: "2", Topic: "x"})
			return w, nil
		}}); err == nil {
		t.Error("a new note over ann/2 was written")
	}
	if n := getNote(t, s, "ann", "2"); n == nil || n.Topic != "sql" {
		t.Errorf("ann/2 after the refusals = %+v, want it unchanged", n)
	}
}

// logLen is how many events the log holds.
func logLen(t *testing.T, s Store) int {
	t.Helper()
	return len(readAll(t, s, changelog.Position{}, 1000))
}

// testEngineUnder: a range under another load's keys, in the same batch
// (one round trip on PostgreSQL), bounded in all.
func testEngineUnder(t *testing.T, open Opener) {
	s := open(t)
	ctx := context.Background()
	putNotes(t, s,
		note{Owner: "ann", ID: "1", Topic: "go"}, note{Owner: "ann", ID: "2", Topic: "sql"},
		note{Owner: "bob", ID: "1", Topic: "go"}, note{Owner: "cat", ID: "1", Topic: "rust"},
	)
	if err := s.Run(ctx, storage.Command{Name: "storetest", Load: func(storage.Loader) error { return nil },
		Decide: func() (*storage.Writes, error) {
			w := &storage.Writes{}
			for _, name := range []string{"go", "sql", "zig"} {
				storage.Put(w, topics, nil, &topic{Name: name})
			}
			return w, nil
		}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		limit int
		want  string
	}{{10, "ann/1,bob/1,ann/2"}, {2, "ann/1,bob/1"}} {
		var ts []topic
		var ns []note
		if err := s.View(ctx, "storetest", func(l storage.Loader) error {
			ref := storage.Many(l, topics.Keys(), nil, 10, storage.Read, &ts)
			storage.Under(l, notesByTopic, ref, tc.limit, storage.Read, &ns)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		got := make([]string, len(ns))
		for i, n := range ns {
			got[i] = n.Owner + "/" + n.ID
		}
		if strings.Join(got, ",") != tc.want || len(ts) != 3 {
			t.Errorf("notes under the topics (limit %d) = %v (of %d topics), want %s", tc.limit, got, len(ts), tc.want)
		}
	}
}

// testEngineLocks: a read-modify-write under Lock by callers on both
// handles loses no update, and an advisory lock serializes what it names.
func testEngineLocks(t *testing.T, pair PairOpener) {
	a, b := pair(t)
	putNotes(t, a, note{Owner: "ann", ID: "n", Topic: "count"})
	const n = 24
	errs := make(chan error, n)
	for i := range n {
		go func() {
			s := []Store{a, b}[i%2]
			var cur *note
			errs <- s.Run(context.Background(), storage.Command{Name: "storetest", Load: func(l storage.Loader) error {
				l.Lock("storetest")
				storage.One(l, notes, storage.K("ann", "n"), storage.Lock, &cur)
				return nil
			}, Decide: func() (*storage.Writes, error) {
				if cur == nil {
					return nil, errors.New("the note is gone")
				}
				next := *cur
				next.Score++
				w := &storage.Writes{}
				storage.Put(w, notes, cur, &next)
				return w, nil
			}})
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if got := getNote(t, b, "ann", "n"); got == nil || got.Score != n {
		t.Fatalf("after %d increments the score is %+v, want %d", n, got, n)
	}
	if got := getNote(t, a, "ann", "n"); got.Score != n {
		t.Fatalf("the other handle reads %d", got.Score)
	}
}
