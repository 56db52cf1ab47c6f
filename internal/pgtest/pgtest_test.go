package pgtest

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestServer(t *testing.T) {
	const good = "postgres://u:secretpw@127.0.0.1:5432/postgres?sslmode=disable"
	for _, tc := range []struct {
		name     string
		env      map[string]string
		wantURL  string
		wantSkip bool
		wantErr  string
	}{
		{name: "unset skips", env: nil, wantSkip: true},
		{name: "unset but required fails", env: map[string]string{EnvRequire: "1"}, wantErr: EnvRequire},
		{name: "set", env: map[string]string{EnvURL: good}, wantURL: good},
		{name: "set and required", env: map[string]string{EnvURL: good, EnvRequire: "1"}, wantURL: good},
		{name: "malformed", env: map[string]string{EnvURL: "mysql://u:secretpw@h/db"}, wantErr: "not a postgres"},
		{name: "no host", env: map[string]string{EnvURL: "postgres:///db?password=secretpw"}, wantErr: "not a postgres"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, skip, err := server(func(k string) string { return tc.env[k] })
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one containing %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "secretpw") {
					t.Fatalf("the error shows the password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if u != tc.wantURL || (skip != "") != tc.wantSkip {
				t.Fatalf("got (%q, %q), want url %q skip %v", u, skip, tc.wantURL, tc.wantSkip)
			}
		})
	}
}

func TestWithDatabase(t *testing.T) {
	got, err := withDatabase("postgres://u:p@127.0.0.1:5/postgres?sslmode=disable", "kfa_test_1")
	if err != nil {
		t.Fatal(err)
	}
	if want := "postgres://u:p@127.0.0.1:5/kfa_test_1?sslmode=disable"; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

// TestURLIsFreshAndOwn proves each call gets its own empty database.
func TestURLIsFreshAndOwn(t *testing.T) {
	ctx := context.Background()
	a, b := URL(t), URL(t)
	if a == b {
		t.Fatal("two calls returned the same database")
	}
	connA, err := pgx.Connect(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer connA.Close(ctx)
	if _, err := connA.Exec(ctx, "CREATE TABLE t (x int)"); err != nil {
		t.Fatal(err)
	}
	connB, err := pgx.Connect(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	defer connB.Close(ctx)
	var n int
	if err := connB.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("the second database has %d tables, want 0", n)
	}
}
