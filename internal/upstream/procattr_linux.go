package upstream

import "syscall"

// procAttr puts a server in its own process group (so the hub can end it with everything it
// started) and has the kernel kill it if the hub dies without stopping it.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
