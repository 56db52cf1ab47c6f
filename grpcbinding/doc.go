// Package grpcbinding is the A2A gRPC binding, v1.0: the service
// lf.a2a.v1.A2AService of the official proto, on the official generated
// types (a2a-go's a2apb/v1) and google.golang.org/grpc, with the standard
// health service and server reflection.
//
// Like httpjson and jsonrpc, it translates the wire to calls on the
// service layer and back (one converter, convert.go, between kfa's A2A
// wire types and the protobuf ones); it holds no product rules, never
// opens the store, and imports no other surface. Every error goes
// through service.ToError and leaves as a google.rpc.Status with an
// ErrorInfo detail, its gRPC code the google.rpc.Code the HTTP+JSON
// binding names for the same error; Retry-After, the Bearer challenge and
// the RateLimit fields travel as trailing metadata. Package server
// listens and serves it on --grpc-addr.
package grpcbinding
