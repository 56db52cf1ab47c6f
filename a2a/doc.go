// Package a2a holds the wire types of the A2A protocol v1.0 as kfa speaks
// them: the data model (Task, Message, Part, Artifact, AgentCard, ...), the
// request and response shapes of the operations, the error model
// (google.rpc.Status with ErrorInfo) and the version rules.
//
// The JSON produced here follows ProtoJSON: lowerCamelCase names, enums as
// their full names, timestamps in UTC with milliseconds and a trailing Z.
// Decoders accept the snake_case spellings ProtoJSON also allows.
//
// This package is a leaf: it imports neither net/http nor the store, and it
// holds no kfa rules. Bindings translate between these types and the domain.
package a2a
