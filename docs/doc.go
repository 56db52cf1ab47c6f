// Package docs is kfa's documentation for people: the Markdown pages in
// this directory. It holds no code; its test (examples_test.go) runs every
// shell example of these pages and of the README against a real kfa
// server, so that the first thing a new user copies keeps working. How
// to write an example the test can run is in examples.md.
package docs
