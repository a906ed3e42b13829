//go:build unix && !linux

package procgroup

import (
	"errors"
	"syscall"
)

// Attr puts a child in a new process group that it leads (its pid is the group id), so Signal
// reaches everything it starts that stays in the group. This system has no parent-death signal:
// a child outlives a hub that dies without stopping it.
func Attr() *syscall.SysProcAttr { return GroupAttr() }

// Members cannot list a group without /proc: it is nil.
func Members(int) []int { return nil }

// CPUTicks is 0: there is no /proc to read it from here.
func CPUTicks(int) int64 { return 0 }

// Alive reports whether a process of group pgid is left. Without /proc zombies cannot be told
// apart, so here they count.
func Alive(pgid int) bool { return groupSignallable(pgid) }

// Children cannot list a process's children without /proc: it is nil.
func Children(int) []int { return nil }

// IsZombie cannot tell without /proc: it is false.
func IsZombie(int) bool { return false }

// Running reports whether process pid exists (a zombie included: without /proc it cannot be told
// apart).
func Running(pid int) bool {
	return pid > 0 && !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
