//go:build windows

package upstream

import (
	"os"
	"syscall"
	"time"
)

// Windows has no process groups to signal: the server process itself is ended (what it started
// may outlive it; a job object would be the fix).
func procAttr() *syscall.SysProcAttr { return nil }

func termGroup(pid int) { killGroup(pid) }

func killGroup(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}

// awaitGroupGone has no group to wait for on Windows.
func awaitGroupGone(int, time.Duration) bool { return true }
