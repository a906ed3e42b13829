package app

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// addrRange is a half-open range of virtual addresses, [start, end).
type addrRange struct{ start, end uintptr }

// cleanExecutableRanges reads /proc/PID/smaps and returns the mappings of the executable exe
// that can be dropped from the page tables and faulted back from the file later, unchanged: not
// writable and without anonymous (copy-on-write) pages. A read-only mapping can hold written
// pages: the dynamic linker writes the relocations of a cgo binary's RELRO segment, then makes it
// read-only; dropping those would hand the program the file's unrelocated bytes.
func cleanExecutableRanges(smaps io.Reader, exe string) ([]addrRange, error) {
	var (
		out     []addrRange
		cur     addrRange
		current bool // the mapping being read is one of exe's, not writable
	)
	sc := bufio.NewScanner(smaps)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if head, ok := parseMappingHeader(fields); ok {
			cur, current = head, len(fields) >= 6 && strings.Join(fields[5:], " ") == exe && !strings.Contains(fields[1], "w")
			continue
		}
		if current && fields[0] == "Anonymous:" && len(fields) >= 2 {
			if fields[1] == "0" {
				out = append(out, cur)
			}
			current = false
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading smaps: %w", err)
	}
	return out, nil
}

// parseMappingHeader parses the first line of a mapping in smaps ("start-end perms offset dev
// inode [path]"); the other lines are "Field: value".
func parseMappingHeader(fields []string) (addrRange, bool) {
	if len(fields) < 5 || strings.HasSuffix(fields[0], ":") {
		return addrRange{}, false
	}
	lo, hi, ok := strings.Cut(fields[0], "-")
	if !ok {
		return addrRange{}, false
	}
	start, err1 := strconv.ParseUint(lo, 16, 64)
	end, err2 := strconv.ParseUint(hi, 16, 64)
	if err1 != nil || err2 != nil || end <= start {
		return addrRange{}, false
	}
	return addrRange{uintptr(start), uintptr(end)}, true
}
