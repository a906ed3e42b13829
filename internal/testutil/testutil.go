// Package testutil holds small helpers that tests across packages share (and test-support
// packages such as internal/ml/mltest). Nothing in the product imports it.
package testutil

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// SyncBuffer is a bytes.Buffer safe for concurrent writers and readers: a child process's
// stderr, a logger's sink, a connection's output read while it is written.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p; it implements io.Writer.
func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// NodeModule returns the path of a package installed in the repository's test/node/node_modules
// (pinned in test/node/package.json, installed by `make node-deps`). When it is missing the test
// is skipped with the fix, or fails under CI=true, where a missing dependency is a broken setup.
func NodeModule(t testing.TB, pkg string) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("testutil.NodeModule: no go.mod above the test's directory")
		}
		dir = parent
	}
	p := filepath.Join(dir, "test", "node", "node_modules", filepath.FromSlash(pkg))
	if _, err := os.Stat(p); err != nil {
		msg := fmt.Sprintf("%s is not installed in test/node: run `make node-deps` (%v)", pkg, err)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	if _, err := exec.LookPath("node"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("node is not on PATH")
		}
		t.Skip("node is not on PATH")
	}
	return p
}
