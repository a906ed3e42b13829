//go:build unix

package upstream

import "syscall"

// termGroup and killGroup signal a server's whole process group (its pid leads it: procAttr).
func termGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGTERM) }
func killGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGKILL) }
