package code

import (
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/procgroup"
)

// repoRoot is the repository's top directory (where go.mod is).
func repoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// testSearchDirs are where the pinned test servers are installed: test/lsp's npm packages
// (make lsp-deps) besides PATH and the Go bin directory (gopls, make lsp-deps).
func testSearchDirs(t testing.TB) []string {
	return []string{filepath.Join(repoRoot(t), "test", "lsp", "node_modules", ".bin")}
}

// requireServer skips the test when lang's server is not installed, or fails it under
// CI=true, where a missing server is a broken setup (make lsp-deps installs them).
func requireServer(t testing.TB, lang string) {
	t.Helper()
	if _, err := Locate(lang, nil, testSearchDirs(t)); err != nil {
		msg := err.Error() + " (make lsp-deps installs the pinned test servers)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
}

// newTestPool is a pool for one test, closed (and checked to leave no server behind) at its end.
func newTestPool(t testing.TB, idle time.Duration) *Pool {
	t.Helper()
	o := Options{Idle: idle, SearchDirs: testSearchDirs(t), StateDir: t.TempDir()}
	if os.Getenv("CODE_TEST_LOG") != "" {
		o.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	p := NewPool(o)
	t.Cleanup(func() {
		pids := []int{}
		for _, s := range p.Status() {
			if s.PID > 0 {
				pids = append(pids, s.PID)
			}
		}
		p.Close()
		// Close waits until each server's whole process group is gone (tsserver, clangd's
		// workers): nothing is left behind.
		for _, pid := range pids {
			if procgroup.Alive(pid) {
				t.Errorf("language server group %d still has processes after Close: %v", pid, procgroup.Members(pid))
			}
		}
	})
	return p
}

// fixture copies testdata/<name> into a fresh directory and returns it.
func fixture(t testing.TB, name string) string {
	t.Helper()
	src := filepath.Join("testdata", name)
	dst := filepath.Join(t.TempDir(), name)
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(dst)
	if err != nil {
		t.Fatal(err)
	}
	return real
}

// at is the 1-based line and byte column of the first occurrence of needle in the file (after
// the first occurrence of anchor on the same line, when anchor is given).
func at(t testing.TB, root, path, anchor, needle string) Target {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(string(b), "\n") {
		a := 0
		if anchor != "" {
			a = strings.Index(line, anchor)
			if a < 0 {
				continue
			}
		}
		if j := strings.Index(line[a:], needle); j >= 0 {
			return Target{Path: path, Line: i + 1, Column: a + j + 1}
		}
	}
	t.Fatalf("%q not found in %s", needle, path)
	return Target{}
}

func itoa(n int) string { return strconv.Itoa(n) }
