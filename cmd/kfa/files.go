package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
)

// atomicFile is a file written under a temporary name next to its final
// path and renamed into place only when complete and on disk, so a reader
// of the final path never sees half a file, and a crash leaves at most a
// stray temporary file.
type atomicFile struct {
	f     *os.File
	final string
	sum   hash.Hash
	n     int64
}

// createAtomic starts a file that will become path. Its mode is 0600.
func createAtomic(path string) (*atomicFile, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, err
	}
	return &atomicFile{f: f, final: path, sum: sha256.New()}, nil
}

// Write implements io.Writer, hashing what it writes.
func (a *atomicFile) Write(p []byte) (int, error) {
	n, err := a.f.Write(p)
	a.sum.Write(p[:n])
	a.n += int64(n)
	return n, err
}

// Name is the temporary path, valid until commit or abort.
func (a *atomicFile) Name() string { return a.f.Name() }

// SHA256 is the hex digest of everything written.
func (a *atomicFile) SHA256() string { return hex.EncodeToString(a.sum.Sum(nil)) }

// sync flushes the file to disk and closes it.
func (a *atomicFile) sync() error {
	if err := a.f.Sync(); err != nil {
		_ = a.f.Close()
		return fmt.Errorf("fsync %s: %w", a.f.Name(), err)
	}
	return a.f.Close()
}

// commit renames the synced file into place and syncs the directory, so
// the rename itself survives a crash.
func (a *atomicFile) commit() error {
	if err := os.Rename(a.f.Name(), a.final); err != nil {
		return err
	}
	return syncDir(filepath.Dir(a.final))
}

// abort closes and removes the temporary file.
func (a *atomicFile) abort() {
	_ = a.f.Close()
	_ = os.Remove(a.f.Name())
}

// syncDir fsyncs a directory, making renames and creations in it durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("fsync directory %s: %w", dir, err)
	}
	return nil
}

// copyInto copies the file at src into a.
func copyInto(a *atomicFile, src string) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(a, f)
	return err
}

// samePath reports whether a and b name the same file (both must exist
// for the inode comparison; otherwise their absolute paths are compared).
func samePath(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	if err1 == nil && err2 == nil {
		return os.SameFile(sa, sb)
	}
	aa, err1 := filepath.Abs(a)
	ab, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == ab
}

// dirExists checks that dir, where a file is to be written, is an
// existing directory, with an error that names it and what to do.
func dirExists(dir string) error {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("the directory %s does not exist; create it first (mkdir -p %s)", dir, dir)
	case err != nil:
		return fmt.Errorf("cannot use the directory %s: %w", dir, unwrapPath(err))
	case !st.IsDir():
		return fmt.Errorf("%s is not a directory", dir)
	}
	return nil
}

// unwrapPath drops the operation and path of an *os.PathError when the
// message already names the place: "permission denied", not "open
// /backups/.kfa.db.tmp-1234: permission denied".
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
