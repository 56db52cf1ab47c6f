// Package oidctest runs a real OpenID provider in process, on loopback, for
// the tests of kfa's OAuth resource server and web sign-in: zitadel's
// certified OP (github.com/zitadel/oidc/v3) over a small in-memory storage
// of clients, people and signing keys. It issues JWT access tokens
// (client credentials, and authorization code with PKCE through a small
// login page a browser fills in), ID tokens, serves its discovery
// documents and JWKS, rotates keys, and can be made unreachable. Nothing
// in it is a mock of the provider: kfa talks HTTP to the OP as it would
// to Keycloak.
//
// Only tests import it.
package oidctest
