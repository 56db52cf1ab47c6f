// Package e2e holds kfa's end-to-end tests: each starts the real server
// in-process on 127.0.0.1 with a temporary bbolt file and speaks HTTP to
// it (and to its admin socket), through the client package, raw requests,
// and the official A2A Go SDK.
package e2e
