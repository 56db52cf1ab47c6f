package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kfa-project/kfa/admin"
	"github.com/kfa-project/kfa/api"
	"github.com/kfa-project/kfa/server"
	"github.com/kfa-project/kfa/store"
)

// RestoreResult is what kfa restore --json prints.
type RestoreResult struct {
	File     string `json:"file"`
	Database string `json:"database"`
	Bytes    int64  `json:"bytes"`
	SHA256   string `json:"sha256"`
	// Previous is where the replaced database was kept; "" when there was
	// none or --keep-old=false removed it.
	Previous string `json:"previous"`
	// IndexRemoved says the derived search index was deleted, to be
	// rebuilt from the restored records on the next start.
	IndexRemoved bool            `json:"indexRemoved"`
	Check        api.CheckReport `json:"check"`
}

// indexDirName is the search index directory in the data directory; it
// is derived from the records and rebuilt when missing.
const indexDirName = "index"

func runRestore(ctx context.Context, e env, args []string) error {
	var (
		d              dataFlags
		force, keepOld bool
	)
	fs := newFlagSet("restore", "kfa restore FILE [--data DIR] [--force] [--keep-old=false] [--json]",
		"Install the backup FILE as the database of the data directory. The server must be stopped:\n"+
			"restore refuses while anything answers on the admin socket or holds the database lock.\n"+
			"FILE is copied into the data directory and checked there (bbolt's check, a schema this kfa\n"+
			"can open, every kfa invariant) before it replaces kfa.db in one rename; the old file is\n"+
			"kept as kfa.db.bak-<time> unless --keep-old=false. The search index is deleted so that the\n"+
			"next kfa serve rebuilds it from the restored records. Replacing an existing database needs\n"+
			"--force.", e,
		"kfa restore /var/backups/kfa/kfa-20261202T103000Z.db --data /var/lib/kfa --force",
		"kfa restore backup.db --data ./fresh-data")
	d.bind(fs)
	fs.BoolVar(&force, "force", false, "replace the data directory's existing database")
	fs.BoolVar(&keepOld, "keep-old", true, "keep the replaced database as kfa.db.bak-<time>")
	pos, err := parseArgs(fs, args, e)
	if err != nil {
		return err
	}
	if err := wantArgs(pos, 1, "the backup FILE"); err != nil {
		return err
	}
	file := pos[0]
	if fi, err := os.Stat(file); err != nil {
		return fmt.Errorf("backup file: %w", err)
	} else if !fi.Mode().IsRegular() {
		return fmt.Errorf("backup file %s is not a regular file", file)
	}
	dbPath := filepath.Join(d.dir, store.FileName)
	if samePath(file, dbPath) {
		return fmt.Errorf("%s is the database of %s itself", file, d.dir)
	}
	if err := refuseRunningServer(ctx, d, "restore"); err != nil {
		return err
	}
	_, statErr := os.Stat(dbPath)
	exists := statErr == nil
	if exists && !force {
		return fmt.Errorf("%s already holds a database; pass --force to replace it (it is kept as %s.bak-<time>)", d.dir, store.FileName)
	}
	if err := os.MkdirAll(d.dir, 0o700); err != nil {
		return fmt.Errorf("create the data directory: %w", err)
	}
	// Hold the database lock from here to the rename, so that a kfa serve
	// starting meanwhile waits and fails instead of opening a file about
	// to be replaced. Without a database, a placeholder is locked instead.
	created := false
	if !exists {
		f, err := os.OpenFile(dbPath, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return fmt.Errorf("reserve %s: %w", dbPath, err)
		}
		_ = f.Close()
		created = true
	}
	unlock, err := store.LockFile(dbPath, 500*time.Millisecond)
	if err != nil {
		if created {
			_ = os.Remove(dbPath)
		}
		if errors.Is(err, store.ErrLocked) {
			return fmt.Errorf("%s is in use by another process; stop kfa serve (and any kfa command) on %s first", dbPath, d.dir)
		}
		return err
	}
	defer func() { _ = unlock() }()
	installed := false
	defer func() {
		if created && !installed {
			_ = os.Remove(dbPath)
		}
	}()

	tmp, err := createAtomic(dbPath)
	if err != nil {
		return fmt.Errorf("copy into %s: %w", d.dir, err)
	}
	if err := copyInto(tmp, file); err != nil {
		tmp.abort()
		return fmt.Errorf("copy %s: %w", file, err)
	}
	if err := tmp.sync(); err != nil {
		tmp.abort()
		return err
	}
	rep, err := store.VerifyFile(tmp.Name(), 5*time.Second)
	if err != nil {
		tmp.abort()
		// The copy is byte for byte the file: name the file the operator gave.
		return fmt.Errorf("%s is not a usable kfa backup: %s", file, strings.ReplaceAll(err.Error(), tmp.Name(), file))
	}
	if !rep.OK() {
		tmp.abort()
		printCheckReport(e.stderr, server.CheckReportJSON(rep))
		return fmt.Errorf("%s failed verification; nothing was changed", file)
	}
	res := RestoreResult{File: file, Database: dbPath, Bytes: tmp.n, SHA256: tmp.SHA256(), Check: server.CheckReportJSON(rep)}
	res.Check.Path = file
	if exists {
		res.Previous = backupName(dbPath, time.Now())
		if err := os.Rename(dbPath, res.Previous); err != nil {
			tmp.abort()
			return fmt.Errorf("keep the old database: %w", err)
		}
	}
	if err := tmp.commit(); err != nil {
		tmp.abort()
		if res.Previous != "" {
			_ = os.Rename(res.Previous, dbPath)
		}
		return fmt.Errorf("install the backup: %w", err)
	}
	installed = true
	if res.Previous != "" && !keepOld {
		if err := os.Remove(res.Previous); err != nil {
			return fmt.Errorf("restored, but removing the old database %s failed: %w", res.Previous, err)
		}
		res.Previous = ""
	}
	index := filepath.Join(d.dir, indexDirName)
	if _, err := os.Stat(index); err == nil {
		if err := os.RemoveAll(index); err != nil {
			return fmt.Errorf("restored, but removing the stale search index %s failed (remove it by hand before starting kfa serve): %w", index, err)
		}
		res.IndexRemoved = true
	}
	if d.json {
		return printJSON(e.stdout, res)
	}
	fmt.Fprintf(e.stdout, "Restored %s (%s, verified) into %s.\n", file, humanBytes(res.Bytes), dbPath)
	if res.Previous != "" {
		fmt.Fprintf(e.stdout, "The previous database is kept as %s.\n", res.Previous)
	}
	if res.IndexRemoved {
		fmt.Fprintln(e.stdout, "The search index was removed; kfa serve rebuilds it on start.")
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(e.stdout, "note: %s\n", n)
	}
	fmt.Fprintf(e.stdout, "Start the server: %s serve --data %s\n", e.name(), d.dir)
	return nil
}

// refuseRunningServer fails when a kfa process answers on the data
// directory's admin socket; what is the command's name, for the message.
// A socket nobody answers is a dead server's, and the lock decides.
func refuseRunningServer(ctx context.Context, d dataFlags, what string) error {
	sock := d.socket
	if sock == "" {
		sock = filepath.Join(d.dir, admin.SocketName)
	}
	if _, p, ok := answering(ctx, sock); ok {
		return fmt.Errorf("kfa serve (pid %d, version %s) is running on %s; stop it first, then %s", p.PID, p.Version, d.dir, what)
	}
	return nil
}

// backupName is where the replaced database is kept: kfa.db.bak-<UTC time>,
// with a counter when that name is taken.
func backupName(dbPath string, now time.Time) string {
	base := dbPath + ".bak-" + now.UTC().Format("20060102T150405Z")
	name := base
	for i := 2; ; i++ {
		if _, err := os.Lstat(name); errors.Is(err, os.ErrNotExist) {
			return name
		}
		name = fmt.Sprintf("%s-%d", base, i)
	}
}
