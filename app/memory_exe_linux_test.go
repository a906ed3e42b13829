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
	data, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	total, ours := 0, false
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if _, ok := parseMappingHeader(fields); ok {
			ours = len(fields) >= 6 && fields[5] == exe && !strings.Contains(fields[1], "w")
			continue
		}
		if ours && len(fields) >= 2 && fields[0] == "Rss:" {
			kb, _ := strconv.Atoi(fields[1])
			total += kb
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
