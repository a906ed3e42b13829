//go:build unix && !linux

package webview

import "syscall"

// browserProcAttr gives the browser its own process group, so closing kills it and every helper
// it forked in one signal. This system has no parent-death signal: a browser outlives a hub that
// crashes, and removeStaleProfiles cleans up its profile later.
func browserProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
