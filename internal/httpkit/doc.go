// Package httpkit is the HTTP plumbing every kfa surface shares: the
// request context (request id, the calling agent for the access log),
// bounded and checked JSON bodies and query parameters, JSON answers, the
// one writer of A2A errors with their auth and rate-limit headers, the
// reading of credential headers, cache and CORS headers, and Server-Sent
// Events.
//
// It sits below the service: it imports no service, holds no routes and
// no product rules. The error it writes is one the caller mapped
// (service.ToError), and the token it reads from the headers is resolved
// to an agent by the service (service.Authenticate). The surfaces
// (the A2A bindings, MCP, the web view, the admin API) import it;
// none of them imports another.
package httpkit
