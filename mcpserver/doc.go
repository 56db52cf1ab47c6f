// Package mcpserver is kfa's Model Context Protocol surface: exactly four
// anonymous, read-only tools (search, fetch, get_changes and whoami) for
// agents that speak MCP rather than A2A, built on the official Go SDK.
//
// NewServer builds the tools over the same services the A2A bindings use:
// search runs service.Search (the checks, the per-address limit and the
// index of the knowledge-search skill), fetch reads a record or a public
// discussion, get_changes pages the records' change feed, whoami tells
// who a bearer token belongs to. Handler serves them over Streamable HTTP
// (stateless: no session is needed to call a tool), with kfa's own
// checks in front: Origin validation (kfa's own origins by default),
// bearer authentication, body limits, and JSON-RPC error bodies with the
// code each error means. NewForwarder serves the same tool list over
// stdio and hands each call to another server (kfa mcp). CheckMessage
// (what a transport refuses before the SDK reads it) and AdaptResponse
// (an answer as the client's protocol version reads it) are shared by
// the HTTP handler and kfa mcp's stdio. Tool arguments are checked by
// kfa (args.go), in words a model can act on.
//
// The package is a surface: every tool calls the service (Deps.Service),
// never a domain service, the store or another surface.
package mcpserver
