package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/kfa-project/kfa/server"
	"github.com/kfa-project/kfa/store"
	"github.com/kfa-project/kfa/store/postgres"
	"github.com/kfa-project/kfa/store/transfer"
)

// MigrateResult is what kfa migrate --json prints.
type MigrateResult struct {
	From   string         `json:"from"` // a file path, or the database URL without its password
	To     string         `json:"to"`
	Counts map[string]int `json:"counts"`
}

func runMigrate(ctx context.Context, e env, args []string) error {
	var (
		d        dataFlags
		from, to string
	)
	fs := newFlagSet("migrate", "kfa migrate --to postgres://... [--data DIR] | kfa migrate --from postgres://... --to FILE [--json]",
		"Copy every kfa store between the bbolt file and PostgreSQL: agents and credentials (hashes),\n"+
			"tasks, discussions, replies, inboxes, rate windows, knowledge records and their change\n"+
			"feed, push configs and deliveries, signing keys, web sessions, and the secret (page tokens\n"+
			"keep working). Indexes, counters and discussion members are rebuilt at the destination.\n\n"+
			"--to postgres://... copies the bbolt file of --data, which no server may be running on,\n"+
			"into an EMPTY PostgreSQL database (the schema is made if missing; a database holding kfa\n"+
			"data is refused). --from postgres://... --to FILE copies the database into a new bbolt\n"+
			"FILE (refused if it exists; put it in a data directory as kfa.db). Stop every kfa serve on\n"+
			"the source first: writes made during the copy are not carried. The counts of each kind are\n"+
			"printed; the database password never is.", e,
		"kfa migrate --data /var/lib/kfa --to 'postgres://kfa:PASSWORD@db.internal:5432/kfa'",
		"kfa migrate --from 'postgres://kfa:PASSWORD@db.internal:5432/kfa' --to /var/lib/kfa-new/kfa.db")
	d.bindFile(fs)
	fs.StringVar(&from, "from", "", "source PostgreSQL `URL` (default: the bbolt file of --data)")
	fs.StringVar(&to, "to", "", "destination: a PostgreSQL `URL`, or with --from a new bbolt file")
	pos, err := parseArgs(fs, args, e)
	if err != nil {
		return err
	}
	if err := wantArgs(pos, 0, ""); err != nil {
		return err
	}
	var res MigrateResult
	switch {
	case to == "":
		return usagef("--to is required: a postgres:// URL, or with --from a new bbolt file")
	case from == "" && server.IsPostgresURL(to):
		res, err = migrateToPostgres(ctx, d, to)
	case server.IsPostgresURL(from) && !server.IsPostgresURL(to):
		res, err = migrateFromPostgres(ctx, from, to)
	case from != "" && !server.IsPostgresURL(from):
		return usagef("--from takes a postgres:// URL (the bbolt source is the file of --data)")
	default:
		return usagef("copy either the bbolt file of --data --to a postgres:// URL, or --from a postgres:// URL --to a new file")
	}
	if err != nil {
		return err
	}
	if d.json {
		return printJSON(e.stdout, res)
	}
	fmt.Fprintf(e.stdout, "copied %s to %s:\n", res.From, res.To)
	for _, c := range countsOf(res.Counts) {
		fmt.Fprintf(e.stdout, "  %-16s %d\n", c.Kind, c.N)
	}
	return nil
}

// countsOf lists counts in transfer's order.
func countsOf(m map[string]int) []transfer.Count {
	var out []transfer.Count
	for _, c := range (&transfer.Data{}).Counts() {
		out = append(out, transfer.Count{Kind: c.Kind, N: m[c.Kind]})
	}
	return out
}

func resultOf(from, to string, data *transfer.Data) MigrateResult {
	r := MigrateResult{From: from, To: to, Counts: map[string]int{}}
	for _, c := range data.Counts() {
		r.Counts[c.Kind] = c.N
	}
	return r
}

// redactURL is u without its password.
func redactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "the database"
	}
	return p.Redacted()
}

// migrateOpenTimeout bounds connecting to PostgreSQL.
const migrateOpenTimeout = 30 * time.Second

func openPG(ctx context.Context, u string) (*postgres.DB, error) {
	octx, cancel := context.WithTimeout(ctx, migrateOpenTimeout)
	defer cancel()
	return postgres.Open(octx, u, postgres.Options{MaxConns: 2})
}

func migrateToPostgres(ctx context.Context, d dataFlags, to string) (MigrateResult, error) {
	if err := refuseRunningServer(ctx, d, "migrate"); err != nil {
		return MigrateResult{}, err
	}
	path := filepath.Join(d.dir, store.FileName)
	if _, err := os.Stat(path); err != nil {
		return MigrateResult{}, fmt.Errorf("source: %w", err)
	}
	src, err := store.Open(path, store.Options{ReadOnly: true})
	if err != nil {
		return MigrateResult{}, err
	}
	data, err := src.Dump()
	_ = src.Close()
	if err != nil {
		return MigrateResult{}, err
	}
	dst, err := openPG(ctx, to)
	if err != nil {
		return MigrateResult{}, err
	}
	defer dst.Close()
	if err := dst.Load(ctx, data); err != nil {
		return MigrateResult{}, err
	}
	return resultOf(path, redactURL(to), data), nil
}

func migrateFromPostgres(ctx context.Context, from, to string) (MigrateResult, error) {
	if _, err := os.Stat(to); err == nil {
		return MigrateResult{}, fmt.Errorf("%s exists; kfa migrate writes a new file only", to)
	}
	src, err := openPG(ctx, from)
	if err != nil {
		return MigrateResult{}, err
	}
	data, err := src.Dump(ctx)
	_ = src.Close()
	if err != nil {
		return MigrateResult{}, err
	}
	if err := store.LoadFile(to, data); err != nil {
		return MigrateResult{}, err
	}
	return resultOf(redactURL(from), to, data), nil
}
