// Package discovery serves what lets an agent find kfa and learn what it
// offers, before it sends a request: the A2A agent card (and its A2A 0.3
// shape), the guides /llms.txt and /AGENTS.md, the /a2a/info
// connectivity check, and the JWKS that verifies push notifications.
//
// Every answer is anonymous and cacheable, made by the service once (or
// once per signing key); the handlers only set the cache and CORS headers
// and answer conditional requests. Routes are registered in package
// server (routes.go).
package discovery
