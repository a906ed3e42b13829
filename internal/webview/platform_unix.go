//go:build unix

package webview

import "syscall"

// checkPlatform reports whether the browser can be run and cleaned up here (process groups and
// signals): on Unix it can.
func checkPlatform() error { return nil }

// pidAlive reports whether process pid exists.
func pidAlive(pid int) bool { return syscall.Kill(pid, 0) == nil }
