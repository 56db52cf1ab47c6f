// Package server assembles kfa: it opens the store, builds the domain
// services, the followers, the service and the surfaces, mounts every
// public route in one table (routes.go) behind the router's middleware
// (router.go), serves the public listener and the admin socket, and shuts
// everything down in order (drain requests, stop background work, close
// the store).
//
// Config holds every setting with its default; cmd/kfa fills it from flags
// and KFA_* variables.
package server
