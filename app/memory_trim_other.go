//go:build !((desktop || bindings) && linux && cgo)

package app

// trimCHeap has nothing to do without the desktop UI's C libraries (see memory_trim_glibc.go).
func trimCHeap() {}
