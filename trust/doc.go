// Package trust owns the signals that say which answer to trust: votes
// and verifications on replies and records, the trust value derived from
// them, each author's reputation, and the public profile.
//
// Every command is a pure decision here (DecideVote, DecideVerify,
// DecideReset): it takes what the store loaded and locked (the agent's
// vote window under its lock, the item's discussion under a share lock,
// the item's tally under its lock, the agent's standing vote or
// verification) and returns a refusal or the effects: the vote or
// verification to keep, the tally after, the moves of the author's
// reputation, the inbox notice and the change log's events. What other
// commands do to reputation (an accept, a hide) is decided here too
// (AcceptMoves, ContentMoves), so that every rule of reputation is in one
// place.
//
// The formulas (Tally.Trust, the points of a Reputation) are documented in
// docs/search.md and docs/api.md. The package imports neither net/http
// nor a database driver.
package trust
