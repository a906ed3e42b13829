//go:build unix

package mcp

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user and system) this process has used so far: benchmarks report
// it per call beside wall time, which on a machine shared with other jobs is mostly waiting.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
