package admin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
)

// SocketName is the admin socket's file name in the data directory.
const SocketName = "kfa.sock"

// maxSocketPath is the longest unix socket path Linux accepts.
const maxSocketPath = 107

// Listen listens on the unix socket at path, readable and writable by the
// owner only. A stale socket file left by a crashed server is removed: the
// caller holds the store's file lock, so no live server can own it.
func Listen(path string) (net.Listener, error) {
	if len(path) > maxSocketPath {
		return nil, fmt.Errorf("admin: socket path %s is %d bytes, longer than the %d a unix socket allows; use a shorter --data or --admin-socket",
			path, len(path), maxSocketPath)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("admin: remove stale socket: %w", err)
	}
	// The umask covers the window between bind and chmod.
	l, err := listenUnixPrivate(path)
	if err != nil {
		return nil, fmt.Errorf("admin: listen on %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		_ = l.Close()
		return nil, fmt.Errorf("admin: chmod socket: %w", err)
	}
	return l, nil
}

// PipeListener is an in-memory net.Listener whose connections are made by
// its Dial method: it lets a process serve the admin handler to itself.
type PipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

// NewPipeListener returns a ready PipeListener.
func NewPipeListener() *PipeListener {
	return &PipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

// Accept implements net.Listener.
func (l *PipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close implements net.Listener.
func (l *PipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

// Addr implements net.Listener.
func (l *PipeListener) Addr() net.Addr { return pipeAddr{} }

// Dial connects to the listener; its signature fits http.Transport.DialContext.
func (l *PipeListener) Dial(ctx context.Context, _, _ string) (net.Conn, error) {
	server, client := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "in-process" }
