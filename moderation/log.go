package moderation

import (
	"crypto/sha256"
	"fmt"
	"time"

	"github.com/oklog/ulid/v2"
)

// Action is what an audit entry records.
type Action string

// The actions of the audit log.
const (
	ActionFlag    Action = "flag"
	ActionHide    Action = "hide"
	ActionUnhide  Action = "unhide"
	ActionDismiss Action = "dismiss"
	// ActionResetReputation: a moderator reset an agent's reputation (the
	// entry's item is the agent, of kind KindAgent).
	ActionResetReputation Action = "reset-reputation"
)

// KindAgent is the item kind of an audit entry about an agent (a
// reputation reset); agents are not flagged or hidden as items.
const KindAgent Kind = "agent"

// ResetEntry is the audit entry of actor's reset of agentID's
// reputation at at, which took before away, for reason.
func ResetEntry(actor Actor, agentID, reason string, before int64, at time.Time) Entry {
	return Entry{
		ID: entryID(at, 0, string(ActionResetReputation), agentID), At: at, Action: ActionResetReputation, Actor: actor,
		ItemKind: KindAgent, ItemID: agentID, AuthorID: agentID, Reason: reason,
		Note: fmt.Sprintf("reputation %d reset to 0", before),
	}
}

// ActorKind is who acts.
type ActorKind string

// The kinds of actor.
const (
	// ActorAgent is an agent: a flagger, or a signed-in person with the
	// moderate scope.
	ActorAgent ActorKind = "agent"
	// ActorOperator is the operator, through the admin socket (kfa
	// moderation, kfa agent revoke --hide-content).
	ActorOperator ActorKind = "operator"
	// ActorFlags is the flag threshold, which hides an item on its own.
	ActorFlags ActorKind = "flags"
)

// Actor is who took an action: an agent (ID and Name), the operator
// (Name is what the operator gave, e.g. their login), or the flags.
type Actor struct {
	Kind ActorKind `json:"kind"`
	ID   string    `json:"id,omitempty"`
	Name string    `json:"name,omitempty"`
}

// Entry is one action of the audit log. The log is append-only: entries
// are never changed or removed.
type Entry struct {
	ID     string    `json:"id"`
	At     time.Time `json:"at"`
	Action Action    `json:"action"`
	Actor  Actor     `json:"actor"`
	// Item is what the action was on.
	ItemKind     Kind   `json:"itemKind"`
	ItemID       string `json:"itemId"`
	DiscussionID string `json:"discussionId"`
	// AuthorID is whose content the item is.
	AuthorID string `json:"authorId,omitempty"`
	// Reason is why: a flag's reason, a moderator's words, the flags
	// that hid an item.
	Reason string `json:"reason,omitempty"`
	// Note is a flag's note.
	Note string `json:"note,omitempty"`
}

// entryID derives an entry's id from its time, the item, its round and
// the action's key: deciding a command again (a rerun of its
// transaction) writes the same entry, and ids sort by time. seq orders
// the entries of one command.
func entryID(at time.Time, seq byte, parts ...string) string { return EntryID(at, seq, parts...) }

// EntryID is the id of a log entry at at, derived from the action's key
// parts (see entryID): a decision of another package that writes to the
// log (peers.DecideModerate) makes its entries' ids so too.
func EntryID(at time.Time, seq byte, parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	sum := h.Sum(nil)
	var id ulid.ULID
	_ = id.SetTime(ulid.Timestamp(at))
	entropy := append([]byte{seq}, sum[:9]...)
	_ = id.SetEntropy(entropy)
	return id.String()
}
