// Package jcs is the JSON Canonicalization Scheme of RFC 8785: the one
// byte sequence of a JSON value that signatures are made over. Object
// members are sorted by the UTF-16 code units of their names, strings use
// the shortest escapes, numbers are written as ECMAScript writes a double,
// and there is no whitespace.
//
// It reads JSON and writes JSON; it knows nothing of what it signs.
package jcs
