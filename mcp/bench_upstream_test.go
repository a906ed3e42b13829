//go:build unix

package mcp_test

import (
	"bufio"
	"context"
	"net"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/testutil"
	"github.com/switchboard-hub/switchboard/internal/upstream"
	"github.com/switchboard-hub/switchboard/mcp"
	mcptransport "github.com/switchboard-hub/switchboard/mcp/transport"
)

// BenchmarkUpstreamEcho measures the proxy overhead of an upstream server: server-everything's
// `echo` called directly (client → node over stdio) beside the same call through the hub
// (client → hub → node over stdio, as everything__echo). It is the in-process counterpart of
// build/bench/upstream_bench.mjs and the place to profile the proxy path:
//
//	go test ./mcp -run '^$' -bench 'BenchmarkUpstreamEcho$/proxied_raw' -benchmem -cpuprofile cpu.prof
//	go tool pprof -top -cum mcp.test cpu.prof
//
// Sub-benchmarks, two clients each called both ways:
//   - direct, proxied: a go-sdk client (the same code both ways; to the hub over in-memory
//     transports, so the difference is the hub and its extra hop);
//   - direct_raw, proxied_raw: a raw newline-delimited JSON-RPC client (no SDK; to the hub over a
//     real Unix socket, as `switchboard connect` reaches it), so a profile shows the hub alone.
//
// ns/op is the latency of one call at a time; cpu-ns/op is this process's CPU per call (the
// client and, for proxied, the hub; node's CPU is not counted).
func BenchmarkUpstreamEcho(b *testing.B) {
	entry := filepath.Join(testutil.NodeModule(b, "@modelcontextprotocol/server-everything"), "dist", "index.js")
	const msg = "hello from the benchmark"

	b.Run("direct", func(b *testing.B) {
		cs := connectSDK(b, &sdk.CommandTransport{Command: exec.Command("node", entry, "stdio")})
		benchSDKCalls(b, cs, "echo", msg)
	})
	b.Run("proxied", func(b *testing.B) {
		svc := upstreamBenchHub(b, entry)
		ct, st := sdk.NewInMemoryTransports()
		ss, err := svc.Server().Connect(b.Context(), st, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { ss.Close() })
		cs := connectSDK(b, ct)
		benchSDKCalls(b, cs, "everything__echo", msg)
	})
	b.Run("direct_raw", func(b *testing.B) {
		cmd := exec.Command("node", entry, "stdio")
		stdin, err := cmd.StdinPipe()
		if err != nil {
			b.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() {
			stdin.Close()
			done := make(chan struct{})
			go func() { _ = cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				_ = cmd.Process.Kill()
				<-done
			}
		})
		c := &lineClient{conn: stdin, r: bufio.NewReaderSize(stdout, 1<<20)}
		initLineClient(b, c)
		benchRawCalls(b, c, "echo", msg)
	})
	b.Run("proxied_raw", func(b *testing.B) {
		svc := upstreamBenchHub(b, entry)
		sock := filepath.Join(b.TempDir(), "mcp.sock")
		ln, err := mcptransport.ListenUnix(sock)
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		served := make(chan error, 1)
		go func() { served <- svc.Serve(ctx, ln, mcp.TransportUnix) }()
		conn, err := net.Dial("unix", sock)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() {
			conn.Close()
			cancel()
			if err := <-served; err != nil {
				b.Errorf("serve: %v", err)
			}
		})
		c := &lineClient{conn: conn, r: bufio.NewReaderSize(conn, 1<<20)}
		initLineClient(b, c)
		benchRawCalls(b, c, "everything__echo", msg)
	})
}

// upstreamBenchHub is a Service as `switchboard serve` wires it ("product": audit log,
// diagnostics logger, WebSocket hub, process service) with server-everything as the upstream
// server "everything", running and approved.
func upstreamBenchHub(b *testing.B, entry string) *mcp.Service {
	b.Helper()
	m, err := upstream.New(upstream.Options{ApprovalsFile: filepath.Join(b.TempDir(), "approvals.json"), Workspace: b.TempDir(), Reserved: mcp.ToolsetNames()})
	if err != nil {
		b.Fatal(err)
	}
	var product []mcp.Option
	for _, cfg := range benchConfigs {
		if cfg.name == "product" {
			product = cfg.opts(b, b.TempDir())
		}
	}
	svc, err := mcp.New(append([]mcp.Option{mcp.WithWorkspaceRoot(b.TempDir()), mcp.WithUpstreams(m)}, product...)...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		_ = svc.Shutdown(ctx) // stops the upstream server too
	})
	spec := upstream.Spec{Name: "everything", Command: "node", Args: []string{entry, "stdio"}}
	if err := m.ApproveCommand(spec); err != nil {
		b.Fatal(err)
	}
	if err := m.Sync([]upstream.Spec{spec}); err != nil {
		b.Fatal(err)
	}
	changed := make(chan struct{}, 1)
	defer m.OnChange(func(string) {
		select {
		case changed <- struct{}{}:
		default:
		}
	})()
	deadline := time.After(60 * time.Second)
	for {
		st, err := m.Status("everything")
		if err != nil {
			b.Fatal(err)
		}
		if st.State == upstream.StateRunning {
			break
		}
		select {
		case <-changed:
		case <-deadline:
			logs, _ := m.Logs("everything", 20)
			b.Fatalf("server-everything did not start: %+v; log %v", st, logs)
		}
	}
	if _, err := m.Approve(b.Context(), "everything"); err != nil {
		b.Fatal(err)
	}
	return svc
}

func connectSDK(b *testing.B, t sdk.Transport) *sdk.ClientSession {
	b.Helper()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(b.Context(), t, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

func benchSDKCalls(b *testing.B, cs *sdk.ClientSession, tool, msg string) {
	params := &sdk.CallToolParams{Name: tool, Arguments: map[string]any{"message": msg}}
	ctx := context.Background()
	// The first call also checks the tool is there and answers.
	res, err := cs.CallTool(ctx, params)
	if err != nil || res.IsError {
		b.Fatalf("%s: %v %+v", tool, err, res)
	}
	for range 100 { // warm-up: node's JIT, both sides' buffers
		if _, err := cs.CallTool(ctx, params); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	var cpu0 time.Duration
	calls := 0
	for b.Loop() {
		if calls == 0 {
			cpu0 = cpuTime(b)
		}
		calls++
		if _, err := cs.CallTool(ctx, params); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu0, calls)
}

func initLineClient(b *testing.B, c *lineClient) {
	b.Helper()
	if err := c.call("initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}`); err != nil {
		b.Fatal(err)
	}
	if _, err := c.conn.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}` + "\n")); err != nil {
		b.Fatal(err)
	}
}

func benchRawCalls(b *testing.B, c *lineClient, tool, msg string) {
	params := `{"name":"` + tool + `","arguments":{"message":"` + msg + `"}}`
	for range 101 { // the first call checks the tool answers; the rest warm up
		if err := c.call("tools/call", params); err != nil {
			b.Fatalf("%s: %v", tool, err)
		}
	}
	b.ReportAllocs()
	var cpu0 time.Duration
	calls := 0
	for b.Loop() {
		if calls == 0 {
			cpu0 = cpuTime(b)
		}
		calls++
		if err := c.call("tools/call", params); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu0, calls)
}
