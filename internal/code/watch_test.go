package code

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/sandbox"
	"github.com/switchboard-hub/switchboard/internal/testutil"
)

// TestEditsReachTheServer: a file written by the hub's tools reaches gopls through Changed at
// once; one written by anyone else through the workspace watcher. Either way the server
// finds the new function; the server runs confined.
func TestEditsReachTheServer(t *testing.T) {
	requireServer(t, Go)
	testutil.RequireLandlock(t, sandbox.ABI())
	root := fixture(t, "gofx")
	p := newTestPool(t, -1)
	ctx := ctxT(t)
	if _, err := p.Definition(ctx, root, Target{Symbol: "calc.Total"}); err != nil {
		t.Fatal(err)
	}
	if st := p.Status(); len(st) != 1 || !strings.Contains(st[0].Sandbox, "Landlock") {
		t.Fatalf("not confined: %+v", st)
	}

	// Through the hub's tools: Changed, then the very next call sees it.
	if err := os.WriteFile(filepath.Join(root, "util", "double.go"), []byte("package util\n\n// Double is new.\nfunc Double(x int) int { return 2 * x }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p.Changed(root, "util/double.go")
	res, err := p.Definition(ctx, root, Target{Symbol: "util.Double"})
	if err != nil || len(res.Locations) != 1 || res.Locations[0].Path != "util/double.go" {
		t.Fatalf("after Changed: %+v, %v", res.Locations, err)
	}

	// From outside: the watcher passes it on within a moment. (A package in a new directory
	// is not searched by gopls v0.23's workspace/symbol until it reloads the module, however it
	// is told: docs/architecture.md, "Code intelligence".)
	if err := os.WriteFile(filepath.Join(root, "util", "triple.go"), []byte("package util\n\n// Triple is new too.\nfunc Triple(x int) int { return 3 * x }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		res, err = p.Definition(ctx, root, Target{Symbol: "util.Triple"})
		if err == nil && len(res.Locations) == 1 && res.Locations[0].Path == "util/triple.go" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("an outside edit never reached the server: %+v, %v", res.Locations, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
