package app

import (
	"slices"
	"strings"
	"testing"
)

func TestCleanExecutableRanges(t *testing.T) {
	const exe = "/opt/switch board/bin/switchboard"
	mapping := func(header, anon string) string {
		return header + "\nSize: 8 kB\nRss: 8 kB\nAnonymous: " + anon + " kB\nVmFlags: rd mr mw me\n"
	}
	smaps := strings.Join([]string{
		mapping("00400000-00408000 r--p 00000000 fe:00 42 "+exe, "0"),                      // ELF header: dropped
		mapping("00408000-00eb2000 r-xp 00008000 fe:00 42 "+exe, "0"),                      // code: dropped
		mapping("00eb2000-01c23000 r--p 00ab2000 fe:00 42 "+exe, "0"),                      // read-only data: dropped
		mapping("01c23000-01c24000 r--p 01823000 fe:00 42 "+exe, "4"),                      // RELRO, relocated: kept
		mapping("01c24000-01da7000 rw-p 01824000 fe:00 42 "+exe, "0"),                      // writable data: kept
		mapping("7f0000000000-7f0000100000 r-xp 00000000 fe:00 7 /usr/lib/libc.so.6", "0"), // not ours
		mapping("7f0000100000-7f0000200000 r-xp 00000000 fe:00 43 "+exe+".old", "0"),       // another file
		mapping("7f0000200000-7f0000300000 rw-p 00000000 00:00 0", "1024"),                 // anonymous
		mapping("7f0000300000-7f0000400000 r-xp 00000000 fe:00 42 "+exe+" (deleted)", "0"), // replaced on disk
	}, "")
	got, err := cleanExecutableRanges(strings.NewReader(smaps), exe)
	if err != nil {
		t.Fatal(err)
	}
	want := []addrRange{{0x400000, 0x408000}, {0x408000, 0xeb2000}, {0xeb2000, 0x1c23000}}
	if !slices.Equal(got, want) {
		t.Fatalf("got %x, want %x", got, want)
	}
}
