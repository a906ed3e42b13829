//go:build unix

package transport

import (
	"io"
	"os"
	"sync"
	"syscall"
)

var (
	stdinOnce sync.Once
	stdinFile io.ReadCloser // kept for the life of the process: its finalizer would close fd 0
)

// pollableStdin returns stdin as a file the Go runtime polls (epoll) instead of reading with a
// blocking system call, when that is safe: stdin is a pipe or a socket (what MCP clients give a
// stdio server) that no other standard stream of ours shares.
//
// Clients spawn servers with blocking stdio descriptors (libuv, Python's subprocess). A blocking
// read parks a whole OS thread in the kernel holding the scheduler's P; when the request arrives
// the reading goroutine hands it to the handler goroutines of another thread or waits for the
// runtime to take the P back. Through the poller the read parks only the goroutine, and the
// request is handled on the thread that woke up. This was the difference between the stdio and
// the Unix-socket transports for a trivial call (docs/benchmarks.md, trivial-call latency).
//
// Terminals and regular files are left alone: O_NONBLOCK is a property of the open file, shared
// with whoever else holds it (a shell's terminal), and regular files are not pollable anyway.
func pollableStdin() io.ReadCloser {
	stdinOnce.Do(func() {
		stdinFile = os.Stdin
		var in syscall.Stat_t
		if syscall.Fstat(0, &in) != nil {
			return
		}
		switch in.Mode & syscall.S_IFMT {
		case syscall.S_IFIFO, syscall.S_IFSOCK:
		default:
			return
		}
		// stdout or stderr on the same pipe or socket (inetd style, `2>&0`) would turn
		// non-blocking too, and their plain writes could then fail with EAGAIN.
		for _, fd := range []int{1, 2} {
			var st syscall.Stat_t
			if syscall.Fstat(fd, &st) == nil && st.Dev == in.Dev && st.Ino == in.Ino {
				return
			}
		}
		if syscall.SetNonblock(0, true) != nil {
			return
		}
		stdinFile = os.NewFile(0, "/dev/stdin") // non-blocking: registered with the poller
	})
	return stdinFile
}
