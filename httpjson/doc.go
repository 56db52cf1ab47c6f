// Package httpjson is the A2A HTTP+JSON binding, v1.0: the operations
// under /a2a/v1 (SendMessage and its stream, GetTask, ListTasks,
// CancelTask, SubscribeToTask, the push notification configs and the
// extended card).
//
// Handlers translate HTTP to calls on the service layer and back; they
// hold no product rules and never open the store. Every error goes
// through service.ToError, so status codes and reasons are chosen in one
// place. It imports no other surface; package server mounts its handlers
// in the one routes table (server/routes.go).
package httpjson
