//go:build unix && !linux

package upstream

import "syscall"

// groupRunning reports whether a process of group pgid is left (zombies included: there is no
// portable way to tell them apart).
func groupRunning(pgid int) bool { return syscall.Kill(-pgid, 0) == nil }
