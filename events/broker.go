// Package events carries committed task transitions to the streams that
// wait on them: a small in-memory publish/subscribe keyed by task id. The
// broker follows the change log (Follower): a task.moved event, committed
// by this process or any other on the database, makes it read the task
// and publish it to the task's streams, and only when the task has one;
// an agent's revocation, or a rotation that ends its old credentials at
// once, ends the agent's streams. An event exists only for a transition
// that is durable, and no stream ever polls the store.
//
// Streams are bounded per agent and in total; a subscriber that cannot keep
// up is closed rather than allowed to block the follower.
package events

import (
	"errors"
	"sync"

	"github.com/kfa-project/kfa/tasks"
)

// Errors of Subscribe.
var (
	ErrTooManyStreams = errors.New("too many open streams")
	ErrClosed         = errors.New("the server is shutting down")
)

// Limits bound the open subscriptions. Zero means no bound.
type Limits struct {
	PerAgent int
	Total    int
}

// Broker fans committed task snapshots out to subscribers.
type Broker struct {
	limits Limits

	mu       sync.Mutex
	subs     map[string]map[*Sub]struct{} // task id -> subscribers
	perAgent map[string]int
	total    int
	closed   bool
	watches  map[string][]chan struct{} // task id -> waiting for a subscriber
}

// NewBroker returns a Broker with the given limits.
func NewBroker(l Limits) *Broker {
	return &Broker{limits: l, subs: map[string]map[*Sub]struct{}{}, perAgent: map[string]int{}, watches: map[string][]chan struct{}{}}
}

// Sub is one subscription to one task's transitions.
type Sub struct {
	b       *Broker
	taskID  string
	agentID string
	c       chan tasks.Task
	once    sync.Once
}

// subBuffer is enough for every transition a task can make (one): a full
// buffer means the subscriber is broken, not slow.
const subBuffer = 4

// Subscribe registers interest in taskID for agentID. The caller must
// Close the Sub.
func (b *Broker) Subscribe(taskID, agentID string) (*Sub, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, ErrClosed
	}
	if b.limits.Total > 0 && b.total >= b.limits.Total {
		return nil, ErrTooManyStreams
	}
	if b.limits.PerAgent > 0 && b.perAgent[agentID] >= b.limits.PerAgent {
		return nil, ErrTooManyStreams
	}
	s := &Sub{b: b, taskID: taskID, agentID: agentID, c: make(chan tasks.Task, subBuffer)}
	if b.subs[taskID] == nil {
		b.subs[taskID] = map[*Sub]struct{}{}
	}
	b.subs[taskID][s] = struct{}{}
	b.perAgent[agentID]++
	b.total++
	for _, w := range b.watches[taskID] {
		close(w)
	}
	delete(b.watches, taskID)
	return s, nil
}

// Watch returns a channel that is closed once taskID has a subscriber (at
// once if it has one now), or the broker closes: a caller can tell that
// a stream is in place before it makes the task move.
func (b *Broker) Watch(taskID string) <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	w := make(chan struct{})
	if len(b.subs[taskID]) > 0 || b.closed {
		close(w)
		return w
	}
	b.watches[taskID] = append(b.watches[taskID], w)
	return w
}

// C delivers the task after each committed transition. It is closed when
// the subscription ends (Close, or the broker shutting down).
func (s *Sub) C() <-chan tasks.Task { return s.c }

// Close ends the subscription; it is safe to call more than once.
func (s *Sub) Close() {
	s.b.mu.Lock()
	s.b.removeLocked(s)
	s.b.mu.Unlock()
}

func (b *Broker) removeLocked(s *Sub) {
	s.once.Do(func() {
		if set := b.subs[s.taskID]; set != nil {
			delete(set, s)
			if len(set) == 0 {
				delete(b.subs, s.taskID)
			}
		}
		if b.perAgent[s.agentID]--; b.perAgent[s.agentID] <= 0 {
			delete(b.perAgent, s.agentID)
		}
		b.total--
		close(s.c)
	})
}

// Publish hands a committed task snapshot to its subscribers. It never
// blocks: a subscriber whose buffer is full is ended.
func (b *Broker) Publish(t tasks.Task) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.subs[t.ID] {
		select {
		case s.c <- t:
		default:
			b.removeLocked(s) // stuck subscriber: end its stream
		}
	}
}

// Watched reports whether taskID has a subscriber now.
func (b *Broker) Watched(taskID string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.subs[taskID]) > 0
}

// EndAgent ends every subscription of agentID (its credentials were
// revoked), and returns how many it ended.
func (b *Broker) EndAgent(agentID string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, set := range b.subs {
		for s := range set {
			if s.agentID == agentID {
				b.removeLocked(s)
				n++
			}
		}
	}
	return n
}

// Close ends every subscription and refuses new ones.
func (b *Broker) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	for _, set := range b.subs {
		for s := range set {
			b.removeLocked(s)
		}
	}
	for id, ws := range b.watches {
		for _, w := range ws {
			close(w)
		}
		delete(b.watches, id)
	}
}

// Open returns the number of open subscriptions.
func (b *Broker) Open() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.total
}
