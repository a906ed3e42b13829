//go:build unix && !linux

package upstream

import "syscall"

// procAttr puts a server in its own process group, so the hub can end it with everything it
// started.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
