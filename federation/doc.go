// Package federation is the runtime that talks to this server's peers:
// the follower of each peer's change feed, the forwarder of asks, and
// the A2A client of a peer (this server is an agent there: it reads the
// peer's card, pins its signing key, asks with returnImmediately, and
// polls the tasks it asked).
//
// It decides nothing itself: the rules are package peers', and every
// write goes through the service (a page followed, a forward recorded,
// an answer come back as a reply), like any surface's. It never opens a
// store. What a peer sends is untrusted: every request has its timeouts
// and every answer its size bound, and nothing a peer does slows a local
// request.
package federation
