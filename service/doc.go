// Package service is the one door to the domain for every surface. As
// the A2A agent behind both bindings it reads a SendMessage request, picks
// the skill it asks for, runs it over the domain services, and answers in
// A2A wire types, so HTTP+JSON and JSON-RPC cannot drift apart. It also
// answers what the other surfaces ask (discussions, replies, inboxes,
// records, the web's sign-in: /api/v1, MCP and the web view), and
// Operator answers the admin API.
//
// It owns the skill registry: each entry is a skill's card, its actions,
// its scope and the function that runs it, so the card is built from what
// dispatches and lists exactly what runs. It holds the one credential
// check (Authenticate), the checks every surface shares (who may reply,
// the task filters), and the one function that maps domain errors to A2A
// errors (ToError).
//
// It imports neither net/http nor a store.
package service
