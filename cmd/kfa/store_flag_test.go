package main

import (
	"bytes"
	"context"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/internal/pgtest"
	"github.com/kfa-project/kfa/server"
	"github.com/kfa-project/kfa/store/postgres"
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

// TestStoreFlagBesideAServer: when a server answers on the admin socket,
// a command given --store goes to that server only if it keeps its data
// in that very database; otherwise it refuses and names both (it used to
// report the server's data as if it were --store's). Every command that
// takes --store reaches the data through connect, so one command of each
// kind stands for them.
func TestStoreFlagBesideAServer(t *testing.T) {
	pgA, pgB := pgtest.URL(t), pgtest.URL(t)
	boltDir := shortTempDir(t)
	startServer(t, boltDir, nil)
	pgDir := shortTempDir(t)
	startServer(t, pgDir, func(c *server.Config) { c.Store = pgA })
	for _, tc := range []struct {
		name string
		args []string
		want []string // in the refusal; nil: the command runs on the server
	}{
		{"a bbolt server, stats", []string{"stats", "--store", pgA, "--data", boltDir},
			[]string{"--store names " + postgres.Describe(pgA), filepath.Join(boltDir, "kfa.db")}},
		{"a bbolt server, agent create", []string{"agent", "create", "--name", "zed", "--store", pgA, "--data", boltDir},
			[]string{"--store names " + postgres.Describe(pgA), filepath.Join(boltDir, "kfa.db")}},
		{"a PostgreSQL server, another database", []string{"stats", "--store", pgB, "--data", pgDir},
			[]string{"--store names " + postgres.Describe(pgB), postgres.Describe(pgA)}},
		{"a PostgreSQL server, its own database", []string{"stats", "--store", pgA, "--data", pgDir}, nil},
		{"no --store: the server's data", []string{"stats", "--data", boltDir}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := kfa(t, tc.args...)
			if tc.want == nil {
				if r.code != 0 {
					t.Fatalf("want the server to answer: %s", r)
				}
				return
			}
			if r.code != 1 {
				t.Fatalf("want a refusal: %s", r)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("the refusal lacks %q: %s", w, r)
				}
			}
			if u, err := url.Parse(pgA); err == nil {
				if pw, set := u.User.Password(); set && strings.Contains(r.stderr, pw) {
					t.Errorf("the refusal shows the password: %s", r)
				}
			}
		})
	}
	if out := ok(t, "agent", "list", "--data", boltDir); strings.Contains(out, "zed") {
		t.Fatalf("the refused agent create wrote to the server's data:\n%s", out)
	}
}

// TestServeBesideAServer: kfa serve on a --data where a server answers is
// refused at once, naming that server and where its data is. On
// PostgreSQL nothing else stopped it: it waited forever for the search
// index the first server holds.
func TestServeBesideAServer(t *testing.T) {
	dir := shortTempDir(t)
	startServer(t, dir, nil)
	for _, tc := range []struct {
		name  string
		store func(t *testing.T) []string
	}{
		{"on bbolt", func(*testing.T) []string { return nil }},
		{"on PostgreSQL", func(t *testing.T) []string { return []string{"--store", pgtest.URL(t)} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"serve", "--data", dir, "--addr", "127.0.0.1:0"}, tc.store(t)...)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var out, errb bytes.Buffer
			e := env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
			code := runEnv(ctx, e, args)
			if ctx.Err() != nil {
				t.Fatal("kfa serve beside a running server still waited after 30s")
			}
			if code != 1 || !strings.Contains(errb.String(), "already answers on "+filepath.Join(dir, "kfa.sock")) ||
				!strings.Contains(errb.String(), filepath.Join(dir, "kfa.db")) {
				t.Fatalf("exit %d, want 1 naming the running server and its data:\n%s", code, errb.String())
			}
		})
	}
	if out := ok(t, "stats", "--data", dir); !strings.Contains(out, "Records") {
		t.Fatalf("the first server no longer answers on its socket:\n%s", out)
	}
}
