package main

import (
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"
)

// The variables of the PostgreSQL tests (see internal/pgtest and e2e).
const (
	envPostgres        = "KFA_TEST_POSTGRES"
	envRequirePostgres = "KFA_REQUIRE_POSTGRES"
	envE2EStore        = "KFA_E2E_STORE"
)

// startPostgres tells a person how to get a server for the tests.
const startPostgres = `Start a throwaway one (it needs the postgresql package: apt-get install postgresql),
then run again:

  dir=$(mktemp -d)
  export KFA_TEST_POSTGRES=$(.ci/postgres.sh start "$dir")
  make test-postgres
  .ci/postgres.sh stop "$dir" && rm -rf "$dir"

or set KFA_TEST_POSTGRES to the URL of a server where this user may CREATE DATABASE
(see docs/scale-out.md).`

// dialTimeout bounds the check that the server answers.
const dialTimeout = 3 * time.Second

// postgresEnv checks that KFA_TEST_POSTGRES names a PostgreSQL server that
// accepts connections, and returns the variables that run the tests on
// it: every e2e server on PostgreSQL, and a skip for want of a server
// made a failure. A run against PostgreSQL that skipped its PostgreSQL
// tests would pass having tested nothing.
func postgresEnv(getenv func(string) string) ([]string, error) {
	raw := getenv(envPostgres)
	if raw == "" {
		return nil, fmt.Errorf("testsum: the PostgreSQL tests need a server, and %s is not set.\n%s", envPostgres, startPostgres)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "" {
		// Never print the URL: it may hold a password.
		return nil, fmt.Errorf("testsum: %s is not a postgres://user:password@host:port/db URL.\n%s", envPostgres, startPostgres)
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(strings.Trim(u.Hostname(), "[]"), "5432")
	}
	c, err := net.DialTimeout("tcp", host, dialTimeout)
	if err != nil {
		return nil, fmt.Errorf("testsum: no PostgreSQL server answers at %s (%s): %v\n%s", host, envPostgres, err, startPostgres)
	}
	_ = c.Close()
	return []string{envE2EStore + "=postgres", envRequirePostgres + "=1"}, nil
}
