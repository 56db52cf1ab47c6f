// Package oauth makes kfa an OAuth 2.1 resource server for the identity
// providers an operator names (kfa serve --oauth-issuer): it reads each
// issuer's metadata (RFC 8414, falling back to OpenID discovery), keeps
// its signing keys (JWKS, refetched at most once a minute when a token
// names a key it lacks, so a rotation at the provider needs no restart),
// and verifies JWT access tokens (RFC 9068): the signature under an
// allowlist of algorithms, the issuer exactly, the audience, the expiry
// with a bounded skew, and the scopes. A refusal says why, in words a
// caller can act on.
//
// It is also the web sign-in's client of the provider (authorization code
// with PKCE, state and nonce; the ID token checked with the same keys).
//
// kfa is never its own authorization server: it issues no OAuth tokens.
// The package knows nothing of kfa's agents, stores or surfaces; it
// answers who a token speaks for (issuer, subject) and what it grants,
// and the agents package decides which agent that is.
package oauth
