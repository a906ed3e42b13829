package mcp

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkHTTPTrivialCallByEra: one lang_detect call over the hub's Streamable HTTP endpoint on
// loopback, from the go-sdk v1.8 client in its default 2026-07-28 mode (stateless: every request
// is a POST that go-sdk serves on a session of its own) and in 2025-11-25 mode (one session).
// Goal (issue 35): the stateless call no slower than the session's. docs/benchmarks.md
// "Protocol eras over HTTP" has the figures.
//
//	go test ./mcp -run '^$' -bench BenchmarkHTTPTrivialCallByEra -benchtime 3s -count 5
func BenchmarkHTTPTrivialCallByEra(b *testing.B) {
	s := newBenchService(b)
	addr := listenBench(b, s)
	for _, era := range []struct{ name, version string }{{"stateless-2026-07-28", ""}, {"session-2025-11-25", "2025-11-25"}} {
		b.Run(era.name, func(b *testing.B) {
			tr := &sdk.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp", HTTPClient: &http.Client{Transport: bearer{"s3cret", http.DefaultTransport}}}
			var so *sdk.ClientSessionOptions
			if era.version != "" {
				so = &sdk.ClientSessionOptions{ProtocolVersion: era.version}
			}
			ctx := context.Background()
			cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, tr, so)
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			params := &sdk.CallToolParams{Name: "lang_detect", Arguments: map[string]any{"path": "main.go"}}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if res, err := cs.CallTool(ctx, params); err != nil || res.IsError {
					b.Fatal(err, res)
				}
			}
		})
	}
}

func newBenchService(b *testing.B) *Service {
	b.Helper()
	s, err := New(WithWorkspaceRoot(b.TempDir()))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	return s
}

func listenBench(b *testing.B, s *Service) string {
	b.Helper()
	tr := s.NewTransports(TransportConfig{HTTPAddr: "127.0.0.1:0", HTTPToken: "s3cret"})
	if err := tr.Start(TransportHTTP); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { tr.StopAll(context.Background()) })
	return tr.Addr(TransportHTTP)
}

// BenchmarkHTTPTrivialCallByEraRaw is BenchmarkHTTPTrivialCallByEra with a client that costs
// nothing: the same prepared request bytes posted again and again, so only the hub's side is
// measured (go-sdk's client builds a larger request on 2026-07-28: the _meta envelope).
//
//	go test ./mcp -run '^$' -bench BenchmarkHTTPTrivialCallByEraRaw -benchtime 3s -count 5
func BenchmarkHTTPTrivialCallByEraRaw(b *testing.B) {
	s := newBenchService(b)
	addr := listenBench(b, s)
	url := "http://" + addr + "/mcp"
	const call = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"lang_detect","arguments":{"path":"main.go"}}}`
	modern := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}},"name":"lang_detect","arguments":{"path":"main.go"}}}`
	sessionHdr := map[string]string{"Mcp-Protocol-Version": "2025-11-25"}
	resp := postBench(b, url, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`, nil)
	sessionHdr["Mcp-Session-Id"] = resp.Header.Get("Mcp-Session-Id")
	postBench(b, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, sessionHdr)
	for _, c := range []struct {
		name, body string
		hdr        map[string]string
	}{
		{"stateless-2026-07-28", modern, map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "lang_detect"}},
		{"session-2025-11-25", call, sessionHdr},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				postBench(b, url, c.body, c.hdr)
			}
		})
	}
}

func postBench(b *testing.B, url, body string, hdr map[string]string) *http.Response {
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer s3cret")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 || (resp.StatusCode == http.StatusOK && !bytes.Contains(out, []byte(`"result"`))) {
		b.Fatalf("%d %s", resp.StatusCode, out)
	}
	return resp
}
