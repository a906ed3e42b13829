package webview

import "syscall"

// browserProcAttr gives the browser its own process group (closing kills it and every helper it
// forked in one signal) and asks the kernel to kill it if the hub itself dies.
func browserProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
