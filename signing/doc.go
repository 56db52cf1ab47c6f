// Package signing keeps kfa's signing keys and signs with them: compact
// JWS (ES256) whose protected header names the key (kid), and the JWKS
// of the public keys that verify them (served at /.well-known/jwks.json).
//
// Keys live in the database (Store): the first is made on first start,
// rotation adds a new current key and retires the old one, which stays in
// the JWKS for a grace period so that what it signed still verifies.
// Push notifications sign their requests with it; anything else kfa signs
// (its agent card) uses the same keys through the same two calls: Sign a
// payload with the current key, list the public keys.
//
// The package imports neither net/http nor bbolt.
package signing
