package procgroup

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"syscall"
)

// Attr puts a child in a new process group that it leads (its pid is the group id), so Signal
// reaches everything it starts that stays in the group, and has the kernel SIGKILL the child if
// its parent dies without stopping it.
//
// The parent-death signal is tied to the thread that started the child, not to the hub: the
// kernel sends it when that thread exits (golang/go#27505), and Go ends a thread when a
// goroutine locked to it returns without unlocking. The goroutine that starts the child should
// hold runtime.LockOSThread for as long as it owns the child (internal/upstream's supervisor
// does); otherwise the child can be killed while the hub runs on. Use GroupAttr where that
// cannot be arranged.
func Attr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// Members lists, in ascending order, the live processes of group pgid (zombies do not count).
// It is nil when there are none or /proc cannot be read.
func Members(pgid int) []int {
	if pgid <= 0 {
		return nil // group 0 would list the kernel's threads
	}
	var out []int
	_ = scan(func(s stat) bool {
		if s.pgrp == pgid && !s.dead() {
			out = append(out, s.pid)
		}
		return true
	})
	slices.Sort(out)
	return out
}

// CPUTicks is the CPU time (user and system, in clock ticks) that group pgid's live processes
// have used so far: a group that stops adding to it is idle (a language server done with its
// background work).
func CPUTicks(pgid int) int64 {
	if pgid <= 0 {
		return 0
	}
	var total int64
	_ = scan(func(s stat) bool {
		if s.pgrp == pgid && !s.dead() {
			total += s.cpu
		}
		return true
	})
	return total
}

// Alive reports whether group pgid has a live process (zombies do not count). When /proc cannot
// be read it answers true once kill(-pgid, 0) has found the group: the safe side for callers
// that escalate to SIGKILL or wait.
func Alive(pgid int) bool {
	if !groupSignallable(pgid) {
		return false // nothing left, zombies included
	}
	found := false
	err := scan(func(s stat) bool {
		found = s.pgrp == pgid && !s.dead()
		return !found
	})
	return found || err != nil
}

// Children lists, in ascending order, the processes whose parent is ppid, zombies included (they
// are the ones a reaper looks for). /proc/PID/task/TID/children would be cheaper, but it lists
// one thread's children, and a Go program's children are spread over its threads.
func Children(ppid int) []int {
	var out []int
	_ = scan(func(s stat) bool {
		if s.ppid == ppid {
			out = append(out, s.pid)
		}
		return true
	})
	slices.Sort(out)
	return out
}

// IsZombie reports whether process pid has exited and waits to be reaped (or is being reaped).
// It is false for a process that does not exist.
func IsZombie(pid int) bool {
	s, err := readStat(pid)
	return err == nil && s.dead()
}

// Running reports whether process pid exists and is not a zombie: the package's zombie rule for
// one process.
func Running(pid int) bool {
	if pid <= 0 || errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return false
	}
	s, err := readStat(pid)
	switch {
	case err == nil:
		return !s.dead()
	case errors.Is(err, fs.ErrNotExist):
		// It was reaped between the two looks, or there is no /proc and kill's answer is all
		// there is.
		_, noProc := os.Stat("/proc/self/stat")
		return noProc != nil
	default:
		return true // kill found it, and /proc will not say more (hidepid): the safe side
	}
}

// stat is what the package needs of /proc/PID/stat.
type stat struct {
	pid, ppid, pgrp int
	state           byte
	cpu             int64 // utime + stime, clock ticks
}

// dead reports whether the process has exited: a zombie (Z) or being reaped (X).
func (s stat) dead() bool { return s.state == 'Z' || s.state == 'X' }

// scan calls fn with every process in /proc until fn returns false. A process that exits while
// scan runs is skipped; the error is /proc's own (not mounted, not readable).
func scan(fn func(stat) bool) error {
	d, err := os.Open("/proc")
	if err != nil {
		return err
	}
	// Readdirnames, not ReadDir: no sorting, no lstat, and scan runs in polling loops.
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return fmt.Errorf("read /proc: %w", err)
	}
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid <= 0 {
			continue // not a process
		}
		s, err := readStat(pid)
		if err != nil {
			continue // exited meanwhile
		}
		if !fn(s) {
			return nil
		}
	}
	return nil
}

// readStat reads /proc/PID/stat once; the file is read whole, so its fields are one snapshot.
func readStat(pid int) (stat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return stat{}, err
	}
	s, ok := parseStat(b)
	if !ok {
		return stat{}, fmt.Errorf("/proc/%d/stat: unexpected format %q", pid, b)
	}
	return s, nil
}

// parseStat parses "pid (comm) state ppid pgrp ...". comm is whatever the process named itself
// (its executable's name, or prctl PR_SET_NAME) and may hold spaces, parentheses and newlines,
// so the fields after it are counted from the last ')' of the line, which comm cannot be after.
func parseStat(b []byte) (stat, bool) {
	open := bytes.IndexByte(b, '(')
	end := bytes.LastIndexByte(b, ')')
	if open < 1 || end < open {
		return stat{}, false
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b[:open])))
	if err != nil {
		return stat{}, false
	}
	f := bytes.Fields(b[end+1:])
	if len(f) < 3 || len(f[0]) != 1 {
		return stat{}, false
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	pgrp, err2 := strconv.Atoi(string(f[2]))
	if err1 != nil || err2 != nil {
		return stat{}, false
	}
	s := stat{pid: pid, ppid: ppid, pgrp: pgrp, state: f[0][0]}
	if len(f) > 12 { // utime and stime, fields 14 and 15 of the line
		u, _ := strconv.ParseInt(string(f[11]), 10, 64)
		k, _ := strconv.ParseInt(string(f[12]), 10, 64)
		s.cpu = u + k
	}
	return s, true
}
