package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/testutil"
	"github.com/switchboard-hub/switchboard/internal/upstream"
	"github.com/switchboard-hub/switchboard/mcp"
)

// TestCatalogueFigures writes, for docs/benchmarks.md, what a session receives before the user's
// first word — the tools/list answer and initialize's instructions — for each tools mode with 0,
// 3 and 10 upstream servers (server-everything, server-memory and server-filesystem from
// test/node, by turns), one JSON file per case, into $SWITCHBOARD_CATALOGUE_OUT. `make
// bench-tokens` runs it and counts the tokens (build/bench/tokens). Without the variable it
// writes nothing and checks only the 0-server case.
func TestCatalogueFigures(t *testing.T) {
	out := os.Getenv("SWITCHBOARD_CATALOGUE_OUT")
	counts := []int{0}
	if out != "" {
		counts = []int{0, 3, 10}
	}
	for _, n := range counts {
		ups, err := upstream.New(upstream.Options{ApprovalsFile: filepath.Join(t.TempDir(), "a.json"), Workspace: t.TempDir(), Reserved: mcp.ToolsetNames()})
		if err != nil {
			t.Fatal(err)
		}
		svc := everyGroupWith(t, ups)
		startServers(t, ups, n)
		for _, mode := range mcp.ToolsModes() {
			if err := svc.SetToolsMode(mode, nil); err != nil {
				t.Fatal(err)
			}
			cs := connectTo(t, svc)
			listed, err := cs.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			init := cs.InitializeResult()
			if mode != mcp.ToolsModeFull && len(listed.Tools) > 10 {
				t.Fatalf("%s mode lists %d tools", mode, len(listed.Tools))
			}
			if out == "" {
				continue
			}
			b, _ := json.Marshal(map[string]any{"mode": mode, "servers": n, "tools": listed.Tools, "instructions": init.Instructions})
			if err := os.WriteFile(filepath.Join(out, fmt.Sprintf("%s-%02d.json", mode, n)), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// startServers runs n upstream servers from test/node, approved, and waits for their tools.
func startServers(t *testing.T, m *upstream.Manager, n int) {
	t.Helper()
	if n == 0 {
		return
	}
	kinds := [][]string{
		{"@modelcontextprotocol/server-everything", "dist/index.js", "stdio"},
		{"@modelcontextprotocol/server-memory", "dist/index.js"},
		{"@modelcontextprotocol/server-filesystem", "dist/index.js", t.TempDir()},
	}
	var specs []upstream.Spec
	for i := range n {
		k := kinds[i%len(kinds)]
		dir := testutil.NodeModule(t, k[0])
		args := append([]string{filepath.Join(dir, k[1])}, k[2:]...)
		specs = append(specs, upstream.Spec{Name: fmt.Sprintf("s%02d", i), Command: "node", Args: args})
	}
	for _, s := range specs {
		if err := m.ApproveCommand(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Sync(specs); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	defer cancel()
	for _, s := range specs {
		if err := m.Await(ctx, func() bool {
			st, err := m.Status(s.Name)
			return err == nil && st.State == upstream.StateRunning && len(st.Tools) > 0
		}); err != nil {
			st, _ := m.Status(s.Name)
			t.Fatalf("server %s: %+v", s.Name, st)
		}
		time.Sleep(300 * time.Millisecond) // the conditional tools follow the first listing
		if _, err := m.Approve(t.Context(), s.Name); err != nil {
			t.Fatal(err)
		}
	}
}
