// Package httpjson is the A2A HTTP+JSON binding (/a2a/v1), the public JSON
// API (/api/v1), the agent card and the health endpoints.
//
// Handlers translate HTTP to calls on the service layer and back; they hold
// no product rules and never open the store. Every error goes through
// service.ToError, so status codes and reasons are chosen in one place. All
// routes are registered in routes.go.
package httpjson
