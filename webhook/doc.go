// Package webhook delivers push notifications: it takes due deliveries
// from the outbox (push.OutboxStore), signs each request (KFA-Signature,
// a JWS by the signing package), POSTs it to the config's URL through a
// dialer that checks every address it connects to against the
// destination policy, and records each attempt's outcome, which sets the
// next attempt or ends the delivery.
//
// The worker walks the destinations round-robin and sends to each one
// request at a time, so a flooded or slow receiver delays no other; over
// an outbox several processes share (push.DestinationLocker) it holds a
// destination's lock while it sends to it, so that holds across
// processes too.
//
// Delivery is at least once: a delivery stays pending until an attempt's
// outcome is recorded, so a crash between sending and recording sends it
// again; its id (the jti) stays the same, so a receiver can drop the
// duplicate. A record the store refuses is tried again, never the send.
package webhook
