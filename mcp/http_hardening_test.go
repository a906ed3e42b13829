package mcp

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	mcpclient "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mgo "github.com/mark3labs/mcp-go/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/testutil"
	"github.com/switchboard-hub/switchboard/mcp/tools"
)

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`

// slowPost opens a raw connection, sends request headers announcing a large body and trickles
// one byte every 100 ms. It returns what the server answered and how long until it closed the
// connection (or gives up after limit).
func slowPost(t *testing.T, addr, path, auth string, limit time.Duration) (string, time.Duration, bool) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	hdr := "POST " + path + " HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000000\r\n"
	if auth != "" {
		hdr += "Authorization: " + auth + "\r\n"
	}
	io.WriteString(c, hdr+"\r\n{")
	start := time.Now()
	done := make(chan struct{})
	go func() { // trickles until the server closes or the test gives up
		for {
			select {
			case <-done:
				return
			case <-time.After(100 * time.Millisecond):
				if _, err := c.Write([]byte(" ")); err != nil {
					return
				}
			}
		}
	}()
	defer close(done)
	c.SetReadDeadline(time.Now().Add(limit))
	b, err := io.ReadAll(c)
	closed := err == nil || !isTimeout(err)
	return string(b), time.Since(start), closed
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// TestHTTPSlowBodies: a stranger trickling a large body gets a 401 and a closed connection at
// once; a client with the token that trickles is cut at the read timeout; long SSE streams (a
// slow tool call, the standalone GET stream) outlive that timeout.
func TestHTTPSlowBodies(t *testing.T) {
	s := newTestService(t, WithSubsystem(sleepSubsystem{}))
	addr := listen(t, s, TransportHTTP, TransportConfig{HTTPAddr: "127.0.0.1:0", HTTPToken: "s3cret", HTTPReadTimeout: 700 * time.Millisecond})

	out, took, closed := slowPost(t, addr, "/mcp", "", 5*time.Second)
	if !strings.HasPrefix(out, "HTTP/1.1 401") || !closed || took > 600*time.Millisecond {
		t.Errorf("unauthenticated slow body: closed=%v after %v, reply %q; want 401 and close at once", closed, took, statusLine(out))
	}
	out, took, closed = slowPost(t, addr, "/mcp", "Bearer s3cret", 5*time.Second)
	if !closed || took > 3*time.Second {
		t.Errorf("authenticated slow body: closed=%v after %v (%q); want it cut at the read timeout", closed, took, statusLine(out))
	}

	// A tool call that takes longer than the read timeout, over the SSE reply of its POST.
	hc := &http.Client{Transport: bearer{"s3cret", http.DefaultTransport}}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "slow", Version: "1"}, nil).Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp", HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var slept sleepOutput
	mustCall(t, cs, "test_sleep", map[string]any{"ms": 1500}, &slept)

	// The standalone GET stream stays open past the read timeout.
	sid := initHTTPSession(t, addr, "s3cret")
	c, _ := net.Dial("tcp", addr)
	defer c.Close()
	io.WriteString(c, "GET /mcp HTTP/1.1\r\nHost: "+addr+"\r\nAccept: text/event-stream\r\nAuthorization: Bearer s3cret\r\nMcp-Session-Id: "+sid+"\r\nMcp-Protocol-Version: 2025-06-18\r\n\r\n")
	br := bufio.NewReader(c)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	status, _ := br.ReadString('\n')
	if !strings.Contains(status, "200") {
		t.Fatalf("GET stream: %q", status)
	}
	c.SetReadDeadline(time.Now().Add(2 * time.Second)) // nearly 3 read timeouts
	for {
		if _, err := br.ReadString('\n'); err != nil {
			if !isTimeout(err) {
				t.Errorf("the SSE GET stream was cut: %v", err)
			}
			break
		}
	}
}

func statusLine(s string) string {
	l, _, _ := strings.Cut(s, "\r\n")
	return l
}

// initHTTPSession initializes a session with raw requests and returns its id.
func initHTTPSession(t *testing.T, addr, token string) string {
	t.Helper()
	resp := httpDo(t, "POST", "http://"+addr+"/mcp", initBody, map[string]string{"Authorization": "Bearer " + token})
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d, session %q", resp.StatusCode, sid)
	}
	httpDo(t, "POST", "http://"+addr+"/mcp", `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		map[string]string{"Authorization": "Bearer " + token, "Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-06-18"})
	return sid
}

func httpDo(t *testing.T, method, url, body string, hdr map[string]string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// TestHTTPCORSAllowedOrigins: a configured browser origin gets its preflight answered and CORS
// headers on its requests; every other origin is still refused.
func TestHTTPCORSAllowedOrigins(t *testing.T) {
	s := newTestService(t)
	addr := listen(t, s, TransportHTTP, TransportConfig{HTTPAddr: "127.0.0.1:0", HTTPToken: "s3cret", HTTPAllowedOrigins: []string{"http://localhost:6274"}})
	url := "http://" + addr + "/mcp"
	pre := httpDo(t, "OPTIONS", url, "", map[string]string{"Origin": "http://localhost:6274", "Access-Control-Request-Method": "POST",
		"Access-Control-Request-Headers": "authorization, content-type, mcp-session-id"})
	if pre.StatusCode != http.StatusNoContent || pre.Header.Get("Access-Control-Allow-Origin") != "http://localhost:6274" ||
		!strings.Contains(pre.Header.Get("Access-Control-Allow-Headers"), "Authorization") || !strings.Contains(pre.Header.Get("Access-Control-Allow-Methods"), "POST") {
		t.Errorf("preflight from the allowed origin: %d %v", pre.StatusCode, pre.Header)
	}
	evil := httpDo(t, "OPTIONS", url, "", map[string]string{"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"})
	if evil.StatusCode != http.StatusForbidden || evil.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("preflight from another origin: %d %v", evil.StatusCode, evil.Header)
	}
	ok := httpDo(t, "POST", url, initBody, map[string]string{"Origin": "http://localhost:6274", "Authorization": "Bearer s3cret"})
	if ok.StatusCode != http.StatusOK || ok.Header.Get("Access-Control-Allow-Origin") != "http://localhost:6274" || !strings.Contains(ok.Header.Get("Access-Control-Expose-Headers"), "Mcp-Session-Id") {
		t.Errorf("request from the allowed origin: %d %v", ok.StatusCode, ok.Header)
	}
	bad := httpDo(t, "POST", url, initBody, map[string]string{"Origin": "http://evil.example", "Authorization": "Bearer s3cret"})
	if bad.StatusCode != http.StatusForbidden {
		t.Errorf("request from another origin with the token: %d, want 403", bad.StatusCode)
	}
	if r := httpDo(t, "POST", url, initBody, map[string]string{"Authorization": "bearer s3cret"}); r.StatusCode != http.StatusOK {
		t.Errorf("lower-case bearer scheme: %d", r.StatusCode)
	}
}

// TestMCPGoClientOverHTTPAndDelete: the mark3labs/mcp-go v1.2 client with default options speaks
// 2026-07-28 over Streamable HTTP (server/discover, then stateless requests; never initialize):
// it lists, calls, gets a denied call as an error result with resultType, and answers an ask
// through input_required. Pinned to 2025-11-25 on the same URL it initializes a session. A
// DELETE with the session id ends that session.
func TestMCPGoClientOverHTTPAndDelete(t *testing.T) {
	s, url, store := erasService(t)
	token, err := store.Issue("mcp-go-client")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, era := range []string{"", "2025-11-25"} {
		log := &wireLog{}
		tr, err := transport.NewStreamableHTTP(url, transport.WithHTTPBasicClient(&http.Client{Transport: recordingTransport{token, log}}))
		if err != nil {
			t.Fatal(err)
		}
		c := mcpclient.NewClient(tr, mcpclient.WithElicitationHandler(acceptAll{}))
		if err := c.Start(ctx); err != nil {
			t.Fatal(err)
		}
		res, err := c.Initialize(ctx, mgo.InitializeRequest{Params: mgo.InitializeParams{ProtocolVersion: era, ClientInfo: mgo.Implementation{Name: "mcp-go", Version: "1.2.1"},
			Capabilities: mgo.ClientCapabilities{Elicitation: &mgo.ElicitationCapability{}}}})
		if err != nil {
			t.Fatalf("mcp-go %q: initialize: %v", era, err)
		}
		modern := era == ""
		if res.ServerInfo.Name != "switchboard" || strings.HasPrefix(res.ProtocolVersion, "2026") != modern {
			t.Errorf("mcp-go %q: negotiated %s", era, res.ProtocolVersion)
		}
		tools, err := c.ListTools(ctx, mgo.ListToolsRequest{})
		if err != nil || len(tools.Tools) == 0 {
			t.Fatalf("tools/list: %v", err)
		}
		r, err := c.CallTool(ctx, mgo.CallToolRequest{Params: mgo.CallToolParams{Name: "lang_detect", Arguments: map[string]any{"path": "main.go"}}})
		if err != nil || r.IsError {
			t.Fatalf("tools/call: %v %+v", err, r)
		}
		if txt, ok := r.Content[0].(mgo.TextContent); !ok || !strings.Contains(txt.Text, `"go"`) {
			t.Errorf("lang_detect over mcp-go: %+v", r.Content)
		}
		r, err = c.CallTool(ctx, mgo.CallToolRequest{Params: mgo.CallToolParams{Name: "file_delete", Arguments: map[string]any{"path": "a.txt"}}})
		if err != nil || !r.IsError {
			t.Fatalf("mcp-go %q: a denied call must be an error result: %v %+v", era, err, r)
		}
		r, err = c.CallTool(ctx, mgo.CallToolRequest{Params: mgo.CallToolParams{Name: "file_write", Arguments: map[string]any{"path": "m.txt", "content": "x"}}})
		if err != nil || r.IsError {
			t.Fatalf("mcp-go %q: file_write after the ask: %v %+v", era, err, r)
		}
		sent := strings.Join(log.sent(), " ")
		if modern && (strings.Contains(sent, "initialize") || !strings.Contains(log.received(), `"resultType":"input_required"`)) {
			t.Errorf("mcp-go 2026-07-28: sent %s; replies:\n%s", sent, log.received())
		}
		if !modern && !strings.HasPrefix(sent, "initialize") {
			t.Errorf("mcp-go 2025-11-25 sent %s", sent)
		}
		c.Close()
	}
	found := false
	for _, si := range s.Sessions().List() {
		found = found || (si.Transport == "http" && si.ClientName == "mcp-go" && si.Stateless && si.Identity == "mcp-go-client")
	}
	if !found {
		t.Errorf("mcp-go's stateless entry not in the registry: %+v", s.Sessions().List())
	}
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/mcp")

	// DELETE with a valid session id ends that session: it is gone from the registry and the id
	// is refused afterwards.
	sid := initHTTPSession(t, addr, "s3cret")
	hdr := map[string]string{"Authorization": "Bearer s3cret", "Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-06-18"}
	ping := `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	if r := httpDo(t, "POST", url, ping, hdr); r.StatusCode != http.StatusOK {
		t.Fatalf("ping in session: %d", r.StatusCode)
	}
	before := len(s.Sessions().List())
	if r := httpDo(t, "DELETE", url, "", hdr); r.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %d, want 204", r.StatusCode)
	}
	if r := httpDo(t, "POST", url, ping, hdr); r.StatusCode != http.StatusNotFound {
		t.Errorf("request after DELETE: %d, want 404", r.StatusCode)
	}
	testutil.Eventually(t, "the deleted session leaves the registry", func() bool { return len(s.Sessions().List()) < before })
	if r := httpDo(t, "DELETE", url, "", map[string]string{"Mcp-Session-Id": sid}); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("DELETE without the token: %d, want 401", r.StatusCode)
	}
}

// TestHTTPRequestIDsEchoedExactly: over Streamable HTTP too, ids go-sdk cannot carry come back
// exactly as sent.
func TestHTTPRequestIDsEchoedExactly(t *testing.T) {
	s := newTestService(t)
	addr := listen(t, s, TransportHTTP, TransportConfig{HTTPAddr: "127.0.0.1:0", HTTPToken: "s3cret"})
	sid := initHTTPSession(t, addr, "s3cret")
	for _, id := range []string{`1.5`, `1e400`, `12345678901234567890`, `7`, `"x"`} {
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"lang_detect","arguments":{"path":"a.go"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer s3cret")
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"id":`+id+`,`) || !strings.Contains(string(b), `"result"`) {
			t.Errorf("id %s over HTTP: %d %s", id, resp.StatusCode, b)
		}
	}
}

// TestTransportSetSecurity: tokens, TCP's require_token and HTTP's allowed origins change while
// TCP and HTTP run, as the Settings view changes them. Each transport reopens on the port it had;
// a TCP client that sent no token, and one with the old token, are refused from then on, the new
// token is let in; HTTP refuses the old bearer token and lets the new origin in. A change a
// transport cannot run with (require_token without a token) is refused and everything stays as
// it was, still running.
func TestTransportSetSecurity(t *testing.T) {
	s := newTestService(t)
	tr := s.NewTransports(TransportConfig{TCPAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0", TCPToken: "old", HTTPToken: "old"})
	t.Cleanup(func() { tr.StopAll(context.Background()) })
	for _, n := range []string{TransportTCP, TransportHTTP} {
		if err := tr.Start(n); err != nil {
			t.Fatal(err)
		}
	}
	tcpAddr, httpAddr := tr.Addr(TransportTCP), tr.Addr(TransportHTTP)
	auth := func(tok string) string {
		return `{"jsonrpc":"2.0","method":"switchboard/auth","params":{"token":"` + tok + `"}}`
	}
	status := func(token, origin string) int {
		hdr := map[string]string{"Authorization": "Bearer " + token}
		if origin != "" {
			hdr["Origin"] = origin
		}
		return httpDo(t, "POST", "http://"+httpAddr+"/mcp", initBody, hdr).StatusCode
	}
	const inspector = "http://localhost:6274"
	if _, err := tokenClient(t, tcpAddr, ""); err != nil {
		t.Fatalf("loopback TCP without require_token refused a client without a token: %v", err)
	}
	if got := status("old", inspector); got != http.StatusForbidden {
		t.Fatalf("origin %s before it was allowed: HTTP %d, want 403", inspector, got)
	}
	// A session open before the change.
	before := dialClient(t, "tcp", tcpAddr)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	next := TransportSecurity{TCPToken: "new", TCPRequireToken: true, HTTPToken: "new", HTTPAllowedOrigins: []string{inspector}}
	if err := tr.SetSecurity(ctx, next); err != nil {
		t.Fatal(err)
	}
	if tr.Addr(TransportTCP) != tcpAddr || tr.Addr(TransportHTTP) != httpAddr {
		t.Fatalf("reopened on %s and %s, want %s and %s", tr.Addr(TransportTCP), tr.Addr(TransportHTTP), tcpAddr, httpAddr)
	}
	if err := before.Ping(ctx, nil); err == nil {
		t.Error("a TCP session let in without a token outlived require_token")
	}
	for name, first := range map[string]string{"no token": "", "old token": auth("old")} {
		if cs, err := tokenClient(t, tcpAddr, first); err == nil {
			if res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "file_exists", Arguments: map[string]any{"path": "."}}); err == nil && !res.IsError {
				t.Errorf("TCP with %s was served after require_token", name)
			}
		}
	}
	cs, err := tokenClient(t, tcpAddr, auth("new"))
	if err != nil {
		t.Fatalf("TCP with the new token: %v", err)
	}
	var out tools.FileExistsOutput
	mustCall(t, cs, "file_exists", map[string]any{"path": "."}, &out)
	if got := status("old", ""); got != http.StatusUnauthorized {
		t.Errorf("HTTP with the old token: %d, want 401", got)
	}
	if got := status("new", inspector); got != http.StatusOK {
		t.Errorf("HTTP with the new token from %s: %d, want 200", inspector, got)
	}
	if got := tr.Security(); got.TCPToken != "new" || !got.TCPRequireToken || got.HTTPToken != "new" || len(got.HTTPAllowedOrigins) != 1 {
		t.Errorf("Security() = %+v", got)
	}

	// require_token with no token: TCP cannot open; refused, nothing changes.
	if err := tr.SetSecurity(ctx, TransportSecurity{TCPRequireToken: true, HTTPToken: "other"}); err == nil || !strings.Contains(err.Error(), "token") {
		t.Fatalf("require_token without a token: err = %v", err)
	}
	if got := tr.Security(); got.TCPToken != "new" || got.HTTPToken != "new" {
		t.Fatalf("after a refused change Security() = %+v, want the previous settings", got)
	}
	if tr.Addr(TransportTCP) != tcpAddr {
		t.Fatalf("after a refused change TCP runs on %q, want %s", tr.Addr(TransportTCP), tcpAddr)
	}
	if _, err := tokenClient(t, tcpAddr, auth("new")); err != nil {
		t.Fatalf("after a refused change the new token no longer works: %v", err)
	}
	if got := status("new", ""); got != http.StatusOK {
		t.Errorf("after a refused change HTTP with the token: %d", got)
	}
}

// acceptAll is an mcp-go elicitation handler that accepts every question.
type acceptAll struct{}

func (acceptAll) Elicit(context.Context, mgo.ElicitationRequest) (*mgo.ElicitationResult, error) {
	return &mgo.ElicitationResult{ElicitationResponse: mgo.ElicitationResponse{Action: mgo.ElicitationResponseActionAccept, Content: map[string]any{}}}, nil
}
