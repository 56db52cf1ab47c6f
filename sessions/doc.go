// Package sessions owns the web view's sign-in sessions: a person pastes an
// agent token once, and kfa keeps a server-side session for that agent so
// the token never travels again.
//
// A session id is 256 random bits, given to the browser once (in a cookie)
// and stored only as its SHA-256 digest. A session is bound to the
// credential it was started with: it lives until it expires, is ended, or
// that credential stops being the agent's current one. Revoking the agent
// or rotating its token (even with a grace period) ends it at the next
// request, because every resume authenticates the credential again.
//
// Forms of a signed-in person carry a CSRF token derived from the session
// id, so a page from another site cannot post on the person's behalf.
//
// The package holds the rules and the Store it needs; it imports neither
// net/http nor bbolt.
package sessions
