package process

import (
	"errors"
	"os"
	"strconv"
	"syscall"
)

// pidGone reports whether pid no longer runs: it does not exist, or it is a zombie waiting for a
// reaper that is not us (orphans belong to init).
func pidGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	state, _, ok := parseStat(stat)
	return ok && (state == 'Z' || state == 'X')
}
