package commands

import (
	"time"

	"github.com/kfa-project/kfa/agents"

	"github.com/kfa-project/kfa/storage"
)

// lockAgent queues the load of agent id into dst under its lock, taken
// first by every command that decides a per-agent limit (the ask rate,
// the open tasks, the reply rate, the flag rate), so that one agent's
// commands are decided one after the other, on every process.
func lockAgent(l storage.Loader, id string, dst **agents.Agent) {
	storage.One(l, Agents, k(id), storage.Lock, dst)
}

// actingAgent queues the load of agent id into dst under a share lock,
// first in every command an agent makes that decides no per-agent limit
// (a cancel, a push config's put or delete, an accept, an ack, a web
// session, a web moderator's action): a revoke, which updates the agent,
// waits for the command, or the command for the revoke and then sees it.
// The decision refuses a revoked agent (agents.MayAct). bbolt's single
// writer decides every command after the revokes committed before it.
func actingAgent(l storage.Loader, id string, dst **agents.Agent) {
	storage.One(l, Agents, k(id), storage.Share, dst)
}

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
