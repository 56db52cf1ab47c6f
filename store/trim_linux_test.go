//go:build linux

package store

import (
	"bufio"
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/tasks"
)

// mappedKB is the resident size of the process's mappings of path, from
// /proc/self/smaps.
func mappedKB(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	kb, in := 0, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			in = len(fields) >= 6 && fields[5] == path
			continue
		}
		if in && fields[0] == "Rss:" {
			n, _ := strconv.Atoi(fields[1])
			kb += n
		}
	}
	return kb
}

// newAsk is an ask of a with message id msgID, made at.
func newAsk(a agents.Agent, msgID string, at time.Time) tasks.CreateAsk {
	text := "question " + msgID
	return tasks.NewAsk(tasks.AskInput{Asker: tasks.Asker{ID: a.ID, Name: a.Name}, Question: text,
		Message: a2a.Message{MessageID: msgID, Role: a2a.RoleUser, Parts: []a2a.Part{{Text: &text}}}}, at, 0)
}

// The file's pages a read mapped leave the process's RSS when the store
// drops them, and every read after finds the same data.
func TestDropMappedPages(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	tk := w.db
	// Enough data that the mapped part is clearly more than a few pages.
	for i := range 300 {
		if _, err := tk.CreateAsk(ctx, newAsk(w.bob, "m-trim-"+strconv.Itoa(i), w.waiting.CreatedAt.Add(time.Duration(i)*time.Second))); err != nil {
			t.Fatal(err)
		}
	}
	if rep, err := w.db.Check(ctx); err != nil || !rep.OK() { // reads every page
		t.Fatalf("check: %v\n%s", err, dump(rep))
	}
	before := mappedKB(t, w.db.Path())
	if before < 64 {
		t.Fatalf("only %d KiB of the file mapped after reading all of it", before)
	}
	if err := w.db.dropMappedPages(); err != nil {
		t.Fatal(err)
	}
	if after := mappedKB(t, w.db.Path()); after > before/4 {
		t.Fatalf("%d KiB mapped after the drop, %d before", after, before)
	}
	if rep, err := w.db.Check(ctx); err != nil || !rep.OK() {
		t.Fatalf("check after the drop: %v\n%s", err, dump(rep))
	}
}
