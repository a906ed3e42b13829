//go:build linux

package upstream

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/switchboard-hub/switchboard/internal/procgroup"
)

// A server's process may leave its process group (setsid, as daemons do), and then ending the
// group misses it. The hub is a child subreaper, so such an orphan becomes the hub's child
// rather than init's, and each server's processes carry a marker in their environment
// (serverMarkEnv); when a server stops, the hub ends and reaps every child of its own that
// carries that server's marker. A process that wipes its own environment and leaves its group
// escapes this until the hub exits; Landlock confines it all the same.

// becomeSubreaper makes the hub the reaper of its descendants' orphans.
func becomeSubreaper() error { return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) }

// killOrphans ends and reaps the hub's children that carry mark, other than leader, and what
// each of them leads, until none is left (an orphan's own children become orphans in turn) or
// limit passes.
func killOrphans(mark string, leader int, limit time.Duration) (killed int) {
	self := os.Getpid()
	want := []byte(serverMarkEnv + "=" + mark + "\x00")
	deadline := time.Now().Add(limit)
	for {
		found := 0
		for _, pid := range procgroup.Children(self) {
			if pid == leader {
				continue
			}
			env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
			if err != nil || !bytes.Contains(append(env, 0), want) {
				continue
			}
			found++
			_ = procgroup.Signal(pid, syscall.SIGKILL) // the group it leads, if it does
			_ = syscall.Kill(pid, syscall.SIGKILL)
			var ws syscall.WaitStatus
			if p, _ := syscall.Wait4(pid, &ws, 0, nil); p == pid {
				killed++
			}
		}
		if found == 0 || time.Now().After(deadline) {
			return killed
		}
	}
}

// reapStrays reaps, every interval until stop closes, the hub's zombie children that were
// zombies at the previous round too. Being a subreaper makes the hub the parent of every
// orphan below it (a killed browser's renderers, a daemon's leftovers), and nobody else waits
// for those. A child the hub started itself is waited for by its owner the moment it exits,
// so it is never a zombie across two rounds.
func reapStrays(stop <-chan struct{}, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	self := os.Getpid()
	seen := map[int]bool{}
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		now := map[int]bool{}
		for _, pid := range procgroup.Children(self) {
			if !procgroup.IsZombie(pid) {
				continue
			}
			if seen[pid] {
				var ws syscall.WaitStatus
				_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
				continue
			}
			now[pid] = true
		}
		seen = now
	}
}
