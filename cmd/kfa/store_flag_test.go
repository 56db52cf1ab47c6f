package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/internal/pgtest"
)

// TestStoreFlagWithoutServer: with --store and no server, the commands open
// the PostgreSQL database themselves, so what one writes the next reads and
// kfa check sees; --data only holds what is local (it is not created).
func TestStoreFlagWithoutServer(t *testing.T) {
	pg := pgtest.URL(t)
	dir := t.TempDir() + "/local"
	type made struct{ ID, Name string }
	alice := decode[made](t, "agent", "create", "--name", "alice", "--store", pg, "--data", dir)
	if alice.ID == "" || alice.Name != "alice" {
		t.Fatalf("agent create: %+v", alice)
	}
	if out := ok(t, "agent", "list", "--store", pg, "--data", dir); !strings.Contains(out, alice.ID) {
		t.Fatalf("agent list does not show %s:\n%s", alice.ID, out)
	}
	ok(t, "records", "import", "../../samples/records.jsonl", "--store", pg, "--data", dir)
	out := ok(t, "stats", "--store", pg, "--data", dir)
	if !strings.Contains(out, "Records") || !strings.Contains(out, "78") {
		t.Fatalf("stats after the import:\n%s", out)
	}
	// The database's size, not the "0 B" of a bbolt file it does not have.
	if !regexp.MustCompile(`(?m)^Size +[1-9][0-9.]* [KMG]iB \(pg_database_size\)$`).MatchString(out) {
		t.Errorf("stats does not give the database's size:\n%s", out)
	}
	if st := decode[api.Stats](t, "stats", "--store", pg, "--data", dir); st.Database.Backend != "postgresql" || st.Database.SizeBytes < 1<<20 {
		t.Errorf("stats --json: %+v", st.Database)
	}
	if out := ok(t, "check", "--store", pg); !strings.Contains(out, "OK") {
		t.Fatalf("check:\n%s", out)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"not a postgres URL", []string{"agent", "list", "--store", "/var/lib/kfa", "--data", dir}, "--store takes a postgres:// URL"},
		{"migrate names its databases otherwise", []string{"migrate", "--store", pg, "--to", pg}, "unknown flag --store"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := kfa(t, tc.args...)
			if r.code == 0 || !strings.Contains(r.stderr, tc.want) {
				t.Fatalf("want a failure saying %q, got %s", tc.want, r)
			}
			if strings.Contains(r.stderr, pg) {
				t.Fatalf("the URL (and its password) was printed: %s", r)
			}
		})
	}
}
