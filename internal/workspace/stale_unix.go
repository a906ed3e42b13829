//go:build unix

package workspace

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"
)

// staleWriter reports whether the temp files of pid are left over from an interrupted write:
// the process is gone (or a zombie), or its PID now belongs to a program other than switchboard.
// This process's own temp files are never stale (its writes may be running), nor are those of
// another live switchboard (a second hub on the same tree). "switchboard" is a process whose
// command name is switchboard's or this process's own (a test binary re-executing itself).
// Without /proc only dead PIDs count. PIDs of another PID namespace (a hub in a container writing
// to a shared tree) cannot be told apart; such setups should not share a workspace.
func staleWriter(pid int) bool {
	if pid == os.Getpid() {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		if _, serr := os.Stat("/proc/self/stat"); serr != nil { // no /proc: ask the kernel
			return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
		}
		return errors.Is(err, os.ErrNotExist)
	}
	// "pid (comm) S ...": the state follows the last ')' (comm may contain one).
	if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
		if s := stat[i+2]; s == 'Z' || s == 'X' {
			return true
		}
	}
	comm, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	name := string(bytes.TrimSpace(comm))
	return name != "switchboard" && name != selfComm()
}

// selfComm is this process's command name as the kernel reports it (at most 15 bytes).
func selfComm() string {
	b, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		return ""
	}
	return string(bytes.TrimSpace(b))
}
