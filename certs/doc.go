// Package certs owns the certificates of kfa's public listener when it
// serves HTTPS itself: a key pair read from files and read again when
// they change (Pair), or certificates from an ACME CA (ACME), obtained on
// the first handshake, renewed before they expire and again whenever the
// CA asks through ACME Renewal Information (RFC 9773), as after a
// revocation.
//
// Both hand the server a Source: a *tls.Config whose GetCertificate
// always has the current certificate, and a loop to Start and Stop. The
// package knows nothing of kfa's surfaces, service or stores: the ACME
// state lives in a Cache the server picks (a directory under --data, or a
// table several processes share).
package certs
