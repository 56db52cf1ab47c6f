// Command testsum runs `go test` with -json and prints what go test
// prints (one line per package as it finishes, after the wall time so
// far, and the output of each failed test), then ends with a summary a
// person reads at a glance:
//
//	packages: 31 ok, 0 failed, 5 without tests (2m10s)
//	tests: 1234 passed, 0 failed, 12 skipped
//
// When nothing has been printed for 30 seconds it says what is still
// running (which packages, for how long), or that go test is still
// compiling, so a first run that builds everything with the race
// detector does not look hung.
//
// Skipped tests are listed with their reasons before the summary, so a
// test that could not run (a missing browser, database or tool) is seen;
// a reason many tests give is one line with their count. Its exit status
// is go test's, so `make test` fails when a test fails.
//
// With -postgres (make test-postgres), KFA_TEST_POSTGRES must name a
// PostgreSQL server that accepts connections, or testsum fails at once
// and says how to start one; the tests then run with every e2e server on
// PostgreSQL and KFA_REQUIRE_POSTGRES=1, so none can skip for want of it.
//
// Usage: go run ./internal/testsum [-postgres] go test -race -count=1 ./...
//
// It is a development tool of this repository: `make test` runs it.
package main
