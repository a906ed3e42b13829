package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/testutil"
	"github.com/switchboard-hub/switchboard/mcp/tools"
	mcptransport "github.com/switchboard-hub/switchboard/mcp/transport"
)

// rawLines drives a Service over a raw newline-delimited stream and returns every line the server
// wrote until it closed the stream, byte for byte.
func rawLines(t *testing.T, s *Service, input string) []string {
	t.Helper()
	return rawLinesUntil(t, s, input, 0)
}

// rawLinesUntil is rawLines for a client that keeps its input open until it has read want
// lines, as real clients do: a client that closes its input gets only EOFGrace for its replies.
// With want 0 the input closes right after the last request.
func rawLinesUntil(t *testing.T, s *Service, input string, want int) []string {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- s.ServeStream(context.Background(), "test", "pipe", inR, outW, func() error { return outW.Close() })
	}()
	enough := make(chan struct{})
	if want == 0 {
		close(enough)
	}
	go func() {
		io.WriteString(inW, input)
		<-enough
		inW.Close()
	}()
	var lines []string
	sc := bufio.NewScanner(outR)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for len(lines) < want && sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if want > 0 {
		close(enough)
	}
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("ServeStream did not return after the client closed its input")
	}
	return lines
}

func initWith(version string) string {
	return `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"
}

// TestRequestIDsEchoedExactly: ids go-sdk cannot carry (fractions, exponents, integers beyond
// 2^53) are answered with the id exactly as sent, and so are parse errors.
func TestRequestIDsEchoedExactly(t *testing.T) {
	s := newTestService(t)
	ids := []string{`1.5`, `1e400`, `-0`, `12345678901234567890`, `7`, `"abc"`, `"\u0000switchboard-id-1"`, `2.50`, `-3`}
	var in strings.Builder
	in.WriteString(initLine)
	for _, id := range ids {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"lang_detect","arguments":{"path":"x.go"}}}`+"\n", id)
	}
	in.WriteString(`{"jsonrpc":"2.0","id":1e400,"method":"tools/call","params":` + "\n") // truncated: parse error
	in.WriteString(`{"jsonrpc":"2.0","id":4.25,"method":"no/such/method"}` + "\n")
	lines := rawLines(t, s, in.String())
	idOf := func(line string) string {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("reply is not JSON: %s", line)
		}
		return string(m["id"])
	}
	got := map[string]string{} // id -> its result line (or the error line, if no result)
	for _, l := range lines {
		if _, seen := got[idOf(l)]; !seen || strings.Contains(l, `"result"`) {
			got[idOf(l)] = l
		}
	}
	for _, id := range ids {
		l, ok := got[id]
		if !ok {
			t.Errorf("no reply with id %s exactly as sent; reply ids: %v", id, slices.Collect(mapKeys(got)))
			continue
		}
		if !strings.Contains(l, `"result"`) || !strings.Contains(l, `go`) {
			t.Errorf("id %s: %s", id, l)
		}
	}
	parseErrs := 0
	for _, l := range lines {
		if idOf(l) == "1e400" && strings.Contains(l, "-32700") {
			parseErrs++
		}
	}
	if parseErrs != 1 {
		t.Errorf("the truncated message with id 1e400 should get one parse error carrying id 1e400; lines:\n%s", strings.Join(lines, "\n"))
	}
	if l := got["4.25"]; !strings.Contains(l, `"error"`) {
		t.Errorf("unknown method with id 4.25: %q", l)
	}
}

func mapKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// TestBatchesOn20250326: a session that negotiated 2025-03-26 gets batches answered with one
// array; other sessions get a clear error instead of a half answer.
func TestBatchesOn20250326(t *testing.T) {
	s := newTestService(t, WithSubsystem(sleepSubsystem{}))
	batch := `[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_sleep","arguments":{"ms":80}}},` +
		`{"jsonrpc":"2.0","id":"two","method":"tools/call","params":{"name":"lang_detect","arguments":{"path":"a.rs"}}},` +
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"x","progress":1}},` +
		`{"jsonrpc":"2.0","id":3.5,"method":"ping"},` +
		`{"foo":1}]` + "\n"
	lines := rawLines(t, s, initWith("2025-03-26")+batch+"[]\n"+`[{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}]`+"\n")
	if len(lines) != 3 {
		t.Fatalf("want initialize reply, one batch reply, one empty-batch error; got %d lines:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	// Replies may come in any order: the batch's array comes when its slowest member is done.
	slices.SortFunc(lines[1:], func(a, b string) int { return strings.Compare(a[:1], b[:1]) }) // "[" sorts before "{"
	var arr []map[string]json.RawMessage
	if err := json.Unmarshal([]byte(lines[1]), &arr); err != nil {
		t.Fatalf("no batch reply (a JSON array) among:\n%s", strings.Join(lines, "\n"))
	}
	byID := map[string]map[string]json.RawMessage{}
	for _, r := range arr {
		byID[string(r["id"])] = r
	}
	if len(arr) != 4 || byID["1"]["result"] == nil || byID[`"two"`]["result"] == nil || byID["3.5"]["result"] == nil || byID["null"]["error"] == nil {
		t.Fatalf("batch reply = %s; want results for 1, \"two\", 3.5 and an error (id null) for the invalid member", lines[1])
	}
	if !strings.Contains(lines[2], "-32600") || !strings.Contains(lines[2], `"id":null`) {
		t.Errorf("empty batch: %s", lines[2])
	}

	// 2025-06-18 removed batches: refused with a message, the session goes on.
	lines = rawLines(t, s, initWith("2025-06-18")+batch+`{"jsonrpc":"2.0","id":9,"method":"ping"}`+"\n")
	if len(lines) != 3 || !strings.Contains(lines[1], "2025-03-26") || !strings.Contains(lines[1], "-32600") || !strings.Contains(lines[2], `"id":9`) {
		t.Fatalf("batch on 2025-06-18:\n%s", strings.Join(lines, "\n"))
	}
}

// listen starts a transport and returns its address.
func listen(t *testing.T, s *Service, name string, cfg TransportConfig) string {
	t.Helper()
	tr := s.NewTransports(cfg)
	if err := tr.Start(name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		tr.StopAll(ctx)
	})
	return tr.Addr(name)
}

// readAllWithin reads until EOF or the deadline and says whether the peer closed.
func readAllWithin(c net.Conn, d time.Duration) (string, bool) {
	c.SetReadDeadline(time.Now().Add(d))
	b, err := io.ReadAll(c)
	if ne := net.Error(nil); errors.As(err, &ne) && ne.Timeout() {
		return string(b), false
	}
	return string(b), true
}

// TestCrossProtocolRequestClosedUnread replays what a web page's fetch() sends to the TCP port (an
// HTTP request whose body is JSON-RPC lines) and the same on the Unix socket: the connection is
// closed without an answer and nothing in the body runs; proper clients are still served.
func TestCrossProtocolRequestClosedUnread(t *testing.T) {
	s := newTestService(t)
	sock := filepath.Join(shortTempDir(t), "mcp.sock")
	for _, tc := range []struct{ network, addr string }{
		{"tcp", listen(t, s, TransportTCP, TransportConfig{TCPAddr: "127.0.0.1:0"})},
		{"unix", listen(t, s, TransportUnix, TransportConfig{UnixPath: sock})},
	} {
		body := initLine + `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"file_write","arguments":{"path":"pwned-` + tc.network + `.txt","content":"x"}}}` + "\n"
		req := "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nOrigin: http://evil.example\r\nContent-Length: " + fmt.Sprint(len(body)) + "\r\n\r\n" + body
		c, err := net.Dial(tc.network, tc.addr)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, req)
		out, closed := readAllWithin(c, 5*time.Second)
		c.Close()
		if !closed || out != "" {
			t.Errorf("%s: HTTP request got %q, closed=%v; want the connection closed without a byte", tc.network, out, closed)
		}
		// Belt and braces: a closed connection already means no session read the body; a write
		// that never comes sends no signal, so this gives one a moment on purpose.
		time.Sleep(100 * time.Millisecond)
		if _, err := os.Stat(filepath.Join(s.Workspace().Dir(), "pwned-"+tc.network+".txt")); err == nil {
			t.Errorf("%s: the request body was executed", tc.network)
		}
		// Garbage first line: closed too.
		c, _ = net.Dial(tc.network, tc.addr)
		io.WriteString(c, "hello\n"+initLine)
		if out, closed := readAllWithin(c, 5*time.Second); !closed || out != "" {
			t.Errorf("%s: garbage first line got %q, closed=%v", tc.network, out, closed)
		}
		c.Close()
		// A real client still works.
		cs := dialClient(t, tc.network, tc.addr)
		var lang tools.DetectLanguageOutput
		mustCall(t, cs, "lang_detect", map[string]any{"path": "a.go"}, &lang)
	}
}

func shortTempDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "sb-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// tokenClient connects a go-sdk client to a TCP hub after sending the given first line.
func tokenClient(t *testing.T, addr, first string) (*sdk.ClientSession, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	if first != "" {
		io.WriteString(c, first+"\n")
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "tok-client", Version: "1"}, nil).Connect(context.Background(), &sdk.IOTransport{Reader: c, Writer: c}, nil)
	if err != nil {
		c.Close()
		return nil, err
	}
	t.Cleanup(func() { cs.Close() })
	return cs, nil
}

func TestTCPTokenHandshake(t *testing.T) {
	s := newTestService(t)
	// Beyond loopback without a token: refused before anything listens.
	tr := s.NewTransports(TransportConfig{TCPAddr: "0.0.0.0:0"})
	if err := tr.Start(TransportTCP); err == nil || !strings.Contains(err.Error(), "token") {
		t.Fatalf("non-loopback TCP without a token: err = %v", err)
	}
	if tr.Addr(TransportTCP) != "" {
		t.Fatal("TCP listening without a token beyond loopback")
	}

	const token = "t0ken-for-tests"
	tokTr := s.NewTransports(TransportConfig{TCPAddr: "127.0.0.1:0", TCPToken: token, TCPRequireToken: true})
	if err := tokTr.Start(TransportTCP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tokTr.StopAll(context.Background()) })
	addr := tokTr.Addr(TransportTCP)
	for _, st := range tokTr.Status() { // the dashboard shows how clients authenticate
		if st.Name == TransportTCP && !strings.Contains(st.Auth, "token required") {
			t.Errorf("tcp status auth = %q", st.Auth)
		}
	}
	auth := func(tok string) string {
		return `{"jsonrpc":"2.0","method":"switchboard/auth","params":{"token":"` + tok + `"}}`
	}
	// The handshake as a notification, then any MCP client.
	cs, err := tokenClient(t, addr, auth(token))
	if err != nil {
		t.Fatalf("with the handshake: %v", err)
	}
	var lang tools.DetectLanguageOutput
	mustCall(t, cs, "lang_detect", map[string]any{"path": "a.py"}, &lang)

	// The handshake as a request: answered with an empty result.
	c, _ := net.Dial("tcp", addr)
	io.WriteString(c, `{"jsonrpc":"2.0","id":"auth","method":"switchboard/auth","params":{"token":"`+token+`"}}`+"\n"+initLine)
	r := bufio.NewReader(c)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	l1, _ := r.ReadString('\n')
	l2, _ := r.ReadString('\n')
	c.Close()
	if !strings.Contains(l1, `"id":"auth","result":{}`) || !strings.Contains(l2, `"serverInfo"`) {
		t.Errorf("handshake request: %q then %q", l1, l2)
	}

	// The token in initialize's _meta.
	c, _ = net.Dial("tcp", addr)
	io.WriteString(c, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"_meta":{"switchboard/token":"`+token+`"},"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"m","version":"1"}}}`+"\n")
	r = bufio.NewReader(c)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	l1, _ = r.ReadString('\n')
	c.Close()
	if !strings.Contains(l1, `"serverInfo"`) {
		t.Errorf("initialize with _meta token: %q", l1)
	}

	// No token, wrong token: an error naming the fix, then the connection closes; nothing runs.
	for name, first := range map[string]string{
		"no handshake": `{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`,
		"wrong token":  auth("nope"),
		"empty token":  auth(""),
	} {
		c, _ := net.Dial("tcp", addr)
		io.WriteString(c, first+"\n"+`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"file_write","arguments":{"path":"pwned.txt","content":"x"}}}`+"\n")
		out, closed := readAllWithin(c, 5*time.Second)
		c.Close()
		if !closed || !strings.Contains(out, "-32001") || !strings.Contains(out, "switchboard token") || strings.Count(out, "\n") != 1 {
			t.Errorf("%s: got %q closed=%v; want one -32001 error naming the fix, then close", name, out, closed)
		}
		if name == "no handshake" && !strings.Contains(out, `"id":5`) {
			t.Errorf("no handshake: the error should carry the request id: %q", out)
		}
	}
	if _, err := os.Stat(filepath.Join(s.Workspace().Dir(), "pwned.txt")); err == nil {
		t.Error("an unauthenticated request ran")
	}

	// Without a token requirement the handshake is a harmless no-op.
	open := listen(t, s, TransportTCP, TransportConfig{TCPAddr: "127.0.0.1:0"})
	cs, err = tokenClient(t, open, auth("whatever"))
	if err != nil {
		t.Fatalf("handshake on an open listener: %v", err)
	}
	mustCall(t, cs, "lang_detect", map[string]any{"path": "a.py"}, &lang)
}

// heapInUse returns the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	debug.FreeOSMemory()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// TestFloodingClientIsBounded: a client pipelines 100 whole-file reads of a 4 MiB file over TCP
// and never reads a reply. The hub stops reading it once mcptransport.MaxInFlight requests or
// mcptransport.MaxQueuedReplyBytes of replies are pending, so its heap stays within a fixed budget; a second
// client keeps being served meanwhile, and the memory comes back when the flooder leaves.
func TestFloodingClientIsBounded(t *testing.T) {
	s := newTestService(t)
	big := strings.Repeat("0123456789abcdef", 4<<20/16-1) + "\n"
	if err := os.WriteFile(filepath.Join(s.Workspace().Dir(), "big.txt"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := listen(t, s, TransportTCP, TransportConfig{TCPAddr: "127.0.0.1:0"})
	base := heapInUse()

	flood, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	flood.(*net.TCPConn).SetReadBuffer(64 << 10)
	var sent sync.WaitGroup
	sent.Add(1)
	go func() { // ends when the connection is closed below
		defer sent.Done()
		io.WriteString(flood, initLine)
		for i := 1; i <= 100; i++ {
			if _, err := fmt.Fprintf(flood, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"file_read","arguments":{"path":"big.txt"}}}`+"\n", i); err != nil {
				return
			}
		}
	}()

	var peak uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapInuse)
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	// Meanwhile another client is served.
	cs := dialClient(t, "tcp", addr)
	for i := 0; i < 20; i++ {
		var out tools.FileExistsOutput
		if e := call(t, cs, "file_exists", map[string]any{"path": "big.txt"}, &out); e != "" || !out.Exists {
			t.Fatalf("second client during the flood: %q %+v", e, out)
		}
		time.Sleep(50 * time.Millisecond) // on purpose: the calls are spread over the flood's length
	}
	close(stop)
	<-sampled
	growth := int64(peak) - int64(base)
	t.Logf("heap in use: base %d MiB, peak during flood %d MiB", base>>20, peak>>20)
	if growth > 256<<20 {
		t.Errorf("heap grew by %d MiB under the flood; budget 256 MiB", growth>>20)
	}
	flood.Close()
	sent.Wait()
	testutil.Eventually(t, "memory returned after the flooder left", func() bool { return heapInUse() < base+32<<20 })
}

// TestWindowKeepsSmallCallsConcurrent: the per-connection window that serializes large replies
// still lets a client run its small calls side by side once its first replies are in.
func TestWindowKeepsSmallCallsConcurrent(t *testing.T) {
	s := newTestService(t, WithSubsystem(sleepSubsystem{}))
	addr := listen(t, s, TransportTCP, TransportConfig{TCPAddr: "127.0.0.1:0"})
	cs := dialClient(t, "tcp", addr)
	for i := 0; i < mcptransport.MaxInFlight; i++ { // small replies open the window
		var lang tools.DetectLanguageOutput
		mustCall(t, cs, "lang_detect", map[string]any{"path": "a.go"}, &lang)
	}
	start := time.Now()
	var wg sync.WaitGroup
	for i := 0; i < mcptransport.MaxInFlight; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var out sleepOutput
			mustCall(t, cs, "test_sleep", map[string]any{"ms": 400}, &out)
		}()
	}
	wg.Wait()
	if took := time.Since(start); took > time.Duration(mcptransport.MaxInFlight)*400*time.Millisecond/2 {
		t.Errorf("%d concurrent 400 ms calls on one connection took %v: they ran (nearly) one after another", mcptransport.MaxInFlight, took)
	}
}

// TestCancelledRequestGetsNoReply: after notifications/cancelled the request is not answered (as
// the spec says), also when its id is one go-sdk cannot carry; the session goes on.
func TestCancelledRequestGetsNoReply(t *testing.T) {
	s := newTestService(t, WithSubsystem(sleepSubsystem{}))
	in := initLine +
		`{"jsonrpc":"2.0","id":1.5,"method":"tools/call","params":{"name":"test_sleep","arguments":{"ms":3000}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1.5,"reason":"user"}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\n"
	start := time.Now()
	lines := rawLines(t, s, in)
	for _, l := range lines {
		if strings.Contains(l, `"id":1.5`) || strings.Contains(l, `"id":1,`) {
			t.Errorf("the cancelled request was answered: %s", l)
		}
	}
	if len(lines) != 2 || !strings.Contains(lines[1], `"id":2`) {
		t.Errorf("want the initialize and ping replies only, got:\n%s", strings.Join(lines, "\n"))
	}
	if took := time.Since(start); took > 2500*time.Millisecond {
		t.Errorf("the session waited %v for the cancelled call", took)
	}
}

// TestLargeBatchIsBounded: a batch's replies wait in memory until the whole batch is answered, so
// once they pass mcptransport.MaxQueuedReplyBytes the rest of the batch is refused with errors, not run.
func TestLargeBatchIsBounded(t *testing.T) {
	s := newTestService(t)
	big := strings.Repeat("0123456789abcdef", 4<<20/16-1) + "\n"
	os.WriteFile(filepath.Join(s.Workspace().Dir(), "big.txt"), []byte(big), 0o644)
	var b strings.Builder
	b.WriteString("[")
	for i := 1; i <= 10; i++ {
		if i > 1 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"file_read","arguments":{"path":"big.txt"}}}`, i)
	}
	b.WriteString("]\n")
	lines := rawLinesUntil(t, s, initWith("2025-03-26")+b.String(), 2)
	if len(lines) != 2 {
		t.Fatalf("want the initialize reply and one batch reply, got %d lines", len(lines))
	}
	var arr []map[string]json.RawMessage
	if err := json.Unmarshal([]byte(lines[1]), &arr); err != nil || len(arr) != 10 {
		t.Fatalf("batch reply: %d entries, %v", len(arr), err)
	}
	ok, refused := 0, 0
	for _, r := range arr {
		switch {
		case r["result"] != nil:
			ok++
		case r["error"] != nil && strings.Contains(string(r["error"]), "one per line"):
			refused++
		}
	}
	t.Logf("%d answered, %d refused, batch reply %d MiB", ok, refused, len(lines[1])>>20)
	if ok == 0 || ok > 4 || ok+refused != 10 {
		t.Errorf("%d answered, %d refused; want a few answered (up to the %d MiB budget) and the rest refused", ok, refused, mcptransport.MaxQueuedReplyBytes>>20)
	}
	if len(lines[1]) > 3*mcptransport.MaxQueuedReplyBytes {
		t.Errorf("batch reply of %d MiB", len(lines[1])>>20)
	}
}
