//go:build !linux

package transport

import "net"

func peerOf(c net.Conn) string {
	if _, ok := c.(*net.UnixConn); ok {
		return "unix"
	}
	return c.RemoteAddr().String()
}
