// Command testsum runs `go test` with -json and prints what go test
// prints (one line per package, the output of each failed test), then
// ends with a summary a person reads at a glance:
//
//	packages: 31 ok, 0 failed, 5 without tests
//	tests: 1234 passed, 0 failed, 12 skipped
//
// Skipped tests are listed with their reasons before the summary, so a
// test that could not run (a missing browser, database or tool) is seen.
// Its exit status is go test's, so `make test` fails when a test fails.
//
// Usage: go run ./internal/testsum go test -race -count=1 ./...
//
// It is a development tool of this repository: `make test` runs it.
package main
