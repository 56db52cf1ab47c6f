//go:build !unix

package admin

import "net"

func listenUnixPrivate(path string) (net.Listener, error) {
	return net.Listen("unix", path)
}
