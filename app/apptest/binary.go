package apptest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	binOnce sync.Once
	binDir  string // made by Main, removed when the package's tests end
	binPath string
	binErr  error
)

// Main runs a package's tests (call it from TestMain) and then removes what Binary built: a
// test binary has no other hook that runs after its last test, and a 38 MB binary left in the
// temp dir by every run adds up.
func Main(m *testing.M) {
	dir, err := os.MkdirTemp("", "sb-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "apptest:", err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	_ = os.RemoveAll(dir) // best effort: the exit code is the tests'
	os.Exit(code)
}

// Binary builds switchboard (the module's main package) once per test binary, pure Go without
// the desktop tag, and returns its path. The package's TestMain must call Main.
func Binary(t *testing.T) string {
	t.Helper()
	if binDir == "" {
		t.Fatal("apptest.Binary needs the package's TestMain to call apptest.Main(m), which removes the binary afterwards")
	}
	binOnce.Do(func() {
		root, err := moduleRoot()
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(binDir, "switchboard")
		cmd := exec.Command("go", "build", "-o", binPath, ".")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// moduleRoot is the directory of the go.mod above the test's working directory.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("apptest: no go.mod above the test's directory")
		}
		dir = parent
	}
}

// Env isolates a child process from the user's config and data: a temporary HOME, XDG
// directories under it, a short runtime directory, no IDE backend, no MCP_ADDR or token.
func Env(t *testing.T) []string {
	home := t.TempDir()
	return append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, "cfg"),
		"XDG_DATA_HOME="+filepath.Join(home, "data"), "XDG_RUNTIME_DIR="+ShortDir(t),
		"SWITCHBOARD_IDE_URL=ws://127.0.0.1:1/ws", "MCP_ADDR=", "SWITCHBOARD_TOKEN=")
}

// ShortDir is a new directory under the system's temp dir, removed when the test ends: short
// enough for a Unix socket path (at most 108 bytes).
func ShortDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "sb-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// LineWatcher collects a process's stderr and lets tests wait for a pattern: each new line
// wakes the waiters (no polling). Run reads the stream; the zero value is ready to use.
type LineWatcher struct {
	mu      sync.Mutex
	lines   []string
	changed chan struct{} // closed (and replaced) when a line arrives or the stream ends
	ended   bool
}

// wake returns the channel closed at the next change; call with mu held.
func (w *LineWatcher) wake() chan struct{} {
	if w.changed == nil {
		w.changed = make(chan struct{})
	}
	return w.changed
}

// Run reads r line by line until it ends (go w.Run(stderr)).
func (w *LineWatcher) Run(r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		w.mu.Lock()
		w.lines = append(w.lines, sc.Text())
		close(w.wake())
		w.changed = nil
		w.mu.Unlock()
	}
	w.mu.Lock()
	w.ended = true
	close(w.wake())
	w.changed = nil
	w.mu.Unlock()
}

// Lines returns the lines read so far.
func (w *LineWatcher) Lines() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.lines...)
}

// Wait waits (up to 20 s) for a line matching re and returns its submatches; a stream that ends
// first, or the timeout, fails the test with the lines read.
func (w *LineWatcher) Wait(t *testing.T, re *regexp.Regexp) []string {
	t.Helper()
	timeout := time.NewTimer(20 * time.Second)
	defer timeout.Stop()
	seen := 0
	for {
		w.mu.Lock()
		for _, l := range w.lines[seen:] {
			if m := re.FindStringSubmatch(l); m != nil {
				w.mu.Unlock()
				return m
			}
		}
		seen = len(w.lines)
		ended, changed := w.ended, w.wake()
		w.mu.Unlock()
		if ended {
			t.Fatalf("stderr ended without a line matching %s; got:\n%s", re, strings.Join(w.Lines(), "\n"))
		}
		select {
		case <-changed:
		case <-timeout.C:
			t.Fatalf("no stderr line matched %s; got:\n%s", re, strings.Join(w.Lines(), "\n"))
		}
	}
}

// Proc is a switchboard process started by Start.
type Proc struct {
	// Cmd is the running command (Cmd.Process.Pid, or a signal of the test's own).
	Cmd *exec.Cmd
	// Stderr holds the process's stderr lines.
	Stderr *LineWatcher

	stop sync.Once
}

// Start starts bin with args in dir ("" : the test's own directory) and env, and waits for a
// line of its stderr matching ready, whose submatches it returns. The process is stopped at Stop
// or when the test ends.
func Start(t *testing.T, bin string, env []string, dir string, ready *regexp.Regexp, args ...string) (*Proc, []string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env, cmd.Dir = env, dir
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &Proc{Cmd: cmd, Stderr: &LineWatcher{}}
	go p.Stderr.Run(stderr)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	return p, p.Stderr.Wait(t, ready)
}

// Stop ends the process (SIGTERM) and waits for it; later calls do nothing.
func (p *Proc) Stop() {
	p.stop.Do(func() {
		// Already gone, or ended by the signal: either way there is nothing to report.
		_ = p.Cmd.Process.Signal(syscall.SIGTERM)
		_ = p.Cmd.Wait()
	})
}

// Headless is a switchboard process started by StartHeadless.
type Headless struct {
	*Proc
	// URL and Token are the dashboard's, from the line it prints at start.
	URL, Token string
}

var dashboardLine = regexp.MustCompile(`dashboard at (http://[^/\s]+)/\?token=(\S+)`)

// StartHeadless starts bin with args in dir ("" : the test's own directory) and env, and waits
// for the dashboard's URL on its stderr. The process is stopped at Stop or when the test ends.
func StartHeadless(t *testing.T, bin string, env []string, dir string, args ...string) *Headless {
	t.Helper()
	p, m := Start(t, bin, env, dir, dashboardLine, args...)
	return &Headless{Proc: p, URL: m[1], Token: m[2]}
}
