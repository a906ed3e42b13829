package transport

import (
	"fmt"
	"net"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// peerOf describes the other end of a connection. For Unix sockets the kernel tells us the peer's
// pid (SO_PEERCRED), which the dashboard shows as the client's process.
func peerOf(c net.Conn) string {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return c.RemoteAddr().String()
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return "unix"
	}
	var cred *unix.Ucred
	_ = raw.Control(func(fd uintptr) {
		cred, err = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	})
	if err != nil || cred == nil {
		return "unix"
	}
	name := ""
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", cred.Pid)); err == nil {
		name = " (" + strings.TrimSpace(string(b)) + ")"
	}
	return fmt.Sprintf("pid %d%s", cred.Pid, name)
}
