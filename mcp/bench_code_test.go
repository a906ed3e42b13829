//go:build linux

package mcp

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/code"
	"github.com/switchboard-hub/switchboard/internal/procgroup"
)

// BenchmarkCodeThroughTheHub: what the hub adds to a warm code_definition / code_references
// answer on this repository, beyond the pool. The same two questions as
// build/bench/code_bench.mjs (tool.NewGroup at its call site in mcp/tools/git.go, the references
// of tool.ReadOnly with the declaration, at their positions and named in their files as cclsp
// asks), asked of the pool directly (Pool.Definition,
// Pool.References: the workspace file read and checked, the server's answer converted) and
// through an MCP client on the whole hub (in memory: the middleware chain, the adapter in
// mcp/tools/code.go, the result encoded and decoded), alternately, call for call, once gopls has
// settled. The difference is the hub's MCP layer; -cpuprofile shows where it goes.
//
//	go test ./mcp -run '^$' -bench CodeThroughTheHub -benchtime 200x -count 3
func BenchmarkCodeThroughTheHub(b *testing.B) {
	if _, err := code.Locate("go", nil, nil); err != nil {
		if os.Getenv("CI") == "true" {
			b.Fatal(err)
		}
		b.Skip(err)
	}
	root, err := filepath.Abs("..")
	if err == nil {
		root, err = filepath.EvalSymlinks(root)
	}
	if err != nil {
		b.Fatal(err)
	}
	pool := code.NewPool(code.Options{StateDir: b.TempDir(), Idle: -1})
	b.Cleanup(func() { pool.Close() })
	s := newTestService(b, WithWorkspaceRoot(root), WithCode(pool))
	ctx := context.Background()
	ct, st := sdk.NewInMemoryTransports()
	ss, err := s.Server().Connect(ctx, st, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })

	def := code.Target{Path: "mcp/tools/git.go"}
	def.Line, def.Column = lineOf(b, root, def.Path, "NewGroup(")
	refs := code.Target{Path: "mcp/tool/tool.go"}
	refs.Line, refs.Column = lineOf(b, root, refs.Path, "ReadOnly(title")
	defArgs := map[string]any{"path": def.Path, "line": def.Line, "column": def.Column}
	refsArgs := map[string]any{"path": refs.Path, "line": refs.Line, "column": refs.Column, "includeDeclaration": true}
	// cclsp's questions: the symbols named in the files that declare them.
	defNamed := code.Target{Path: "mcp/tool/inventory.go", Symbol: "NewGroup"}
	refsNamed := code.Target{Path: refs.Path, Symbol: "ReadOnly"}
	defNamedArgs := map[string]any{"path": defNamed.Path, "symbol": defNamed.Symbol}
	refsNamedArgs := map[string]any{"path": refsNamed.Path, "symbol": refsNamed.Symbol, "includeDeclaration": true}
	callTool := func(b *testing.B, name string, args map[string]any) {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			if res != nil && len(res.Content) > 0 {
				if tc, ok := res.Content[0].(*sdk.TextContent); ok {
					b.Fatal(name, err, tc.Text)
				}
			}
			b.Fatal(name, err, res)
		}
	}
	callTool(b, "code_definition", defArgs)
	callTool(b, "code_references", refsArgs)
	if st := pool.Status(); len(st) == 1 {
		settleGroup(b, st[0].PID, 4*time.Minute)
	}

	for _, q := range []struct {
		name string
		pool func() error
		tool string
		args map[string]any
	}{
		{"definition", func() error { _, err := pool.Definition(ctx, root, def); return err }, "code_definition", defArgs},
		{"references", func() error { _, err := pool.References(ctx, root, refs, true); return err }, "code_references", refsArgs},
		{"definition-named", func() error { _, err := pool.Definition(ctx, root, defNamed); return err }, "code_definition", defNamedArgs},
		{"references-named", func() error { _, err := pool.References(ctx, root, refsNamed, true); return err }, "code_references", refsNamedArgs},
	} {
		b.Run(q.name, func(b *testing.B) {
			// Wall time and the hub process's CPU time (gopls is another process), per call.
			var inPool, viaMCP, cpuPool, cpuMCP time.Duration
			for range 3 {
				callTool(b, q.tool, q.args)
			}
			n := 0
			for b.Loop() {
				t, c := time.Now(), processCPU()
				if err := q.pool(); err != nil {
					b.Fatal(err)
				}
				inPool += time.Since(t)
				cpuPool += processCPU() - c
				t, c = time.Now(), processCPU()
				callTool(b, q.tool, q.args)
				viaMCP += time.Since(t)
				cpuMCP += processCPU() - c
				n++
			}
			per := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(n) }
			b.ReportMetric(per(inPool), "pool-µs")
			b.ReportMetric(per(viaMCP), "mcp-µs")
			b.ReportMetric(per(viaMCP-inPool), "hub-µs")
			b.ReportMetric(per(cpuPool), "pool-cpu-µs")
			b.ReportMetric(per(cpuMCP), "mcp-cpu-µs")
		})
	}
	b.Run("file_exists", func(b *testing.B) { // the MCP layer with a trivial tool, for scale
		for b.Loop() {
			callTool(b, "file_exists", map[string]any{"path": "go.mod"})
		}
	})
}

// settleGroup waits (at most limit) until process group pgid is idle: gopls checks the whole
// module in the background after its first answers.
func settleGroup(b *testing.B, pgid int, limit time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	if err := procgroup.WaitIdle(ctx, pgid); err != nil {
		b.Logf("gopls never settled (%v); figures include its background work", err)
	}
}
