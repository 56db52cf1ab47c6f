// Package peers holds federation's rules: what a kfa serves to the
// servers that follow it (the public change feed, Feed), and what it
// does with its own peers (the peer's commands and its state machine,
// the volume bounds, which copy of a followed document wins, what a
// forwarded ask becomes). Every rule is a pure decision; the stores run
// them through the storage seam (package commands), and the runtime
// that talks to peers over the network is package federation.
//
// It imports no net/http and no store.
package peers
