//go:build (desktop || bindings) && linux && cgo

package app

/*
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
static void switchboard_trim_c_heap(void) { malloc_trim(0); }
#else
static void switchboard_trim_c_heap(void) {}
#endif
*/
import "C"

// trimCHeap returns the free pages inside glibc's heaps to the OS (malloc_trim). glibc gives back
// only the top of a heap by itself; GTK and WebKit free most of what they allocate while the window
// loads, which leaves ~2 MiB of free but resident pages in the middle of it. A no-op elsewhere.
func trimCHeap() { C.switchboard_trim_c_heap() }
