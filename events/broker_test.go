package events

import (
	"errors"
	"testing"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/tasks"
)

func TestPublishReachesTheTasksSubscribers(t *testing.T) {
	b := NewBroker(Limits{})
	s1, _ := b.Subscribe("t1", "alice")
	s2, _ := b.Subscribe("t1", "alice")
	other, _ := b.Subscribe("t2", "bob")
	b.Publish(tasks.Task{ID: "t1", State: a2a.TaskStateCompleted})
	for i, s := range []*Sub{s1, s2} {
		select {
		case got := <-s.C():
			if got.ID != "t1" || got.State != a2a.TaskStateCompleted {
				t.Fatalf("subscriber %d got %+v", i, got)
			}
		default:
			t.Fatalf("subscriber %d got nothing", i)
		}
	}
	select {
	case got := <-other.C():
		t.Fatalf("a subscriber of another task got %+v", got)
	default:
	}
	if b.Open() != 3 {
		t.Fatalf("open %d", b.Open())
	}
	s1.Close()
	s1.Close() // twice is fine
	if _, ok := <-s1.C(); ok || b.Open() != 2 {
		t.Fatalf("after close: open %d", b.Open())
	}
}

func TestLimits(t *testing.T) {
	for _, tc := range []struct {
		name   string
		limits Limits
		subs   []string // agent of each subscription, in order
		fails  int      // index of the first refused one (-1: none)
	}{
		{"per agent", Limits{PerAgent: 2}, []string{"a", "a", "b", "a"}, 3},
		{"total", Limits{Total: 3}, []string{"a", "b", "c", "d"}, 3},
		{"none", Limits{}, []string{"a", "a", "a", "a"}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := NewBroker(tc.limits)
			for i, agent := range tc.subs {
				_, err := b.Subscribe("t", agent)
				if (i == tc.fails) != errors.Is(err, ErrTooManyStreams) {
					t.Fatalf("subscription %d: %v", i, err)
				}
			}
		})
	}
}

// A subscriber that does not read is dropped, never waited for: Publish
// runs on the commit path.
func TestStuckSubscriberIsDropped(t *testing.T) {
	b := NewBroker(Limits{})
	s, _ := b.Subscribe("t", "a")
	for range subBuffer + 1 {
		b.Publish(tasks.Task{ID: "t"})
	}
	n := 0
	for range s.C() {
		n++
	}
	if n != subBuffer || b.Open() != 0 {
		t.Fatalf("read %d of a full buffer, %d open", n, b.Open())
	}
}

// Watch tells when a task has a subscriber, and only for that task.
func TestWatch(t *testing.T) {
	b := NewBroker(Limits{})
	w := b.Watch("t1")
	if _, err := b.Subscribe("t2", "a"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w:
		t.Fatal("a subscriber of another task woke the watch")
	default:
	}
	if _, err := b.Subscribe("t1", "a"); err != nil {
		t.Fatal(err)
	}
	<-w
	<-b.Watch("t1") // already subscribed: at once
	late := b.Watch("t3")
	b.Close()
	<-late
	if _, err := b.Subscribe("t3", "a"); !errors.Is(err, ErrClosed) {
		t.Fatalf("subscribe after close: %v", err)
	}
}
