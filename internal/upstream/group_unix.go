//go:build unix

package upstream

import (
	"syscall"
	"time"
)

// termGroup and killGroup signal a server's whole process group (its pid leads it: procAttr).
func termGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGTERM) }
func killGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGKILL) }

// awaitGroupGone waits, up to limit, until no process of group pgid is left running. A SIGKILL
// is delivered when its target next runs, so on a busy machine a killed grandchild can still be
// running when kill returns; the hub says a server is stopped only once its whole group is
// gone. Zombies do not count: they hold no resources, and reaping a reparented grandchild is
// its new parent's business.
func awaitGroupGone(pgid int, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		if !groupRunning(pgid) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(wait)
	}
}
