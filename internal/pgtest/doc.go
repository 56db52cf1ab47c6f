// Package pgtest gives a test its own fresh, empty PostgreSQL database on
// the server named by KFA_TEST_POSTGRES (.ci/postgres.sh starts one and
// .ci/run exports it). Without that variable the test is skipped, saying
// why; with KFA_REQUIRE_POSTGRES=1 (set by .ci/run) it fails instead, so
// that CI can never pass without running the PostgreSQL tests.
//
// It is for tests only; nothing outside _test.go files imports it.
package pgtest
