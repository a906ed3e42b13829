//go:build unix && !linux

package process

import (
	"errors"
	"syscall"
)

// pidGone reports whether pid no longer runs. Without /proc a zombie still counts as running.
func pidGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
