package testutil

import (
	"errors"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Gone waits until process pid has ended (exited or been killed; a zombie counts as ended) or
// limit passes, and reports whether it ended. It waits on a pidfd, which the kernel makes
// readable when the process ends, so no polling: it works for any process, not only a child.
func Gone(t testing.TB, pid int, limit time.Duration) bool {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return true
	}
	if err != nil {
		t.Fatalf("pidfd_open %d: %v", pid, err)
	}
	defer unix.Close(fd)
	deadline := time.Now().Add(limit)
	for {
		left := time.Until(deadline)
		if left < 0 {
			left = 0
		}
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, int(left.Milliseconds()))
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			t.Fatalf("poll pidfd of %d: %v", pid, err)
		}
		return n > 0
	}
}
