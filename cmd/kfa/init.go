package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kfa-project/kfa/store"
)

// InitResult is what kfa init --json prints.
type InitResult struct {
	Database string `json:"database"`
	// Created is false when a database was already there (init changes
	// nothing then).
	Created bool `json:"created"`
}

func runInit(ctx context.Context, e env, args []string) error {
	var d dataFlags
	fs := newFlagSet("init", "kfa init [--data DIR] [--json]",
		"Create an empty kfa database in the data directory (and the directory itself), so that\n"+
			"agents can be created and records imported before the server first starts. kfa serve\n"+
			"does the same when it starts on an empty directory; no other command creates a database,\n"+
			"so a mistyped --data is an error rather than a second, empty database. An existing\n"+
			"database is left as it is.", e,
		"kfa init --data /var/lib/kfa",
		"kfa init && kfa records import samples/records.jsonl")
	d.bind(fs)
	pos, err := parseArgs(fs, args, e)
	if err != nil {
		return err
	}
	if err := wantArgs(pos, 0, ""); err != nil {
		return err
	}
	path := filepath.Join(d.dir, store.FileName)
	_, statErr := os.Stat(path)
	existed := statErr == nil
	if statErr != nil && !errors.Is(statErr, os.ErrNotExist) {
		return statErr
	}
	c, done, err := connect(ctx, d, true)
	if err != nil {
		return err
	}
	defer done()
	if _, err := c.Ping(ctx); err != nil {
		return plain(err)
	}
	if d.json {
		return printJSON(e.stdout, InitResult{Database: path, Created: !existed})
	}
	if existed {
		fmt.Fprintf(e.stdout, "A kfa database is already at %s; nothing changed.\n", path)
		return nil
	}
	fmt.Fprintf(e.stdout, "Created an empty kfa database at %s.\nStart the server with: %s serve --data %s\n", path, e.name(), d.dir)
	return nil
}
