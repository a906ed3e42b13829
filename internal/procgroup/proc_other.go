//go:build !unix

package procgroup

import (
	"os"
	"syscall"
)

// This system has no process groups and no signals. A child's group is the child alone: Signal
// ends that one process (what it started may outlive it; a Windows job object would be the
// fix), and there is no group left to wait for or list.

// Attr is nil: there is no process group to ask for.
func Attr() *syscall.SysProcAttr { return nil }

// GroupAttr is nil: there is no process group to ask for.
func GroupAttr() *syscall.SysProcAttr { return nil }

// Signal ends process pgid whatever sig is, as the nearest thing to signalling its group; sig 0
// only checks that the process exists.
func Signal(pgid int, sig syscall.Signal) error {
	if err := checkSignalTarget(pgid); err != nil {
		return err
	}
	p, err := os.FindProcess(pgid)
	if err != nil || sig == 0 {
		return err
	}
	return p.Kill()
}

// Members is nil: there are no groups to list.
func Members(int) []int { return nil }

// CPUTicks is 0: there is no /proc to read it from here.
func CPUTicks(int) int64 { return 0 }

// Alive is false: once Signal has ended the process there is no group left to wait for.
func Alive(int) bool { return false }

// Children is nil: a process's children are not listed here.
func Children(int) []int { return nil }

// IsZombie is false: there are no zombies to tell apart.
func IsZombie(int) bool { return false }

// Running reports whether process pid can be found.
func Running(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	_ = p.Release()
	return true
}
