package mcp

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/process"
	"github.com/switchboard-hub/switchboard/mcp/tools"
)

// TestWorkdirSwapRace swaps a working directory for a symlink to a directory outside the
// workspace in a tight loop while exec and process_start are called with that directory. Every
// call either is refused or runs inside the workspace: the child starts in the directory the
// sandbox opened, never in whatever the path names a moment later.
func TestWorkdirSwapRace(t *testing.T) {
	s, cs := newProcessTestService(t, process.Options{MaxProcesses: 64})
	ws := s.Workspace().Dir()
	outside, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	d, held := filepath.Join(ws, "d"), filepath.Join(ws, "d.real")
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var swaps atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			// d: real directory -> symlink to outside -> real directory again. The short sleeps
			// are on purpose: they vary how long each state lasts, so the calls meet all of them.
			if os.Rename(d, held) == nil {
				_ = os.Symlink(outside, d)
				time.Sleep(20 * time.Microsecond)
				_ = os.Remove(d)
				_ = os.Rename(held, d)
				swaps.Add(1)
				time.Sleep(100 * time.Microsecond)
			}
		}
	})

	const calls = 400
	var ran, refused int
	for i := range calls {
		var out tools.ExecOutput
		tool, args := "exec", map[string]any{"command": "sh", "args": []string{"-c", "pwd -P; touch mark"}, "dir": "d"}
		if i%4 == 3 {
			var st tools.ProcessStartOutput
			if e := call(t, cs, "process_start", map[string]any{"command": "sh", "args": []string{"-c", "pwd -P; touch mark"}, "dir": "d"}, &st); e != "" {
				refused++
				continue
			}
			w := waitProcess(t, cs, st.ID)
			out.Stdout = w.Output
		} else if e := call(t, cs, tool, args, &out); e != "" {
			if !strings.HasPrefix(e, "dir:") && !strings.Contains(e, "no such file") {
				t.Errorf("unexpected refusal: %s", e)
			}
			refused++
			continue
		}
		ran++
		wd := strings.TrimSpace(out.Stdout)
		if testing.Verbose() && wd != d {
			t.Logf("call %d ran in %q", i, wd)
		}
		if wd != d && wd != held && !strings.HasPrefix(wd, ws+"/") {
			t.Errorf("call %d ran outside the workspace, in %q", i, wd)
		}
	}
	close(stop)
	wg.Wait()
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("a child wrote outside the workspace: %v", ents)
	}
	t.Logf("%d calls ran inside, %d refused, %d swaps", ran, refused, swaps.Load())
	if ran < 20 || swaps.Load() < 100 {
		t.Fatalf("too little overlap to mean anything: %d ran, %d swaps", ran, swaps.Load())
	}
}
