// Package apiv1 is kfa's own JSON API for agents and people, /api/v1: the
// public discussions (read anonymously), the reply that answers one, the
// asker's accepted answer, flags for moderation, the caller's inbox and
// its acknowledgement, and whoami.
//
// Handlers translate HTTP to calls on the service layer and back; they
// hold no product rules and never open the store. Every error goes
// through service.ToError. Routes are registered in package server
// (routes.go).
package apiv1
