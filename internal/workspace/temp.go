package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Temp files of writes. WriteFile (file_write, file_edit) and file_patch stage new content in a
// sibling named
//
//	.NAME.switchboard-PID-N.tmp
//
// (NAME the target's name, PID the writing hub's process ID, N a per-process counter) and rename
// it over the target. A hub killed between the two (SIGKILL, power loss) leaves the temp file
// behind. The name is what lets the hub recognise it: listings (dir_list, file_glob, file_grep,
// rag_ingest) never show such names, live or stale, and a sweep at start (StartSweep) removes
// those whose PID is no longer a running switchboard.
const tempMarker = ".switchboard-"

var tempSeq atomic.Uint64

// TempName returns a fresh temp-file name for a write of base (a file name, not a path), in
// the pattern above.
func TempName(base string) string {
	return fmt.Sprintf(".%s%s%d-%d.tmp", base, tempMarker, os.Getpid(), tempSeq.Add(1))
}

// IsTempName reports whether name (a file name, not a path) is a write's temp file.
func IsTempName(name string) bool {
	_, ok := tempPID(name)
	return ok
}

// tempPID parses a temp-file name and returns the PID of the hub that wrote it.
func tempPID(name string) (int, bool) {
	if len(name) < 2 || name[0] != '.' {
		return 0, false
	}
	rest, ok := strings.CutSuffix(name, ".tmp")
	if !ok {
		return 0, false
	}
	i := strings.LastIndexByte(rest, '-')
	if i < 0 || !allDigits(rest[i+1:]) {
		return 0, false
	}
	rest = rest[:i]
	j := strings.LastIndexByte(rest, '-')
	if j < 0 || !allDigits(rest[j+1:]) {
		return 0, false
	}
	pid, err := strconv.Atoi(rest[j+1:])
	if err != nil || pid <= 0 {
		return 0, false
	}
	// rest[:j+1] is ".NAME.switchboard-", with NAME not empty.
	if !strings.HasSuffix(rest[:j+1], tempMarker) || j+1 < len(tempMarker)+2 {
		return 0, false
	}
	return pid, true
}

func allDigits(s string) bool {
	if s == "" || len(s) > 19 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Sweep limits. The sweep runs in the background (StartSweep), so it never delays the hub's first
// answer, and it stops after MaxSweepEntries directory entries so that a huge tree (a monorepo
// with its node_modules) does not keep the disk busy after every start: a temp file it does not
// reach stays hidden from every listing and is only wasted space. Measured: a warm sweep of
// GOROOT/src (12,802 entries) takes 80-130 ms on the shared 2-core VM under load (load average
// 9), so the cap is one to two seconds of background work.
const (
	MaxSweepEntries = 200_000
	MaxSweepTime    = time.Minute
)

// SweepResult says what a sweep did.
type SweepResult struct {
	Removed []string // slash paths relative to the root
	Entries int      // directory entries looked at
	Partial bool     // stopped at MaxSweepEntries, MaxSweepTime or cancellation
}

// SweepTemps removes the temp files of interrupted writes under the root: regular files named
// as TempName makes them whose PID is not a running switchboard process (staleWriter). It looks
// at no more than maxEntries entries (<= 0: MaxSweepEntries) and stops when ctx ends. Symlinks
// are not followed; directories that cannot be read are skipped.
func (r *Root) SweepTemps(ctx context.Context, maxEntries int) (SweepResult, error) {
	if maxEntries <= 0 {
		maxEntries = MaxSweepEntries
	}
	var res SweepResult
	stale := map[int]bool{} // one liveness check per PID
	errStop := errors.New("stop")
	err := fs.WalkDir(safeRawFS{r.root}, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if d != nil && d.IsDir() && p != "." {
				return fs.SkipDir
			}
			return nil
		}
		if ctx.Err() != nil || res.Entries >= maxEntries {
			res.Partial = true
			return errStop
		}
		res.Entries++
		if !d.Type().IsRegular() {
			return nil
		}
		pid, ok := tempPID(d.Name())
		if !ok {
			return nil
		}
		s, known := stale[pid]
		if !known {
			s = staleWriter(pid)
			stale[pid] = s
		}
		if s && r.root.Remove(filepath.FromSlash(p)) == nil {
			res.Removed = append(res.Removed, p)
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return res, fmt.Errorf("sweep temp files in %s: %w", r.dir, err)
	}
	return res, ctx.Err()
}

// safeRawFS is safeFS without the temp-file filter: the sweep is the one walker that must see them.
type safeRawFS struct{ root *os.Root }

func (s safeRawFS) Open(name string) (fs.File, error) { return safeFS(s).Open(name) }

func (s safeRawFS) ReadDir(name string) ([]fs.DirEntry, error) {
	return safeFS(s).readDir(name, false)
}

// StartSweep runs SweepTemps in a background goroutine, once per Root; onDone (may be nil) gets
// its result. The goroutine belongs to the Root: Close cancels it and waits for it to end.
func (r *Root) StartSweep(onDone func(SweepResult, error)) {
	r.sweepMu.Lock()
	defer r.sweepMu.Unlock()
	if r.sweepDone != nil || r.closed {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), MaxSweepTime)
	done := make(chan struct{})
	r.sweepCancel, r.sweepDone = cancel, done
	go func() {
		defer close(done)
		defer cancel()
		res, err := r.SweepTemps(ctx, 0)
		if onDone != nil {
			onDone(res, err)
		}
	}()
}

// stopSweep cancels a running sweep and waits for it (Close).
func (r *Root) stopSweep() {
	r.sweepMu.Lock()
	r.closed = true
	cancel, done := r.sweepCancel, r.sweepDone
	r.sweepMu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}
