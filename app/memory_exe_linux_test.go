//go:build linux

package app

import (
	"os"
	"os/user"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// exeResidentKB sums the resident size of the running binary's code and read-only data mappings.
func exeResidentKB(t *testing.T) int {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	maps, err := executableMappings(f, exe)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, m := range maps {
		if !m.writable {
			total += m.rssKB
		}
	}
	return total
}

// TestReleaseExecutablePages drops the test binary's own code and read-only data from its page
// tables and checks that less of it is resident afterwards and that the program still runs,
// including a call into the C library when cgo is on. (Test binaries are linked by Go's own
// linker and have no relocated read-only segment; the desktop binary, linked externally, has one,
// and the desktop smoke test, which runs it, would crash at start-up if it were dropped.
// TestCleanExecutableRanges checks that such a segment is left alone.)
func TestReleaseExecutablePages(t *testing.T) {
	before := exeResidentKB(t)
	if err := releaseExecutablePages(); err != nil {
		t.Fatal(err)
	}
	after := exeResidentKB(t)
	t.Logf("executable resident: %d kB before, %d kB after", before, after)
	if after >= before {
		t.Fatalf("executable resident %d kB after the release, %d kB before: nothing was dropped", after, before)
	}
	runtime.GC()
	if got := strings.Repeat("ab", 3); got != "ababab" {
		t.Fatalf("after the release: %q", got)
	}
	// With cgo, os/user asks the C library (getpwuid_r), through the relocated segment.
	if u, err := user.LookupId(strconv.Itoa(os.Getuid())); err != nil || u.Uid != strconv.Itoa(os.Getuid()) {
		t.Fatalf("looking up our own user after the release: %v, %v", u, err)
	}
	if err := releaseExecutablePages(); err != nil { // twice is harmless
		t.Fatal(err)
	}
}
