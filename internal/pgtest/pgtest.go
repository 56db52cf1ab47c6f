package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// The environment variables the package reads.
const (
	// EnvURL is the URL of a server the tests may create databases on, as
	// a role allowed to CREATE DATABASE.
	EnvURL = "KFA_TEST_POSTGRES"
	// EnvRequire, set to 1, turns a missing EnvURL from a skip into a
	// failure.
	EnvRequire = "KFA_REQUIRE_POSTGRES"
)

// skipReason is what a test without a server says.
const skipReason = EnvURL + " is not set: no PostgreSQL server to test against " +
	"(.ci/postgres.sh start DIR starts one and prints its URL; .ci/run does it)"

// server decides from the environment whether tests run: it returns the
// server URL, or a reason to skip, or an error when skipping is not allowed.
func server(getenv func(string) string) (serverURL, skip string, err error) {
	u := getenv(EnvURL)
	if u == "" {
		if getenv(EnvRequire) == "1" {
			return "", "", fmt.Errorf("%s=1 but %s", EnvRequire, skipReason)
		}
		return "", skipReason, nil
	}
	if _, err := withDatabase(u, "x"); err != nil {
		return "", "", err
	}
	return u, "", nil
}

// withDatabase returns serverURL naming database db instead.
func withDatabase(serverURL, db string) (string, error) {
	u, err := url.Parse(serverURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "" {
		// The URL may hold a password: never print it.
		return "", fmt.Errorf("%s is not a postgres://user:password@host:port/db URL", EnvURL)
	}
	u.Path = "/" + db
	return u.String(), nil
}

// URL creates a fresh database for t and returns its URL; the database is
// dropped when t ends. It skips t (or fails it, see EnvRequire) when no
// server is configured.
func URL(t testing.TB) string {
	t.Helper()
	srv, skip, err := server(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	if skip != "" {
		t.Skip(skip)
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	name := "kfa_test_" + hex.EncodeToString(b[:])
	dbURL, err := withDatabase(srv, name)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := admin(ctx, srv, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		// FORCE ends connections a failed test left open.
		if err := admin(ctx, srv, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: drop database %s: %v", name, err)
		}
	})
	return dbURL
}

// admin runs one statement on the server's own database.
func admin(ctx context.Context, serverURL, stmt string) error {
	conn, err := pgx.Connect(ctx, serverURL)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close(context.Background()) }()
	_, err = conn.Exec(ctx, stmt)
	return err
}
