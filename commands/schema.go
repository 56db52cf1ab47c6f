package commands

import (
	"strconv"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/knowledge"
	"github.com/kfa-project/kfa/moderation"
	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/sessions"
	"github.com/kfa-project/kfa/signing"
	"github.com/kfa-project/kfa/storage"
	"github.com/kfa-project/kfa/tasks"
)

// The kinds of record kfa had before the seam. Each store maps them to
// the buckets or tables they always had (kinds.go in each store), so
// they have no codec here. A new kind gives a codec and is kept by every
// store generically.

// k is storage.K.
var k = storage.K

// Agents are the agents, by id.
var Agents = storage.NewKind("agent", func(a *agents.Agent) storage.Key { return k(a.ID) }, storage.Codec[agents.Agent]{})

// Windows are the agents' rate windows (ratelimit.Rate's kept time), by
// limit and agent.
var Windows = storage.NewKind("window", func(w *Window) storage.Key { return k(w.Limit, w.AgentID) }, storage.Codec[Window]{})

// Window is one agent's window of one limit.
type Window struct {
	Limit   string // WindowAsk, WindowReply, WindowFlag
	AgentID string
	At      time.Time
}

// The limits that keep a window per agent.
const (
	WindowAsk   = "a"
	WindowReply = "r"
	WindowFlag  = "f"
)

// Discussions are the discussions, by id.
var Discussions = storage.NewKind("discussion", func(d *discussions.Discussion) storage.Key { return k(d.ID) },
	storage.Codec[discussions.Discussion]{})

// DiscussionsListed lists the discussions readers see, by status: a
// hidden one is left out (and out of the counts).
var DiscussionsListed = Discussions.Index("discussion.status", func(d *discussions.Discussion) (storage.Key, bool) {
	return k(string(d.Status)), !d.Hidden
}).Counted()

// Replies are the replies, by discussion and id.
var Replies = storage.NewKind("reply", func(r *discussions.Reply) storage.Key { return k(r.DiscussionID, r.ID) },
	storage.Codec[discussions.Reply]{})

// RepliesByID finds a reply by its id alone.
var RepliesByID = Replies.Index("reply.id", func(r *discussions.Reply) (storage.Key, bool) { return k(r.ID), true })

// ModerationItems are the items ever flagged or hidden, by id.
var ModerationItems = storage.NewKind("moderation.item", func(it *moderation.Item) storage.Key { return k(it.ID) },
	storage.Codec[moderation.Item]{})

// ModerationQueue lists the items waiting for review.
var ModerationQueue = ModerationItems.Index("moderation.queue", func(it *moderation.Item) (storage.Key, bool) {
	return nil, it.Queued
})

// ModerationFlags are the flags, by item and agent.
var ModerationFlags = storage.NewKind("moderation.flag", func(f *moderation.Flag) storage.Key { return k(f.ItemID, f.AgentID) },
	storage.Codec[moderation.Flag]{})

// ModerationLog is the audit log, by entry id (a ULID of its time).
var ModerationLog = storage.NewKind("moderation.entry", func(e *moderation.Entry) storage.Key { return k(e.ID) },
	storage.Codec[moderation.Entry]{})

// PushConfigs are the push configs, by task and id.
var PushConfigs = storage.NewKind("push.config", func(c *push.Config) storage.Key { return k(c.TaskID, c.ID) },
	storage.Codec[push.Config]{})

// Deliveries are the push deliveries, by id (a ULID of the transition's
// time).
var Deliveries = storage.NewKind("push.delivery", func(d *push.Delivery) storage.Key { return k(d.ID) },
	storage.Codec[push.Delivery]{})

// DeliveriesByTask lists a task's deliveries.
var DeliveriesByTask = Deliveries.Index("push.delivery.task", func(d *push.Delivery) (storage.Key, bool) {
	return k(d.TaskID), true
})

// DeliveriesByState lists the deliveries by state (DeliveryState), in
// transition order.
var DeliveriesByState = Deliveries.Index("push.delivery.state", func(d *push.Delivery) (storage.Key, bool) {
	return k(DeliveryState(d.State)), true
})

// DeliveriesDue lists the pending deliveries by destination, each
// destination's in due order: the sender's walk. A delivery that is not
// pending is left out, and the store counts those in.
var DeliveriesDue = Deliveries.Index("push.delivery.due", func(d *push.Delivery) (storage.Key, bool) {
	return k(d.Destination, storage.Millis(d.NextAt)), d.State == push.Pending
})

// deliveryStates are the states' one-letter codes in keys and columns.
var deliveryStates = map[push.State]string{push.Pending: "p", push.Delivered: "d", push.Failed: "f"}

// DeliveryState is state's code in keys (and PostgreSQL's column).
func DeliveryState(state push.State) string { return deliveryStates[state] }

// SigningKeys are the signing keys, by creation time and id: key order
// is age order.
var SigningKeys = storage.NewKind("signing.key", func(r *signing.KeyRecord) storage.Key {
	return k(storage.Millis(r.CreatedAt), r.ID)
}, storage.Codec[signing.KeyRecord]{})

// Inbox holds each agent's inbox entries, by agent and id.
var Inbox = storage.NewKind("inbox", func(e *discussions.InboxEntry) storage.Key { return k(e.AgentID, e.ID) },
	storage.Codec[discussions.InboxEntry]{})

// InboxUnacked lists the entries not acknowledged yet.
var InboxUnacked = Inbox.Index("inbox.unacked", func(e *discussions.InboxEntry) (storage.Key, bool) {
	return nil, e.AckedAt.IsZero()
})

// Sessions are the web sign-in sessions, by the digest of their id.
var Sessions = storage.NewKind("session", func(s *sessions.Session) storage.Key { return k(string(s.Digest[:])) },
	storage.Codec[sessions.Session]{})

// SessionsByExpiry lists the sessions in expiry order: what a sign-in
// purges.
var SessionsByExpiry = Sessions.Index("session.expiry", func(s *sessions.Session) (storage.Key, bool) {
	return k(storage.Millis(s.ExpiresAt)), true
})

// Task is a task as stored: its header (tasks.Task without its messages
// and artifacts) and its wire JSON, in the pieces a view picks from and a
// transition rewrites (tasks.WireJSON). A load may leave the wire out
// (storage.Get.Brief): a decision reads the header only.
type Task struct {
	tasks.Task
	Wire tasks.WireJSON
}

// Tasks are the tasks, by id, each its owner's.
var Tasks = storage.NewKind("task", func(t *Task) storage.Key { return k(t.ID) }, storage.Codec[Task]{}).
	Owned(func(t *Task) string { return t.OwnerID })

// TasksByMessage finds an owner's task by the message id of its ask.
var TasksByMessage = Tasks.Index("task.message", func(t *Task) (storage.Key, bool) { return k(t.OwnerID, t.MessageID), true })

// TasksByOwnerState counts an owner's tasks by state: the open-task bound
// reads the WORKING ones.
var TasksByOwnerState = Tasks.Index("task.owner_state", func(t *Task) (storage.Key, bool) {
	return k(t.OwnerID, string(t.State)), true
}).Counted()

// TasksWorking lists a discussion's WORKING tasks: what a reply completes.
var TasksWorking = Tasks.Index("task.working", func(t *Task) (storage.Key, bool) {
	return k(t.DiscussionID), t.State == a2a.TaskStateWorking
})

// TasksOfDiscussion lists every task on a discussion by owner: who hears
// of a reply.
var TasksOfDiscussion = Tasks.Index("task.discussion", func(t *Task) (storage.Key, bool) {
	return k(t.DiscussionID, t.OwnerID), true
})

// StatesIn are the task states whose tasks ix holds (for a store whose
// index is a condition on the state: PostgreSQL's partial indexes).
func StatesIn(ix *storage.Index[Task]) []a2a.TaskState {
	var out []a2a.TaskState
	for n := 0; ; n++ {
		s, ok := a2a.ParseTaskState(strconv.Itoa(n))
		if !ok {
			return out
		}
		if _, in := ix.Entry(&Task{Task: tasks.Task{State: s}}); in {
			out = append(out, s)
		}
	}
}

// AgentsByName lists the agents by agents.NameKey of their names: the
// duplicate-name decision reads it.
var AgentsByName = Agents.Index("agent.name", func(a *agents.Agent) (storage.Key, bool) {
	return k(agents.NameKey(a.Name)), true
})

// AgentsByIdentity finds the agent linked to an OAuth identity (issuer,
// subject); an agent without one is left out.
var AgentsByIdentity = Agents.Index("agent.identity", func(a *agents.Agent) (storage.Key, bool) {
	return k(a.Issuer, a.Subject), a.Linked()
})

// Credentials are the agents' live credentials, by digest.
var Credentials = storage.NewKind("credential", func(c *agents.Credential) storage.Key { return k(string(c.Digest[:])) },
	storage.Codec[agents.Credential]{})

// CredentialsByAgent lists an agent's credentials.
var CredentialsByAgent = Credentials.Index("credential.agent", func(c *agents.Credential) (storage.Key, bool) {
	return k(c.AgentID), true
})

// Records are the knowledge records, by id. The store keeps their count
// (a page's total) with them.
var Records = storage.NewKind("record", func(r *knowledge.Record) storage.Key { return k(r.ID) }, storage.Codec[knowledge.Record]{})
