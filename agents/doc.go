// Package agents owns identities and their credentials: creating an agent,
// issuing, rotating and revoking bearer tokens, and authenticating a token.
//
// Tokens are "kfa_" followed by base32 of 256 random bits. Only their
// SHA-256 digest is stored, so a stolen database yields no usable token, and
// a token is found by its digest in one lookup.
//
// The package holds the rules and the Store it needs; it imports neither
// net/http nor bbolt.
package agents
