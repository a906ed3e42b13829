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

// exeMapping is one mapping of the program's own file, as /proc/PID/smaps describes it.
type exeMapping struct {
	addrRange
	writable bool
	rssKB    int // resident
	anonKB   int // copy-on-write pages: written since the file was mapped
}

// executableMappings reads /proc/PID/smaps and returns the mappings of the file exe.
func executableMappings(smaps io.Reader, exe string) ([]exeMapping, error) {
	var out []exeMapping
	var cur *exeMapping // the mapping being read, when it is one of exe's
	sc := bufio.NewScanner(smaps)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if head, ok := parseMappingHeader(fields); ok {
			cur = nil
			if len(fields) >= 6 && strings.Join(fields[5:], " ") == exe {
				out = append(out, exeMapping{addrRange: head, writable: strings.Contains(fields[1], "w")})
				cur = &out[len(out)-1]
			}
			continue
		}
		if cur == nil || len(fields) < 2 {
			continue
		}
		switch fields[0] {
		case "Rss:":
			cur.rssKB, _ = strconv.Atoi(fields[1])
		case "Anonymous:":
			cur.anonKB, _ = strconv.Atoi(fields[1])
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading smaps: %w", err)
	}
	return out, nil
}

// cleanExecutableRanges returns the mappings of exe in smaps that can be dropped from the page
// tables and faulted back from the file later, unchanged: not writable and without anonymous
// (copy-on-write) pages. A read-only mapping can hold written pages: the dynamic linker writes
// the relocations of a cgo binary's RELRO segment, then makes it read-only; dropping those would
// hand the program the file's unrelocated bytes.
func cleanExecutableRanges(smaps io.Reader, exe string) ([]addrRange, error) {
	maps, err := executableMappings(smaps, exe)
	if err != nil {
		return nil, err
	}
	var out []addrRange
	for _, m := range maps {
		if !m.writable && m.anonKB == 0 {
			out = append(out, m.addrRange)
		}
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
