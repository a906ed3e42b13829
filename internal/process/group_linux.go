package process

import (
	"bytes"
	"os"
	"strconv"
)

// groupHasLiveMember reports whether a process that is not a zombie belongs to group pgid, by
// scanning /proc. When /proc cannot be read it answers true, the safe side for callers that then
// escalate to SIGKILL.
func groupHasLiveMember(pgid int) bool {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	for _, e := range entries {
		name := e.Name()
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		stat, err := os.ReadFile("/proc/" + name + "/stat")
		if err != nil {
			continue // exited while we looked
		}
		state, group, ok := parseStat(stat)
		if ok && group == pgid && state != 'Z' && state != 'X' {
			return true
		}
	}
	return false
}

// parseStat extracts the state and process group from /proc/PID/stat: "pid (comm) S ppid pgrp
// ...". comm may contain spaces and parentheses, so parsing starts after the last ')'.
func parseStat(stat []byte) (state byte, pgrp int, ok bool) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, 0, false
	}
	fields := bytes.Fields(stat[i+1:])
	if len(fields) < 3 || len(fields[0]) != 1 {
		return 0, 0, false
	}
	pg, err := strconv.Atoi(string(fields[2]))
	if err != nil {
		return 0, 0, false
	}
	return fields[0][0], pg, true
}
