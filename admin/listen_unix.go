//go:build unix

package admin

import (
	"net"
	"syscall"
)

// listenUnixPrivate binds with a umask that leaves the socket owner-only
// from its first moment. The umask is process-wide; this runs once, at
// start-up, before the server creates any other file.
func listenUnixPrivate(path string) (net.Listener, error) {
	old := syscall.Umask(0o177)
	defer syscall.Umask(old)
	return net.Listen("unix", path)
}
