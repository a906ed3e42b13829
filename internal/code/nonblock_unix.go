//go:build unix

package code

import "syscall"

// syscallNonblock opens files without blocking on a FIFO (checked and refused after the open).
const syscallNonblock = syscall.O_NONBLOCK
