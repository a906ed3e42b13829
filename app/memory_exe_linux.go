//go:build linux

package app

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// releaseExecutablePages drops the pages of the program's own file mappings (code and read-only
// data) from the page tables; the ones still in use fault back in from the page cache. Start-up
// runs every package's initialisation and reflects over every tool's types, touching ~20 MiB of
// the binary, of which an idle hub uses ~8 MiB; the kernel would keep the rest mapped, and counted
// in the process's memory, for as long as it runs. MADV_NOHUGEPAGE first, so that what faults back
// is not mapped as 2 MiB huge pages again (a large page-cache folio is still mapped whole, which
// is why the figure depends a little on how the page cache holds the file). Costs one pass over
// /proc/self/smaps and minor faults as code is used again.
func releaseExecutablePages() error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("locating the executable: %w", err)
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return fmt.Errorf("reading our own mappings: %w", err)
	}
	ranges, err := cleanExecutableRanges(f, exe)
	f.Close()
	if err != nil {
		return err
	}
	for _, r := range ranges {
		// The ranges are whole mappings of the program's own file, so the addresses are valid and
		// page aligned; raw syscalls because unix.Madvise wants a []byte over them.
		if _, _, errno := unix.Syscall(unix.SYS_MADVISE, r.start, r.end-r.start, unix.MADV_NOHUGEPAGE); errno != 0 && errno != unix.EINVAL {
			return fmt.Errorf("madvise(MADV_NOHUGEPAGE) %#x-%#x: %w", r.start, r.end, errno)
		}
		if _, _, errno := unix.Syscall(unix.SYS_MADVISE, r.start, r.end-r.start, unix.MADV_DONTNEED); errno != 0 {
			return fmt.Errorf("madvise(MADV_DONTNEED) %#x-%#x: %w", r.start, r.end, errno)
		}
	}
	return nil
}
