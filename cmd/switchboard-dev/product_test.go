package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestProductBinaryHasNoDevTools: the shipped binary (CGO_ENABLED=0 go build of the module root)
// links neither the agentic-backend simulator nor the conformance fixtures; they live in this
// command only.
func TestProductBinaryHasNoDevTools(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	dir := t.TempDir()
	build := func(out, pkg string) string {
		bin := filepath.Join(dir, out)
		cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, pkg)
		cmd.Dir = "../.."
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, b)
		}
		return bin
	}
	symbols := func(bin string) string {
		out, err := exec.CommandContext(ctx, "go", "tool", "nm", bin).Output()
		if err != nil {
			t.Fatalf("go tool nm %s: %v", bin, err)
		}
		return string(out)
	}
	const sim, fixtures = "switchboard/mcp/ide/agenticsim.", "switchboard/mcp/conformance."
	product := symbols(build("switchboard", "."))
	for _, pkg := range []string{sim, fixtures} {
		if strings.Contains(product, pkg) {
			var lines bytes.Buffer
			for _, l := range strings.Split(product, "\n") {
				if strings.Contains(l, pkg) && lines.Len() < 400 {
					lines.WriteString(l + "\n")
				}
			}
			t.Errorf("the product binary links %s*:\n%s", pkg, lines.String())
		}
	}
	// The check can fail: the development binary has both.
	dev := symbols(build("switchboard-dev", "./cmd/switchboard-dev"))
	if !strings.Contains(dev, sim) || !strings.Contains(dev, fixtures) {
		t.Fatal("switchboard-dev lacks the simulator or the fixtures: the symbol names this test looks for are wrong")
	}
}
