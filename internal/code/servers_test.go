package code

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLocateAndCheck: a configured command wins; a missing one is ErrNoServer with how to
// install it; a program that is found but does not run (a rustup proxy without the component)
// fails doctor's check.
func TestLocateAndCheck(t *testing.T) {
	dir := t.TempDir()
	broken := filepath.Join(dir, "rust-analyzer")
	if err := os.WriteFile(broken, []byte("#!/bin/sh\necho \"error: Unknown binary 'rust-analyzer' in official toolchain\" >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	argv, err := Locate(Rust, []string{broken, "--flag"}, nil)
	if err != nil || argv[0] != broken || argv[1] != "--flag" {
		t.Fatalf("Locate with a command = %v, %v", argv, err)
	}
	_, err = Locate(Go, []string{filepath.Join(dir, "nope")}, nil)
	if !errors.Is(err, ErrNoServer) || !strings.Contains(err.Error(), "go install golang.org/x/tools/gopls@v0.23.0") {
		t.Errorf("missing configured gopls: %v", err)
	}
	if _, err := Locate("cobol", nil, nil); err == nil || !strings.Contains(err.Error(), "go, typescript, python, c, rust") {
		t.Errorf("unknown language: %v", err)
	}
	for _, c := range CheckServers(map[string][]string{Rust: {broken}}) {
		if c.Language != Rust {
			continue
		}
		if c.OK || !strings.Contains(c.Detail, "does not run") || !strings.Contains(c.Detail, "Unknown binary") || !strings.Contains(c.Fix, "rustup component add rust-analyzer") {
			t.Errorf("rust check = %+v", c)
		}
	}
	if LanguageOf("a/b.TSX") != TypeScript || LanguageOf("x.h") != C || LanguageOf("Makefile") != "" {
		t.Error("LanguageOf")
	}
}

// TestServerLabel: a version reported as build information (gopls) is shortened to its Version.
func TestServerLabel(t *testing.T) {
	for _, c := range []struct{ name, version, want string }{
		{"gopls", `{"GoVersion":"go1.26.8","Path":"golang.org/x/tools/gopls","Deps":[{"Path":"x"}],"Version":"v0.23.0"}`, "gopls v0.23.0"},
		{"gopls", `{"GoVersion":"go1.26.8"}`, "gopls"},
		{"clangd", "clangd version 14.0.6", "clangd clangd version 14.0.6"},
		{"pyright", "", "pyright"},
		{"x", strings.Repeat("v", 50), "x " + strings.Repeat("v", 40) + "…"},
	} {
		if got := serverLabel(c.name, c.version); got != c.want {
			t.Errorf("serverLabel(%q, %q) = %q, want %q", c.name, c.version, got, c.want)
		}
	}
}
