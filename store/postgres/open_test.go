package postgres_test

import (
	"context"
	"errors"
	neturl "net/url"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/internal/pgtest"
	"github.com/kfa-project/kfa/store/postgres"
)

// TestOpenTogether: processes starting together on an empty database
// migrate it once (the advisory lock), and all open.
func TestOpenTogether(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db, err := postgres.Open(ctx, url, postgres.Options{MaxConns: 2})
			if err == nil {
				err = db.Close()
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("open %d: %v", i, err)
		}
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n, max int
	if err := conn.QueryRow(ctx, "SELECT count(*), max(version) FROM kfa_schema_migrations").Scan(&n, &max); err != nil {
		t.Fatal(err)
	}
	if n != postgres.SchemaVersion() || max != postgres.SchemaVersion() {
		t.Fatalf("%d migrations recorded, up to %d; want each of %d once", n, max, postgres.SchemaVersion())
	}
}

// TestOpenRefuses: a schema newer than the binary, and URLs that cannot
// work, are clear errors that never show the password.
func TestOpenRefuses(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	db, err := postgres.Open(ctx, url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "INSERT INTO kfa_schema_migrations (version, name) VALUES (999, '0999_future.sql')"); err != nil {
		t.Fatal(err)
	}
	_ = conn.Close(ctx)
	if _, err := postgres.Open(ctx, url, postgres.Options{}); !errors.Is(err, postgres.ErrSchemaNewer) {
		t.Fatalf("newer schema: err %v, want ErrSchemaNewer", err)
	}

	for _, tc := range []struct{ name, url, want string }{
		{"malformed", "postgres://kfa:s3cretpw@127.0.0.1:notaport/db", "malformed"},
		{"unreachable", "postgres://kfa:s3cretpw@127.0.0.1:1/db?connect_timeout=5", "connect"},
		{"wrong password", withPassword(t, url, "s3cretpw"), "password authentication failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := postgres.Open(ctx, tc.url, postgres.Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want one containing %q", err, tc.want)
			}
			t.Log(err)
			if strings.Contains(err.Error(), "s3cretpw") {
				t.Fatalf("the error shows the password: %v", err)
			}
		})
	}
}

func withPassword(t *testing.T, raw, pw string) string {
	u, err := neturl.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	u.User = neturl.UserPassword(u.User.Username(), pw)
	return u.String()
}
