package commands

import (
	"time"

	"github.com/kfa-project/kfa/storage"
)

// lockAgent queues the lock of agent id's record, taken first by every
// command that decides a per-agent limit (the ask rate, the open tasks,
// the reply rate, the flag rate), so that one agent's commands are
// decided one after the other, on every process. It reads nothing of the
// agent.
func lockAgent(l storage.Loader, id string) { storage.LockOnly(l, Agents, k(id)) }

// windowAt is a loaded window's time (zero for none).
func windowAt(w *Window) time.Time {
	if w == nil {
		return time.Time{}
	}
	return w.At
}

// putWindow adds the write of agent's window of limit, moved on to next
// by a decision (nil: not rate limited, nothing to write); old is the
// window as loaded.
func putWindow(w *storage.Writes, old *Window, limit, agent string, next *time.Time) {
	if next == nil {
		return
	}
	storage.Put(w, Windows, old, &Window{Limit: limit, AgentID: agent, At: *next})
}
