package app

import "runtime/debug"

// ReleaseStartupMemory collects the garbage that starting up left behind and hands the freed
// pages back to the OS. Building the stack reflects and marshals every tool's schemas and decodes
// JSON: ~10 MiB of short-lived allocations against a live heap of ~3 MiB. main sets GOGC=400,
// whose first collection waits for a 16 MiB heap, which an idle hub does not reach for a long
// time (the runtime forces a collection only every 2 minutes, and then keeps the pages up to the
// heap goal), so without this the garbage stays resident. In the desktop build it also trims the
// C heap, where GTK and WebKit leave freed start-up memory that glibc keeps (trimCHeap), and on
// Linux it unmaps the parts of the binary that only start-up used (releaseExecutablePages). One
// forced collection costs a few milliseconds, once.
func ReleaseStartupMemory() {
	debug.FreeOSMemory()
	trimCHeap()
	// Best effort: if smaps cannot be read the pages stay mapped, as they would without this.
	_ = releaseExecutablePages()
}
