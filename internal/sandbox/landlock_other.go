//go:build !linux

package sandbox

// ABI is 0 off Linux: Landlock is a Linux security module, so servers run unconfined there.
func ABI() int { return 0 }
