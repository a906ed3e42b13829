//go:build unix

package procgroup

import (
	"fmt"
	"syscall"
)

// GroupAttr puts a child in a new process group that it leads (its pid is the group id), so
// Signal reaches everything it starts that stays in the group. Unlike Attr it asks for no
// parent-death signal: for children started from any goroutine, whose thread Go may end while
// the child runs (see Attr).
func GroupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// Signal sends sig to every process in group pgid; sig 0 only checks that one can be signalled.
// It refuses the hub's own group, which no child started with Attr or GroupAttr is in: a
// mistaken id must not signal the hub. The error wraps the system's (syscall.ESRCH when the
// group is gone).
func Signal(pgid int, sig syscall.Signal) error {
	if err := checkSignalTarget(pgid); err != nil {
		return err
	}
	if pgid == syscall.Getpgrp() {
		return fmt.Errorf("signal process group %d: it is the hub's own: %w", pgid, syscall.EINVAL)
	}
	if err := syscall.Kill(-pgid, sig); err != nil {
		return fmt.Errorf("signal process group %d with %v: %w", pgid, sig, err)
	}
	return nil
}

// groupSignallable reports whether kill(-pgid, 0) succeeds: some process of the group exists
// (zombies included) and can be signalled. A group whose only members the hub may not signal
// counts as gone: the hub could not end them either.
func groupSignallable(pgid int) bool { return pgid > 0 && syscall.Kill(-pgid, 0) == nil }
