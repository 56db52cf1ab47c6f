// Package httpkit is the HTTP toolkit every kfa binding shares: the
// request context (request id, the calling agent for the access log),
// bounded and checked JSON bodies, JSON answers, the one writer of A2A
// errors with their auth and rate-limit headers, bearer authentication,
// and Server-Sent Events.
//
// It holds no routes and no product rules. The bindings (httpjson,
// jsonrpc) and the admin API import it; none of them imports another.
package httpkit
