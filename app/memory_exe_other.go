//go:build !linux

package app

// releaseExecutablePages is Linux-only (it reads /proc/self/smaps); elsewhere it does nothing.
func releaseExecutablePages() error { return nil }
