//go:build unix

package mcp

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkScriptInnerCalls measures script mode's costs (issue 36) on a hub in script mode, a
// go-sdk client on its Unix socket:
//
//   - µs/inner-call: (a script of 1,000 sequential file_exists calls − an empty script) / 1,000,
//     the hub's cost per inner call (sandbox, policy, audit, the tool); goal ≤ 50 µs;
//   - script/direct-100: a script of 100 sequential file_exists calls against the same 100
//     calls made back to back by the client over the socket (one round trip each; a stdio
//     client through `switchboard connect` adds a hop per call, so this is the harder peer);
//     goal ≤ 0.5.
//
// The four runs alternate within each iteration, so load on the machine hits them alike.
//
//	go test ./mcp -run '^$' -bench BenchmarkScriptInnerCalls -benchtime 20x -count 3
func BenchmarkScriptInnerCalls(b *testing.B) {
	s := newTestService(b, WithToolsMode("script", nil))
	if err := os.WriteFile(filepath.Join(s.WorkspaceDir(), "a.go"), []byte("package a\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "sb-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "s.sock")
	tr := s.NewTransports(TransportConfig{UnixPath: sock})
	if err := tr.Start(TransportUnix); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		tr.StopAll(ctx)
	})
	conn, err := net.Dial("unix", sock)
	if err != nil {
		b.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(b.Context(), &sdk.IOTransport{Reader: conn, Writer: conn}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	ctx := b.Context()
	script := func(code string) time.Duration {
		start := time.Now()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "script_run", Arguments: map[string]any{"code": code}})
		if err != nil || res.IsError {
			b.Fatalf("script_run: %v %v", err, res)
		}
		return time.Since(start)
	}
	const loop = `for (let i = 0; i < %N%; i++) await tools.file_exists({path: "a.go"}); return 0;`
	code1000 := strings.ReplaceAll(loop, "%N%", "1000")
	code100 := strings.ReplaceAll(loop, "%N%", "100")
	direct := func(n int) time.Duration {
		start := time.Now()
		for range n {
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "file_exists", Arguments: map[string]any{"path": "a.go"}})
			if err != nil || res.IsError {
				b.Fatalf("file_exists: %v %v", err, res)
			}
		}
		return time.Since(start)
	}
	script("return 0") // warm up each path once
	script(code100)
	direct(100)
	var empty, thousand, hundred, direct100 time.Duration
	n := 0
	for b.Loop() {
		empty += script("return 0")
		thousand += script(code1000)
		hundred += script(code100)
		direct100 += direct(100)
		n++
	}
	b.ReportMetric(float64((thousand-empty).Microseconds())/float64(n*1000), "µs/inner-call")
	b.ReportMetric(float64(hundred)/float64(direct100), "script/direct-100")
	b.ReportMetric(float64(empty.Microseconds())/float64(n), "µs/empty-script")
}
