//go:build linux

package upstream

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// groupRunning reports whether a process of group pgid is alive and not a zombie. kill(-pgid, 0)
// also counts zombies, which a container's init may leave unreaped for good, so Linux reads
// /proc.
func groupRunning(pgid int) bool {
	if err := syscall.Kill(-pgid, 0); err != nil {
		return false // ESRCH: nothing left, zombies included
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	want := strconv.Itoa(pgid)
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses.
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 2 && f[2] == want && f[0] != "Z" {
			return true
		}
	}
	return false
}
