package changelog

import "sync"

// Signal broadcasts wake-ups to any number of subscribers without ever
// blocking the notifier: each subscriber has a one-slot channel, and
// notifications that arrive while the slot is full merge into it. The
// zero value is ready to use.
type Signal struct {
	mu   sync.Mutex
	subs map[chan struct{}]struct{}
}

// Notify wakes every subscriber.
func (s *Signal) Notify() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.subs {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

// Subscribe returns a channel woken by Notify, and the function that
// ends the subscription (safe to call twice).
func (s *Signal) Subscribe() (<-chan struct{}, func()) {
	c := make(chan struct{}, 1)
	s.mu.Lock()
	if s.subs == nil {
		s.subs = map[chan struct{}]struct{}{}
	}
	s.subs[c] = struct{}{}
	s.mu.Unlock()
	return c, func() {
		s.mu.Lock()
		delete(s.subs, c)
		s.mu.Unlock()
	}
}
