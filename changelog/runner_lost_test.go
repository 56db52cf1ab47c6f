package changelog

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// lose drops the newest n events, as a database promoted from a standby
// that had not received them does: the next events take their positions
// again.
func (l *memLog) lose(n int) {
	l.mu.Lock()
	l.evs = l.evs[:len(l.evs)-n]
	l.mu.Unlock()
}

// forgetful is a recorder that can forget.
type forgetful struct {
	*recorder
	forgot int
}

func (f *forgetful) Forget(context.Context) { f.forgot++ }

// TestRunnerLostEvents: the log loses the two newest events a follower
// had applied, and new ones take their positions. The follower says so
// in the log, as an error; one that can rebuild rebuilds, any other
// forgets what it can and goes on from the log's head, and applies the
// events after it (a follower reading on from its position would skip
// them: they are not after it). The Fanout of a process's in-memory
// followers passes the Forget on, and its parts' positions start over.
func TestRunnerLostEvents(t *testing.T) {
	for _, tc := range []struct {
		name      string
		follower  func(*recorder) Follower
		want      string
		wantInLog string
	}{
		{"goes on from the head", func(r *recorder) Follower { return r }, "a,b,c,d,f,g", "goes on from the log's head"},
		{"forgets", func(r *recorder) Follower { return &forgetful{recorder: r} }, "a,b,c,d,f,g", "goes on from the log's head"},
		{"in a fanout", func(r *recorder) Follower { return NewFanout(&forgetful{recorder: r}) }, "a,b,c,d,f,g", "goes on from the log's head"},
		{"rebuilds", func(r *recorder) Follower { return resettable{r} }, "a,b,c,d,f,g", "rebuilding this follower"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := &memLog{}
			rec := &recorder{}
			var reason string
			rec.reset = func(r string) (Position, error) {
				reason = r
				return Position{Seq: 3}, nil // rebuilt from the store: a, b and e
			}
			f := tc.follower(rec)
			var logs bytes.Buffer
			r := startRunner(t, l, f, RunnerOptions{Name: "test", Tick: time.Hour,
				Log: slog.New(slog.NewTextHandler(&logs, nil))})
			if err := r.WaitPast(waitCtx(t), l.append("a", "b", "c", "d")); err != nil {
				t.Fatal(err)
			}
			l.lose(2)     // c and d
			l.append("e") // at c's position, before the follower's
			if err := r.Sync(waitCtx(t)); err != nil {
				t.Fatal(err)
			}
			if r.Position() != (Position{Seq: 3}) {
				t.Fatalf("after the loss the follower is at %s, want the head, 3", r.Position())
			}
			if err := r.WaitPast(waitCtx(t), l.append("f", "g")); err != nil {
				t.Fatal(err)
			}
			r.Stop()
			if got := rec.got(); got != tc.want {
				t.Fatalf("applied %q, want %q", got, tc.want)
			}
			out := logs.String()
			if !strings.Contains(out, "level=ERROR") || !strings.Contains(out, tc.wantInLog) || !strings.Contains(out, "lost committed writes") {
				t.Fatalf("the loss was not logged as an error:\n%s", out)
			}
			switch f := f.(type) {
			case resettable:
				if !strings.Contains(reason, "no longer in the log") {
					t.Fatalf("rebuilt for %q", reason)
				}
			case *forgetful:
				if f.forgot != 1 {
					t.Fatalf("forgot %d times, want 1", f.forgot)
				}
			case *Fanout:
				if f.parts[0].(*forgetful).forgot != 1 {
					t.Fatal("the fanout did not pass the Forget on")
				}
			}
		})
	}
}

// TestRunnerSameEventNoLoss: a follower whose event is where it read it,
// the same, reads on; so does one at a trimmed event.
func TestRunnerSameEventNoLoss(t *testing.T) {
	l := &memLog{}
	rec := &recorder{}
	var logs bytes.Buffer
	r := startRunner(t, l, rec, RunnerOptions{Name: "test", Tick: time.Hour, Log: slog.New(slog.NewTextHandler(&logs, nil))})
	if err := r.WaitPast(waitCtx(t), l.append("a", "b")); err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	l.trimmed = Position{Seq: 2}
	l.evs = l.evs[2:]
	l.mu.Unlock()
	if err := r.WaitPast(waitCtx(t), l.append("c")); err != nil {
		t.Fatal(err)
	}
	if got := rec.got(); got != "a,b,c" || strings.Contains(logs.String(), "lost") {
		t.Fatalf("applied %q; log:\n%s", got, logs.String())
	}
}
