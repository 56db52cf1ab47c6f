// Package moderation owns the rules of moderating public content:
// agents' flags on discussions and replies, hiding an item when enough
// distinct agents flag it (pending review), a moderator's hide, unhide
// and dismiss, the review queue, and the append-only audit log of every
// action (who, what, when, why).
//
// Every command is a pure decision here (DecideFlag, DecideModerate): it
// takes what the store loaded and locked (the flagging agent's flag rate
// window, the item's discussion, the reply, the item's moderation state,
// whether the agent flagged it before) and returns a refusal or the
// effects: the flag, the item's new state, the content hidden or shown
// (through the discussions package's HideDiscussion, HideReply, ...),
// the audit entries and the change log's events. Both stores load, call
// the decision and persist its outcome in one transaction; a hide reaches
// every follower (the search index, the metrics) through the log.
//
// Hiding never changes a task: a task a hidden reply completed keeps its
// artifact. The package imports neither net/http nor a database driver.
package moderation
