// Package service is the A2A agent behind every binding: it reads a
// SendMessage request, picks the skill it asks for, runs it over the domain
// services, and answers in A2A wire types. HTTP+JSON and JSON-RPC both call
// it, so they cannot drift apart.
//
// It also owns the skill registry: each entry is a skill's card, its
// actions, its scope and the function that runs it, so the card is built
// from what dispatches and lists exactly what runs; and the one function
// that maps domain errors to A2A errors (ToError).
//
// It imports neither net/http nor the store.
package service
