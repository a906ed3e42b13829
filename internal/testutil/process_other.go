//go:build !linux

package testutil

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// Gone waits until process pid has ended or limit passes, and reports whether it ended. Without
// Linux's pidfd it checks the process again and again.
func Gone(t testing.TB, pid int, limit time.Duration) bool {
	t.Helper()
	return Poll(limit, func() bool {
		p, err := os.FindProcess(pid)
		return err != nil || p.Signal(syscall.Signal(0)) != nil
	})
}
