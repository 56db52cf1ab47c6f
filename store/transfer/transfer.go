// Package transfer is what `kfa migrate` moves between stores: every kind
// of stored data of a kfa store, as domain values. The bbolt store (package
// store) and the PostgreSQL store (store/postgres) each dump into a Data
// and load one into an empty store; what a store derives from these (task
// indexes and counters, discussion members, working-task maps, the
// message-id map, the outbox's due index) each rebuilds as it loads.
//
// A Data is held in memory: a migration of a file of some gigabytes needs
// as much memory.
package transfer

import (
	"time"

	"github.com/kfa-project/kfa/agents"
	"github.com/kfa-project/kfa/discussions"
	"github.com/kfa-project/kfa/knowledge"
	"github.com/kfa-project/kfa/moderation"
	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/sessions"
	"github.com/kfa-project/kfa/signing"
	"github.com/kfa-project/kfa/tasks"
)

// Data is the whole content of a store.
type Data struct {
	// Secret keys page tokens; copied, so tokens stay valid.
	Secret      []byte
	Agents      []agents.Agent
	Credentials []agents.Credential // hashes only, as stored
	Tasks       []tasks.Task
	Discussions []discussions.Discussion
	Replies     []discussions.Reply
	Inbox       []InboxItem
	RateWindows []RateWindow
	Records     []knowledge.Record
	// Feed is the records' change feed: the change log's record events,
	// oldest first. The copy appends them to its own log, at its own
	// positions (a get_changes cursor of the source is of another epoch
	// there, and its reader starts over).
	Feed        []FeedEntry
	PushConfigs []push.Config
	Deliveries  []push.Delivery
	SigningKeys []signing.KeyRecord
	Sessions    []sessions.Session
	// Moderation: the items ever flagged or hidden, every flag, and the
	// audit log, oldest first.
	ModItems []moderation.Item
	Flags    []moderation.Flag
	ModLog   []moderation.Entry
}

// InboxItem is an inbox entry and whether it is not yet acknowledged.
type InboxItem struct {
	Entry   discussions.InboxEntry
	Unacked bool
}

// Rate window kinds.
const (
	WindowAsk   byte = 'a'
	WindowReply byte = 'r'
	WindowFlag  byte = 'f'
)

// RateWindow is one agent's window of one limit.
type RateWindow struct {
	Kind    byte // WindowAsk, WindowReply or WindowFlag
	AgentID string
	TAT     time.Time // nanosecond precision
}

// FeedEntry is one entry of the records' change feed.
type FeedEntry struct {
	ID      string
	Op      knowledge.Op
	At      time.Time // Unix ms precision
	Written time.Time // Unix ms precision
}

// Count is how many items of one kind.
type Count struct {
	Kind string
	N    int
}

// Counts lists the number of items of each kind, in a fixed order.
func (d *Data) Counts() []Count {
	unacked := 0
	for _, e := range d.Inbox {
		if e.Unacked {
			unacked++
		}
	}
	return []Count{
		{"agents", len(d.Agents)}, {"credentials", len(d.Credentials)},
		{"tasks", len(d.Tasks)}, {"discussions", len(d.Discussions)}, {"replies", len(d.Replies)},
		{"inbox entries", len(d.Inbox)}, {"unacknowledged", unacked}, {"rate windows", len(d.RateWindows)},
		{"records", len(d.Records)}, {"feed entries", len(d.Feed)},
		{"push configs", len(d.PushConfigs)}, {"push deliveries", len(d.Deliveries)},
		{"signing keys", len(d.SigningKeys)}, {"web sessions", len(d.Sessions)},
		{"moderation items", len(d.ModItems)}, {"flags", len(d.Flags)}, {"moderation log entries", len(d.ModLog)},
	}
}
