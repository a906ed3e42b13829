package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/testutil"
	"github.com/switchboard-hub/switchboard/mcp/tools"
	mcptransport "github.com/switchboard-hub/switchboard/mcp/transport"
)

const initLine = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}` + "\n" +
	`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"

// rawSession drives a Service over a raw newline-delimited stream and returns every reply line
// the server wrote until it closed the stream.
func rawSession(t *testing.T, s *Service, input string) []map[string]any {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- s.ServeStream(context.Background(), "test", "pipe", inR, outW, func() error { return outW.Close() })
	}()
	go func() {
		io.WriteString(inW, input)
		inW.Close() // the client closes its input right after its last request (go-sdk #1061)
	}()
	var replies []map[string]any
	sc := bufio.NewScanner(outR)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("server wrote non-JSON line %q", sc.Text())
		}
		replies = append(replies, m)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("ServeStream did not return after the client closed its input")
	}
	return replies
}

func byID(replies []map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, r := range replies {
		out[fmt.Sprint(r["id"])] = r
	}
	return out
}

func TestEveryReplyDeliveredWhenClientClosesInput(t *testing.T) {
	s := newTestService(t, WithSubsystem(sleepSubsystem{}))
	var in strings.Builder
	in.WriteString(initLine)
	for i := 1; i <= 20; i++ {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"test_sleep","arguments":{"ms":%d}}}`+"\n", i, 50+i*5)
	}
	replies := byID(rawSession(t, s, in.String()))
	for i := 1; i <= 20; i++ {
		r, ok := replies[fmt.Sprint(i)]
		if !ok {
			t.Errorf("reply %d lost after the client closed its input", i)
			continue
		}
		if r["error"] != nil {
			t.Errorf("reply %d is an error: %v", i, r["error"])
		}
	}
}

func TestOversizedAndMalformedMessagesGetErrorsAndSessionContinues(t *testing.T) {
	s := newTestService(t)
	huge := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"file_write","arguments":{"path":"big.txt","content":"` +
		strings.Repeat("x", mcptransport.MaxMessageSize+10) + `"}}}` + "\n"
	in := initLine + huge +
		"this is not json\n" +
		`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"lang_detect","arguments":{"path":"x.go"}}}` + "\n"
	replies := byID(rawSession(t, s, in))
	big := replies["7"]
	if big == nil || big["error"] == nil {
		t.Fatalf("oversized message: no JSON-RPC error with id 7; replies: %v", keys(replies))
	}
	if msg := big["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "10 MiB") {
		t.Errorf("oversized error message %q should name the limit", msg)
	}
	if p := replies["<nil>"]; p == nil || p["error"].(map[string]any)["code"].(float64) != -32700 {
		t.Errorf("malformed line: want a parse error with null id, got %v", p)
	} else if id, present := p["id"]; !present || id != nil {
		t.Errorf("malformed line: error must carry \"id\": null (JSON-RPC 2.0 §5), got %v", p)
	}
	ok := replies["8"]
	if ok == nil || ok["result"] == nil {
		t.Fatalf("request after the bad ones was not served: %v", ok)
	}
	if _, err := os.Stat(filepath.Join(s.Workspace().Dir(), "big.txt")); err == nil {
		t.Error("oversized write was executed")
	}
}

func keys(m map[string]map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func dialClient(t *testing.T, network, addr string) *sdk.ClientSession {
	t.Helper()
	conn, err := net.Dial(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "sock-client", Version: "2.0"}, nil).Connect(context.Background(), &sdk.IOTransport{Reader: conn, Writer: conn}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func TestUnixSocketSemantics(t *testing.T) {
	s := newTestService(t)
	dir, err := os.MkdirTemp("", "sb-sock-") // short path: sun_path is 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "run", "mcp.sock")

	// A stale socket file (nobody listening) is replaced.
	os.MkdirAll(filepath.Dir(path), 0o700)
	stale, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	stale.(*net.UnixListener).SetUnlinkOnClose(false)
	stale.Close()

	tr := s.NewTransports(TransportConfig{UnixPath: path})
	if err := tr.Start(TransportUnix); err != nil {
		t.Fatalf("start over stale socket: %v", err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode = %v, %v; want 0600", fi.Mode().Perm(), err)
	}
	// A live socket (another hub) is never stolen.
	s2 := newTestService(t)
	if err := s2.NewTransports(TransportConfig{UnixPath: path}).Start(TransportUnix); err == nil || !strings.Contains(err.Error(), "another Switchboard hub") {
		t.Fatalf("second hub on a live socket: err = %v", err)
	}
	cs := dialClient(t, "unix", path)
	var out tools.DetectLanguageOutput
	mustCall(t, cs, "lang_detect", map[string]any{"path": "a.rs"}, &out)
	if out.Language != "rust" {
		t.Fatalf("over unix: %+v", out)
	}
	// The second hub's probe of the live socket was a connection too; its session ends when the
	// hub notices the probe closed.
	testutil.Eventually(t, "the probe's session to end", func() bool { return len(s.Sessions().List()) == 1 })
	sess := s.Sessions().List()
	if len(sess) != 1 || sess[0].Transport != "unix" || sess[0].ClientName != "sock-client" || sess[0].Calls != 1 || !strings.HasPrefix(sess[0].Peer, "pid ") {
		t.Fatalf("session registry = %+v", sess)
	}
	cs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := tr.Stop(ctx, TransportUnix); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Fatalf("socket file left after stop: %v", err)
	}
	testutil.Eventually(t, "session removed after disconnect", func() bool { return len(s.Sessions().List()) == 0 })
}

func TestTCPManyClientsAndOneBadClient(t *testing.T) {
	s := newTestService(t)
	tr := s.NewTransports(TransportConfig{TCPAddr: "127.0.0.1:0"})
	if err := tr.Start(TransportTCP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.StopAll(context.Background()) })
	addr := tr.Addr(TransportTCP)

	// A misbehaving client sends an oversized message and garbage.
	bad, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Close()
	go func() {
		io.WriteString(bad, initLine)
		bad.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"x","params":"` + strings.Repeat("y", mcptransport.MaxMessageSize+1) + "\"}\n"))
	}()

	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			cs := dialClient(t, "tcp", addr)
			for j := 0; j < 10; j++ {
				var out tools.FileExistsOutput
				if e := call(t, cs, "file_exists", map[string]any{"path": "."}, &out); e != "" || !out.Exists {
					errs <- fmt.Errorf("client %d call %d: %q %+v", i, j, e, out)
					return
				}
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// The bad client got an error reply, not a dropped connection.
	bad.SetReadDeadline(time.Now().Add(10 * time.Second))
	sc := bufio.NewScanner(bad)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	found := false
	for sc.Scan() {
		if strings.Contains(sc.Text(), `"id":1`) && strings.Contains(sc.Text(), "exceeds") {
			found = true
			break
		}
	}
	if !found {
		t.Error("oversized TCP message got no JSON-RPC error")
	}
}

type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

func TestHTTPAuthHostOriginAndClient(t *testing.T) {
	s := newTestService(t)
	tr := s.NewTransports(TransportConfig{HTTPAddr: "127.0.0.1:0", HTTPToken: "s3cret"})
	if err := tr.Start(TransportHTTP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.StopAll(context.Background()) })
	url := "http://" + tr.Addr(TransportHTTP) + "/mcp"
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	post := func(mod func(*http.Request)) int {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		mod(req)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if c := post(func(*http.Request) {}); c != http.StatusUnauthorized {
		t.Errorf("no token: %d, want 401", c)
	}
	if c := post(func(r *http.Request) { r.Header.Set("Authorization", "Bearer wrong") }); c != http.StatusUnauthorized {
		t.Errorf("wrong token: %d, want 401", c)
	}
	if c := post(func(r *http.Request) { r.Header.Set("Authorization", "Bearer s3cret"); r.Host = "evil.example:80" }); c != http.StatusForbidden {
		t.Errorf("foreign Host: %d, want 403", c)
	}
	if c := post(func(r *http.Request) {
		r.Header.Set("Authorization", "Bearer s3cret")
		r.Header.Set("Origin", "http://evil.example")
	}); c != http.StatusForbidden {
		t.Errorf("foreign Origin: %d, want 403", c)
	}
	if c := post(func(r *http.Request) { r.Header.Set("Authorization", "Bearer s3cret") }); c != http.StatusOK {
		t.Errorf("good request: %d, want 200", c)
	}
	hc := &http.Client{Transport: bearer{"s3cret", http.DefaultTransport}}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "http-client", Version: "3"}, nil).Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var out tools.DetectLanguageOutput
	mustCall(t, cs, "lang_detect", map[string]any{"path": "x.py"}, &out)
	if out.Language != "python" {
		t.Fatalf("over http: %+v", out)
	}
	found := false
	for _, si := range s.Sessions().List() {
		if si.Transport == "http" && si.ClientName == "http-client" && si.Calls == 1 {
			found = true
		}
	}
	if !found {
		t.Errorf("http session not in registry: %+v", s.Sessions().List())
	}
}

func TestShutdownLetsInFlightCallsFinish(t *testing.T) {
	started := make(chan struct{}, 1)
	s := newTestService(t, WithSubsystem(sleepSubsystem{started: started}))
	tr := s.NewTransports(TransportConfig{TCPAddr: "127.0.0.1:0"})
	if err := tr.Start(TransportTCP); err != nil {
		t.Fatal(err)
	}
	cs := dialClient(t, "tcp", tr.Addr(TransportTCP))
	result := make(chan string, 1)
	go func() {
		var out sleepOutput
		result <- call(t, cs, "test_sleep", map[string]any{"ms": 400}, &out) + fmt.Sprint(out.Slept)
	}()
	select {
	case <-started: // the call is in flight
	case <-time.After(10 * time.Second):
		t.Fatal("test_sleep never started")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := tr.Stop(ctx, TransportTCP); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-result:
		if got != "400" {
			t.Fatalf("in-flight call during shutdown = %q, want it to finish with 400", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("in-flight call never answered")
	}
	if _, err := net.Dial("tcp", tr.cfg.TCPAddr); err == nil && tr.Addr(TransportTCP) != "" {
		t.Error("tcp still accepting after stop")
	}
}

// writeLog records every Write a transport makes.
type writeLog struct {
	mu     sync.Mutex
	w      io.Writer
	writes []string
}

func (l *writeLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.writes = append(l.writes, string(p))
	l.mu.Unlock()
	return l.w.Write(p)
}

// Over a stream without writev (stdio), a small reply leaves in one write: four writes (head,
// result, tail, newline) made the client read it in pieces.
func TestStreamSmallReplyIsOneWrite(t *testing.T) {
	s := newTestService(t)
	if err := os.WriteFile(filepath.Join(s.WorkspaceDir(), "a.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	log := &writeLog{w: outW}
	done := make(chan error, 1)
	go func() { done <- s.ServeStream(context.Background(), "test", "pipe", inR, log, outW.Close) }()
	go func() {
		io.WriteString(inW, initLine+`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"file_exists","arguments":{"path":"a.txt"}}}`+"\n")
		inW.Close()
	}()
	if _, err := io.ReadAll(outR); err != nil {
		t.Fatal(err)
	}
	<-done
	log.mu.Lock()
	defer log.mu.Unlock()
	if len(log.writes) != 2 {
		t.Fatalf("2 replies took %d writes: %q", len(log.writes), log.writes)
	}
	for _, w := range log.writes {
		if strings.Count(w, "\n") != 1 || !strings.HasSuffix(w, "\n") || !json.Valid([]byte(w)) {
			t.Errorf("write is not one whole reply line: %q", w)
		}
	}
}

// TestTransportSetAddr: a running TCP transport moves to a new address (the old one stops
// answering, an MCP client is served on the new one); an address that cannot be bound is refused
// and the transport keeps running where it was. A transport that is off just remembers the
// address for its next start.
func TestTransportSetAddr(t *testing.T) {
	s := newTestService(t)
	tr := s.NewTransports(TransportConfig{TCPAddr: "127.0.0.1:0"})
	t.Cleanup(func() { tr.StopAll(context.Background()) })
	if err := tr.Start(TransportTCP); err != nil {
		t.Fatal(err)
	}
	first := tr.Addr(TransportTCP)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	free, _ := net.Listen("tcp", "127.0.0.1:0")
	next := free.Addr().String()
	free.Close()
	if err := tr.SetAddr(ctx, TransportTCP, next); err != nil {
		t.Fatal(err)
	}
	if got := tr.Addr(TransportTCP); got != next {
		t.Fatalf("running on %s, want %s", got, next)
	}
	if c, err := net.Dial("tcp", first); err == nil {
		c.Close()
		t.Fatalf("the old address %s still answers", first)
	}
	cs := dialClient(t, "tcp", next)
	var out tools.FileExistsOutput
	mustCall(t, cs, "file_exists", map[string]any{"path": "."}, &out)
	cs.Close()

	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	if err := tr.SetAddr(ctx, TransportTCP, taken.Addr().String()); err == nil {
		t.Fatal("moved onto a taken port")
	}
	if got := tr.Addr(TransportTCP); got != next {
		t.Fatalf("after a refused move: running on %q, want %s", got, next)
	}
	if err := tr.Stop(ctx, TransportTCP); err != nil {
		t.Fatal(err)
	}
	if err := tr.SetAddr(ctx, TransportTCP, "127.0.0.1:0"); err != nil || tr.Addr(TransportTCP) != "" {
		t.Fatalf("off: %v, running on %q", err, tr.Addr(TransportTCP))
	}
	for _, st := range tr.Status() {
		if st.Name == TransportTCP && st.Addr != "127.0.0.1:0" {
			t.Fatalf("status addr %q", st.Addr)
		}
	}
	if err := tr.SetAddr(ctx, TransportWS, "127.0.0.1:0"); err == nil {
		t.Fatal("ws address changed")
	}
}
