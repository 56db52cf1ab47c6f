package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/kfa-project/kfa/server"
	"github.com/kfa-project/kfa/store"
)

// BackupResult is what kfa backup --json prints.
type BackupResult struct {
	File   string `json:"file"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
	// Source is "server" when the running server made the copy, "direct"
	// when kfa opened the file itself.
	Source     string `json:"source"`
	Verified   bool   `json:"verified"`
	DurationMS int64  `json:"durationMs"`
}

func runBackup(ctx context.Context, e env, args []string) error {
	var (
		d             dataFlags
		force, verify bool
	)
	fs := newFlagSet("backup", "kfa backup FILE [--force] [--verify=false] [--json]",
		"Write a consistent copy of the database to FILE while the server keeps running. The\n"+
			"copy is the database as of one moment (a bbolt read transaction streamed over the admin\n"+
			"socket; writers are not held up). It is written next to FILE under a temporary name,\n"+
			"fsynced, checked with everything kfa check verifies, and only then renamed to FILE, so\n"+
			"FILE is always either absent, the previous backup, or a complete and verified one.\n"+
			"Without a running server kfa opens the file itself and does the same. The copy holds\n"+
			"credential hashes and the page-token secret: keep it as private as the data directory.", e,
		"kfa backup /var/backups/kfa/kfa-$(date -u +%Y%m%dT%H%M%SZ).db",
		"kfa backup --data /var/lib/kfa --force /var/backups/kfa/latest.db --json")
	d.bind(fs)
	fs.BoolVar(&force, "force", false, "replace FILE if it exists")
	fs.BoolVar(&verify, "verify", true, "check the copy (bbolt and kfa invariants) before keeping it")
	pos, err := parseArgs(fs, args, e)
	if err != nil {
		return err
	}
	if err := wantArgs(pos, 1, "the backup FILE"); err != nil {
		return err
	}
	file := pos[0]
	if samePath(file, filepath.Join(d.dir, store.FileName)) {
		return fmt.Errorf("%s is the live database; write the backup somewhere else", file)
	}
	if _, err := os.Stat(file); err == nil && !force {
		return fmt.Errorf("%s exists; pass --force to replace it", file)
	}
	if err := dirExists(filepath.Dir(file)); err != nil {
		return err
	}
	c, done, err := connect(ctx, d, false)
	if err != nil {
		return err
	}
	defer done()
	ping, err := c.Ping(ctx)
	if err != nil {
		return plain(err)
	}
	start := time.Now()
	out, err := createAtomic(file)
	if err != nil {
		return fmt.Errorf("cannot write the backup in %s: %w", filepath.Dir(file), unwrapPath(err))
	}
	n, err := c.Backup(ctx, out)
	if err == nil {
		err = out.sync()
	}
	if err != nil {
		out.abort()
		return plain(err)
	}
	if verify {
		rep, err := store.VerifyFile(out.Name(), 5*time.Second)
		if err == nil && !rep.OK() {
			printCheckReport(e.stderr, server.CheckReportJSON(rep))
			err = fmt.Errorf("the copy failed verification; the database itself likely has the same problems (run '%s check')", e.name())
		}
		if err != nil {
			out.abort()
			return err
		}
	}
	if err := out.commit(); err != nil {
		out.abort()
		return fmt.Errorf("put the backup in place: %w", err)
	}
	res := BackupResult{File: file, Bytes: n, SHA256: out.SHA256(), Source: ping.Mode, Verified: verify,
		DurationMS: time.Since(start).Milliseconds()}
	if d.json {
		return printJSON(e.stdout, res)
	}
	from := "the running server (pid " + fmt.Sprint(ping.PID) + ")"
	if ping.Mode != "server" {
		from = "the database file (no server running)"
	}
	checked := "verified"
	if !verify {
		checked = "not verified"
	}
	fmt.Fprintf(e.stdout, "Backed up %s from %s to %s in %s (%s).\nsha256 %s\n", humanBytes(n), from, file,
		time.Since(start).Round(time.Millisecond), checked, res.SHA256)
	return nil
}
