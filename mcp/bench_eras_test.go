package mcp

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

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

// The floor of BenchmarkHTTPTrivialCallByEra: go-sdk v1.8 alone, no hub. A trivial server with
// one tool shaped like lang_detect (a path in, a language and the path out, both schemas), its
// StreamableHTTPHandler stateful on one URL and Stateless:true on another, on loopback, and the
// go-sdk client in each era. What the stateless call costs here over the session call is the
// library's own; the hub's figure is measured against it in the same run.
//
//	go test ./mcp -run '^$' -bench 'TrivialCallByEra$|GoSDKTrivialCallByEra' -benchtime 2s -count 5

type benchLangIn struct {
	Path string `json:"path" jsonschema:"file path"`
}

type benchLangOut struct {
	Language string `json:"language" jsonschema:"language ID"`
	Path     string `json:"path" jsonschema:"echoed input path"`
}

// listenGoSDK serves a bare go-sdk server: /stateful (sessions) and /stateless (2026-07-28).
func listenGoSDK(b *testing.B) string {
	b.Helper()
	srv := sdk.NewServer(&sdk.Implementation{Name: "bare", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "lang_detect", Description: "language of a file name"},
		func(_ context.Context, _ *sdk.CallToolRequest, in benchLangIn) (*sdk.CallToolResult, benchLangOut, error) {
			return nil, benchLangOut{Language: "go", Path: in.Path}, nil
		})
	get := func(*http.Request) *sdk.Server { return srv }
	mux := http.NewServeMux()
	mux.Handle("/stateful", sdk.NewStreamableHTTPHandler(get, &sdk.StreamableHTTPOptions{SessionTimeout: 30 * time.Minute}))
	mux.Handle("/stateless", sdk.NewStreamableHTTPHandler(get, &sdk.StreamableHTTPOptions{Stateless: true}))
	ts := httptest.NewServer(mux)
	b.Cleanup(ts.Close)
	return ts.URL
}

// eraClient connects the go-sdk client to endpoint: version "" is its default (2026-07-28,
// stateless), else that version on a session.
func eraClient(b *testing.B, endpoint, version string, hc *http.Client) *sdk.ClientSession {
	b.Helper()
	tr := &sdk.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc}
	var so *sdk.ClientSessionOptions
	if version != "" {
		so = &sdk.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(context.Background(), tr, so)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cs.Close() })
	return cs
}

// callBench makes one lang_detect call. The params are made per call: go-sdk's 2026-07-28 client
// writes its per-request _meta into the params it is given, which a session client sharing them
// would then send.
func callBench(b *testing.B, cs *sdk.ClientSession) {
	params := &sdk.CallToolParams{Name: "lang_detect", Arguments: map[string]any{"path": "main.go"}}
	if res, err := cs.CallTool(context.Background(), params); err != nil || res.IsError {
		b.Fatal(err, res)
	}
}

func BenchmarkGoSDKTrivialCallByEra(b *testing.B) {
	base := listenGoSDK(b)
	for _, era := range []struct{ name, path, version string }{{"stateless-2026-07-28", "/stateless", ""}, {"session-2025-11-25", "/stateful", "2025-11-25"}} {
		b.Run(era.name, func(b *testing.B) {
			cs := eraClient(b, base+era.path, era.version, http.DefaultClient)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				callBench(b, cs)
			}
		})
	}
}

// BenchmarkHTTPEraRatios interleaves the four calls of the two benchmarks above (the hub
// stateless, the hub on a session, go-sdk alone stateless, go-sdk alone on a session) call by
// call, so load from other jobs on a shared machine falls on all four alike, and reports each
// one's µs per call and the two ratios (stateless ÷ session): the hub's and go-sdk's own.
//
//	go test ./mcp -run '^$' -bench HTTPEraRatios -benchtime 2000x -count 5
func BenchmarkHTTPEraRatios(b *testing.B) {
	s := newBenchService(b)
	hub := "http://" + listenBench(b, s) + "/mcp"
	base := listenGoSDK(b)
	hc := &http.Client{Transport: bearer{"s3cret", http.DefaultTransport}}
	clients := []*sdk.ClientSession{
		eraClient(b, hub, "", hc),
		eraClient(b, hub, "2025-11-25", hc),
		eraClient(b, base+"/stateless", "", http.DefaultClient),
		eraClient(b, base+"/stateful", "2025-11-25", http.DefaultClient),
	}
	var total, cpu [4]time.Duration
	for _, cs := range clients { // warm every connection and code path
		for range 20 {
			callBench(b, cs)
		}
	}
	b.ResetTimer()
	n := 0
	for b.Loop() {
		for i, cs := range clients {
			t, c := time.Now(), processCPU()
			callBench(b, cs)
			total[i] += time.Since(t)
			cpu[i] += processCPU() - c
		}
		n++
	}
	us := func(i int) float64 { return float64(total[i].Microseconds()) / float64(n) }
	b.ReportMetric(us(0), "hub-stateless-µs")
	b.ReportMetric(us(1), "hub-session-µs")
	b.ReportMetric(us(2), "sdk-stateless-µs")
	b.ReportMetric(us(3), "sdk-session-µs")
	b.ReportMetric(us(0)/us(1), "hub-ratio")
	b.ReportMetric(us(2)/us(3), "sdk-ratio")
	b.ReportMetric(us(0)-us(1)-(us(2)-us(3)), "hub-extra-µs")
	// CPU time (client and server: one process) per call: steadier than wall time on a loaded
	// machine.
	cus := func(i int) float64 { return float64(cpu[i].Microseconds()) / float64(n) }
	b.ReportMetric(cus(0)/cus(1), "hub-cpu-ratio")
	b.ReportMetric(cus(2)/cus(3), "sdk-cpu-ratio")
	b.ReportMetric(cus(0), "hub-stateless-cpu-µs")
	b.ReportMetric(cus(1), "hub-session-cpu-µs")
}
