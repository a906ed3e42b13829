//go:build unix

package mcp_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/audit"
	"github.com/switchboard-hub/switchboard/internal/process"
	"github.com/switchboard-hub/switchboard/internal/wshub"
	"github.com/switchboard-hub/switchboard/mcp"
	mcptransport "github.com/switchboard-hub/switchboard/mcp/transport"
)

// Benchmarks of one tool call through the whole server path: a raw newline-delimited JSON-RPC
// client on a real Unix socket, the line transport, go-sdk's dispatch and argument validation,
// the audit middleware and the tool. They are the in-process counterpart of
// build/bench/mcp_bench.mjs (which compares the built binary with other servers) and the place
// to profile the server:
//
//	go test ./mcp -run '^$' -bench BenchmarkToolCall -benchmem -cpuprofile cpu.prof
//	go tool pprof -top -nodecount 40 mcp.test cpu.prof
//
// "bare" is a Service with nothing but the workspace; "product" adds what `switchboard serve`
// wires in (audit log file, diagnostics logger, WebSocket hub, process service), so the
// difference between the two is the cost of those layers.

// cpuTime returns the CPU time (user + system) this process has used so far. Reported per call
// next to ns/op, it stays meaningful on a loaded machine where wall time mostly measures waiting.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU adds a cpu-ns/op metric: process CPU time (server and the minimal client) per call.
func reportCPU(b *testing.B, start time.Duration, calls int) {
	b.ReportMetric(float64(cpuTime(b)-start)/float64(calls), "cpu-ns/op")
}

// benchConfigs builds the Service variants compared by every benchmark.
var benchConfigs = []struct {
	name string
	opts func(b *testing.B, dataDir string) []mcp.Option
}{
	{"bare", func(*testing.B, string) []mcp.Option { return nil }},
	{"product", func(b *testing.B, dataDir string) []mcp.Option {
		al, err := audit.New(audit.Options{File: filepath.Join(dataDir, "audit.log")})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { al.Close() })
		logger := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))
		return []mcp.Option{
			mcp.WithAudit(al),
			mcp.WithLogger(logger),
			mcp.WithWSHub(wshub.New(wshub.Options{Logger: logger})),
			mcp.WithProcessService(process.New(process.Options{})),
		}
	}},
}

// benchCalls are the calls build/bench/mcp_bench.mjs compares with other servers.
var benchCalls = []struct{ name, tool, args string }{
	{"file_exists", "file_exists", `{"path":"small.txt"}`},
	{"lang_list", "lang_list", `{}`},
	{"file_read_4KiB", "file_read", `{"path":"small.txt"}`},
}

// lineClient is a minimal JSON-RPC client: no SDK, so the profile is the server's.
type lineClient struct {
	conn io.Writer
	r    *bufio.Reader
	id   int
	buf  []byte
}

func (c *lineClient) send(method, params string) (int, error) {
	c.id++
	c.buf = fmt.Appendf(c.buf[:0], `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", c.id, method, params)
	_, err := c.conn.Write(c.buf)
	return c.id, err
}

// readResponse returns the next response line, skipping notifications.
func (c *lineClient) readResponse() ([]byte, error) {
	for {
		line, err := c.r.ReadSlice('\n')
		if err != nil {
			return nil, err
		}
		if bytes.Contains(line, []byte(`"method":`)) && !bytes.Contains(line, []byte(`"result":`)) {
			continue // a notification from the server
		}
		if bytes.Contains(line, []byte(`"error":{`)) || bytes.Contains(line, []byte(`"isError":true`)) {
			return nil, fmt.Errorf("error response: %s", line)
		}
		return line, nil
	}
}

func (c *lineClient) call(method, params string) error {
	if _, err := c.send(method, params); err != nil {
		return err
	}
	_, err := c.readResponse()
	return err
}

// startBenchServer serves a fresh Service on a Unix socket and returns an initialized client.
func startBenchServer(b *testing.B, opts []mcp.Option, workspace string) *lineClient {
	b.Helper()
	svc, err := mcp.New(append([]mcp.Option{mcp.WithWorkspaceRoot(workspace)}, opts...)...)
	if err != nil {
		b.Fatal(err)
	}
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
		sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer scancel()
		_ = svc.Shutdown(sctx)
	})
	c := &lineClient{conn: conn, r: bufio.NewReaderSize(conn, 1<<20)}
	if err := c.call("initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}`); err != nil {
		b.Fatal(err)
	}
	if _, err := conn.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}` + "\n")); err != nil {
		b.Fatal(err)
	}
	return c
}

func benchWorkspace(b *testing.B) string {
	b.Helper()
	dir := b.TempDir()
	line := "switchboard benchmark line of text.\n"
	content := strings.Repeat(line, 4096/len(line)+1)[:4095] + "\n"
	if err := os.WriteFile(filepath.Join(dir, "small.txt"), []byte(content), 0o644); err != nil {
		b.Fatal(err)
	}
	return dir
}

// BenchmarkToolCall measures one call at a time (the latency an agent sees).
func BenchmarkToolCall(b *testing.B) {
	for _, cfg := range benchConfigs {
		for _, bc := range benchCalls {
			b.Run(cfg.name+"/"+bc.name, func(b *testing.B) {
				ws := benchWorkspace(b)
				c := startBenchServer(b, cfg.opts(b, b.TempDir()), ws)
				params := fmt.Sprintf(`{"name":%q,"arguments":%s}`, bc.tool, bc.args)
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
			})
		}
	}
}

// BenchmarkToolCallInFlight keeps 8 calls outstanding on one connection (throughput).
func BenchmarkToolCallInFlight(b *testing.B) {
	const window = 8
	for _, cfg := range benchConfigs {
		for _, bc := range benchCalls {
			b.Run(cfg.name+"/"+bc.name, func(b *testing.B) {
				ws := benchWorkspace(b)
				c := startBenchServer(b, cfg.opts(b, b.TempDir()), ws)
				params := fmt.Sprintf(`{"name":%q,"arguments":%s}`, bc.tool, bc.args)
				b.ReportAllocs()
				b.ResetTimer()
				n := b.N
				cpu0 := cpuTime(b)
				tokens := make(chan struct{}, window)
				readErr := make(chan error, 1)
				go func() { // owned by this benchmark: ends after n responses or on the first error
					for range n {
						if _, err := c.readResponse(); err != nil {
							readErr <- err
							return
						}
						<-tokens
					}
					readErr <- nil
				}()
				for range n {
					select {
					case tokens <- struct{}{}:
					case err := <-readErr: // the reader stopped early: it can only be an error
						b.Fatalf("read: %v", err)
					}
					if _, err := c.send("tools/call", params); err != nil {
						b.Fatal(err)
					}
				}
				if err := <-readErr; err != nil {
					b.Fatalf("read: %v", err)
				}
				reportCPU(b, cpu0, n)
			})
		}
	}
}
