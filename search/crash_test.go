package search

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/knowledge"
)

// envCrashChild, set, makes TestKilledFollower the process that is
// killed: its value is the data directory, then the phase to die at.
const envCrashChild = "KFA_SEARCH_CRASH_CHILD"

// TestKilledFollower: a follower killed (the process exits at once, no
// Close, no flush) between a commit and the index, or after indexing and
// before its position reached the disk, catches up when the index opens
// again, and applies each event once: the reply is found, every document
// is there once, and the discussions are counted once.
func TestKilledFollower(t *testing.T) {
	if dir := os.Getenv(envCrashChild); dir != "" {
		crashChild(t, dir, os.Getenv(envCrashChild+"_PHASE"))
		return
	}
	for _, phase := range []string{"before", "after"} {
		t.Run("killed "+phase+" indexing", func(t *testing.T) {
			dir := t.TempDir()
			// The samples, and a question asked and answered once, while
			// an index followed.
			seed := openStore(t, dir)
			if _, err := knowledge.NewService(seed, now).Import(context.Background(), stringsReader(samples(t)), knowledge.ImportOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := seed.Close(); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(os.Args[0], "-test.run=^TestKilledFollower$", "-test.count=1")
			cmd.Env = append(os.Environ(), envCrashChild+"="+dir, envCrashChild+"_PHASE="+phase)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != crashCode {
				t.Fatalf("the child was not killed where it should be (%v):\n%s", err, out)
			}

			f := &fixture{dir: dir, db: openStore(t, dir)}
			f.svc = knowledge.NewService(f.db, now)
			f.open(t)
			ctx := context.Background()
			hits := searchQ(t, f.idx, knowledge.Query{Text: "how do I take a hot backup of a bbolt file", Limit: 5}).Hits
			if len(hits) == 0 || hits[0].Status != knowledge.StatusAnswered || hits[0].Snippet != "Use tx.WriteTo inside db.View." {
				t.Fatalf("after the restart: %+v, want the answered discussion first", hits)
			}
			st, err := f.idx.Status(ctx)
			if err != nil {
				t.Fatal(err)
			}
			docs, err := f.idx.rec.DocCount()
			if err != nil {
				t.Fatal(err)
			}
			if st.Discussions != 1 || st.Records != 78 || docs != 79 {
				t.Fatalf("status %+v with %d documents; want 78 records and 1 discussion, each once", st, docs)
			}
			ls, err := f.db.LogState(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if f.idx.Applied() != ls.Last {
				t.Fatalf("applied %s, the log at %s", f.idx.Applied(), ls.Last)
			}
		})
	}
}

// crashCode is the exit code of the killed child.
const crashCode = 3

// crashChild follows the log with an index over dir, asks and answers a
// question, and exits at once when the index reaches the reply's event
// at phase.
func crashChild(t *testing.T, dir, phase string) {
	db := openStore(t, dir)
	idx, err := Open(context.Background(), Options{
		Dir: filepath.Join(dir, "index"), Changes: db, Records: db, Discussions: db, Cursors: db, PublicURL: "http://kfa.test",
		applyHook: func(at string, evs []changelog.Event) error {
			for _, e := range evs {
				if e.Kind == changelog.DiscussionReplied && at == phase {
					os.Exit(crashCode) // no Close, no flush: a kill
				}
			}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	idx.Start(context.Background())
	f := &fixture{dir: dir, db: db, idx: idx}
	c := newCommunity(t, f)
	id := c.ask(t, "How do I take a hot backup of a bbolt file?", "")
	c.reply(t, c.other, id, "Use tx.WriteTo inside db.View.")
	<-time.After(time.Minute) // a guard: the follower ends the process long before
	t.Fatal("the follower never reached the reply")
}
