// Package procgroup is the hub's one account of the process groups its children lead: the
// attributes that put a child in a group of its own (and, on Linux, end it with the hub), who is
// in a group, whether a group is still alive, signalling it and waiting until it is gone, and a
// process's children. internal/process, internal/upstream and internal/webview use it, and so do
// the tests that check what a stopped process left behind.
//
// The zombie rule, the same for every question the package answers: a process that has exited
// but not been reaped yet (a zombie, state Z, or one being reaped, state X) is not alive. It runs
// no code, holds no memory, files or ports, and cannot be signalled; it waits only for its parent
// to collect its exit status. A stopped group's leftovers are often such orphans, reparented to
// an init that may never reap them (a container's PID 1 frequently does not), so a rule that
// counted them would have every caller wait out its whole limit for processes that are already
// gone. kill(-pgid, 0) cannot tell zombies apart, so on Linux the package reads /proc; elsewhere
// it has only kill, and a zombie there still counts (the functions' comments say which answers
// are weaker without /proc).
package procgroup

import (
	"context"
	"fmt"
	"syscall"
	"time"
)

// maxPoll caps the interval at which WaitGone looks again. A group's end has no event to wait on
// (a pidfd covers one process, not a group), so WaitGone polls: at once, then at intervals that
// double from a millisecond, because most groups are gone within a few milliseconds of a SIGKILL
// and the rest may take long enough that looking every few milliseconds only costs /proc scans.
const maxPoll = 20 * time.Millisecond

// WaitGone waits until no live process is left in group pgid (zombies do not count) and returns
// nil, or returns an error wrapping the context's cause when ctx ends first. A SIGKILL takes
// effect when its target next runs, so on a busy machine a killed process can still be alive
// when kill returns; callers that must not report a group stopped before it is bound the wait
// with context.WithTimeout, since a process in uninterruptible sleep can outlast any signal.
func WaitGone(ctx context.Context, pgid int) error {
	for wait := time.Millisecond; ; wait = min(2*wait, maxPoll) {
		if !Alive(pgid) {
			return nil
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("process group %d still has live processes: %w", pgid, context.Cause(ctx))
		case <-t.C:
		}
	}
}

// WaitIdle waits until group pgid has used no CPU for a second (CPUTicks unchanged) and returns
// nil, or the context's cause when ctx ends first. A language server goes on checking a whole
// module in the background after its first answers, without reporting progress; the benchmarks
// time their calls only once it is idle. Where CPUTicks cannot be read it returns at once.
func WaitIdle(ctx context.Context, pgid int) error {
	last := CPUTicks(pgid)
	for {
		t := time.NewTimer(time.Second)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("process group %d still busy: %w", pgid, context.Cause(ctx))
		case <-t.C:
		}
		now := CPUTicks(pgid)
		if now == last {
			return nil
		}
		last = now
	}
}

// checkSignalTarget refuses the process groups no caller means: 0 and negative ids (kill would
// read them as "my own group" or "every process I may signal") and 1, init's group.
func checkSignalTarget(pgid int) error {
	if pgid <= 1 {
		return fmt.Errorf("signal process group %d: not a group the hub started: %w", pgid, syscall.EINVAL)
	}
	return nil
}
