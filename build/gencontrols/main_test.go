package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestGeneratedControlsUpToDate regenerates the Wails bindings and the TypeScript client from the
// control table and fails when the committed files differ: a control was added, removed or
// changed in app/controls.go without running the generator.
func TestGeneratedControlsUpToDate(t *testing.T) {
	root := filepath.Join("..", "..")
	fresh, err := generate(root)
	if err != nil {
		t.Fatal(err)
	}
	var stale []string
	for name, want := range fresh {
		got, err := os.ReadFile(filepath.Join(root, name))
		switch {
		case err != nil:
			stale = append(stale, name+" (missing)")
		case !bytes.Equal(got, want):
			stale = append(stale, name+" (differs at line "+firstDiffLine(got, want)+")")
		}
	}
	slices.Sort(stale)
	if len(stale) > 0 {
		t.Errorf("stale: %s.\nRun `go run ./build/gencontrols` (or `make types`) and commit the result.", strings.Join(stale, ", "))
	}
}

func firstDiffLine(a, b []byte) string {
	la, lb := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := range max(len(la), len(lb)) {
		if i >= len(la) || i >= len(lb) || !bytes.Equal(la[i], lb[i]) {
			return strconv.Itoa(i + 1)
		}
	}
	return "?"
}

// TestTygoNamespaces reads the package → file pairs of build/tygo.yaml as the client imports them.
func TestTygoNamespaces(t *testing.T) {
	cfg, err := os.ReadFile(filepath.Join("..", "tygo.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ns, err := tygoNamespaces(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"github.com/switchboard-hub/switchboard/internal/wshub": "hub",
		"github.com/switchboard-hub/switchboard/app":            "app",
		"github.com/switchboard-hub/switchboard/mcp/ide":        "ide",
	} {
		if ns[path] != want {
			t.Errorf("%s → %q, want %q", path, ns[path], want)
		}
	}
	if _, err := tygoNamespaces([]byte("packages:\n")); err == nil {
		t.Error("a config without packages was accepted")
	}
}
