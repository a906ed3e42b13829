package app

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"
	"time"

	mcpclient "github.com/mark3labs/mcp-go/client"
	mgo "github.com/mark3labs/mcp-go/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/internal/testutil"
	"github.com/switchboard-hub/switchboard/mcp"
)

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// sdkCall connects a go-sdk client over conn and calls lang_detect.
func sdkCall(conn net.Conn) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "probe", Version: "1"}, nil).Connect(ctx, &sdk.IOTransport{Reader: conn, Writer: conn}, nil)
	if err != nil {
		return err
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "lang_detect", Arguments: map[string]any{"path": "a.go"}})
	if err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("tool error: %+v", res.Content)
	}
	return nil
}

// TestListenersSurviveDescriptorExhaustion runs the real binary under `ulimit -n 64` and opens
// far more connections than it has descriptors. Accept fails with EMFILE meanwhile; once the
// attackers leave, both the Unix socket and TCP serve again (before, Serve stopped on the first
// accept error and removed the socket for good).
func TestListenersSurviveDescriptorExhaustion(t *testing.T) {
	bin := binary(t)
	sock := filepath.Join(shortDir(t), "hub.sock")
	addr := freeAddr(t)
	cmd := exec.Command("sh", "-c", `ulimit -n 64 && exec "$0" "$@"`, bin, "serve", "--no-hub", "--unix", sock, "--tcp", addr, "--workspace", t.TempDir())
	cmd.Env = testEnv(t)
	stderr, _ := cmd.StderrPipe()
	w := &lineWatcher{}
	go w.run(stderr)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	w.wait(t, regexp.MustCompile(`tcp listening on`))

	var attackers []net.Conn
	for i := 0; i < 150; i++ {
		for _, target := range [][2]string{{"unix", sock}, {"tcp", addr}} {
			if c, err := net.DialTimeout(target[0], target[1], time.Second); err == nil {
				attackers = append(attackers, c)
			}
		}
	}
	w.wait(t, regexp.MustCompile(`accept failed; retrying.*too many open files`))
	for _, c := range attackers {
		c.Close()
	}
	for _, target := range [][2]string{{"unix", sock}, {"tcp", addr}} {
		var err error
		if !testutil.Poll(20*time.Second, func() bool {
			conn, derr := net.DialTimeout(target[0], target[1], time.Second)
			if err = derr; err == nil {
				err = sdkCall(conn)
				conn.Close()
			}
			return err == nil
		}) {
			t.Fatalf("%s does not serve after the attackers left: %v\n%s", target[0], err, strings.Join(w.snapshot(), "\n"))
		}
	}
	if _, err := os.Lstat(sock); err != nil {
		t.Errorf("socket file gone: %v", err)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
}

// TestMCPGoClientOverStdio drives `switchboard serve --stdio` with the mark3labs/mcp-go stdio
// client and its default options (it probes server/discover first).
func TestMCPGoClientOverStdio(t *testing.T) {
	bin := binary(t)
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "hello.txt"), []byte("hi from mcp-go"), 0o644)
	c, err := mcpclient.NewStdioMCPClient(bin, testEnv(t), "serve", "--stdio", "--no-hub", "--workspace", ws)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := c.Initialize(ctx, mgo.InitializeRequest{Params: mgo.InitializeParams{ClientInfo: mgo.Implementation{Name: "mcp-go", Version: "1.2.1"}}})
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if res.ServerInfo.Name != "switchboard" && res.ProtocolVersion == "" {
		t.Errorf("initialize: %+v", res)
	}
	r, err := c.CallTool(ctx, mgo.CallToolRequest{Params: mgo.CallToolParams{Name: "file_read", Arguments: map[string]any{"path": "hello.txt"}}})
	if err != nil || r.IsError {
		t.Fatalf("file_read over stdio: %v %+v", err, r)
	}
	if txt, ok := r.Content[0].(mgo.TextContent); !ok || !strings.Contains(txt.Text, "hi from mcp-go") {
		t.Errorf("file_read: %+v", r.Content)
	}
}

// TestConnectTCPSendsToken: `switchboard connect --tcp` presents the stored client token to a hub
// whose TCP transport requires one, so any stdio client gets through; without it the hub refuses.
func TestConnectTCPSendsToken(t *testing.T) {
	bin := binary(t)
	env := testEnv(t)
	cfgFile := filepath.Join(t.TempDir(), "config.toml")
	os.WriteFile(cfgFile, []byte("[tcp]\nrequire_token = true\n"), 0o600)
	addr := freeAddr(t)
	serve := exec.Command(bin, "--config", cfgFile, "serve", "--no-hub", "--tcp", addr, "--workspace", t.TempDir())
	serve.Env = env
	stderr, _ := serve.StderrPipe()
	w := &lineWatcher{}
	go w.run(stderr)
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	defer serve.Process.Kill()
	w.wait(t, regexp.MustCompile(`tcp listening on`))

	// Straight to the port, no token: refused.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	if err := sdkCall(c); err == nil {
		t.Error("a client without the token was served")
	}
	c.Close()

	// Through connect: served.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn := exec.CommandContext(ctx, bin, "--config", cfgFile, "connect", "--tcp", addr)
	conn.Env = env
	in, _ := conn.StdinPipe()
	out, _ := conn.StdoutPipe()
	if err := conn.Start(); err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "via-connect", Version: "1"}, nil).Connect(ctx, &sdk.IOTransport{Reader: out, Writer: in}, nil)
	if err != nil {
		t.Fatalf("through connect --tcp: %v", err)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "lang_detect", Arguments: map[string]any{"path": "a.ts"}})
	if err != nil || res.IsError {
		t.Fatalf("call through connect --tcp: %v %+v", err, res)
	}
	cs.Close()
	conn.Wait()
}

// TestDashboardSecurityHeadersAndNoListing: every dashboard response carries the browser policy,
// directories without an index are not listed, and a stranger's slow body is cut at once.
func TestDashboardSecurityHeadersAndNoListing(t *testing.T) {
	cfg := config.Default()
	cfg.Workspace = t.TempDir()
	cfg.DataDir = t.TempDir()
	cfg.TCP.Addr = "127.0.0.1:0"
	st, err := BuildStack(cfg, "test", StackOptions{WithHub: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close(context.Background())
	if err := st.Transports.Start(mcp.TransportWS); err != nil {
		t.Fatal(err)
	}
	d := newDashboardServer(NewController(st, "test"), "dash-token")
	d.assets = fstest.MapFS{
		"index.html":    {Data: []byte("<!doctype html><title>x</title>")},
		"assets/app.js": {Data: []byte("console.log(1)")},
		"assets/sub/a":  {Data: []byte("a")},
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := mcp.NewHTTPServer(d.Handler())
	go srv.Serve(ln)
	defer srv.Close()
	base := "http://" + ln.Addr().String()
	get := func(path string) *http.Response {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	for _, p := range []string{"/", "/assets/app.js", "/api/transports", "/assets/"} {
		h := get(p).Header
		csp := h.Get("Content-Security-Policy")
		if !strings.Contains(csp, "default-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") ||
			!strings.Contains(csp, "connect-src 'self' ws://"+ln.Addr().String()) || !strings.Contains(csp, st.WSHub.URL()) || !strings.Contains(csp, "script-src 'self';") || strings.Contains(csp, "unsafe-eval") {
			t.Errorf("%s: CSP %q", p, csp)
		}
		if h.Get("X-Frame-Options") != "DENY" || h.Get("Referrer-Policy") != "no-referrer" || h.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: headers %v", p, h)
		}
	}
	if r := get("/assets/"); r.StatusCode != http.StatusNotFound {
		t.Errorf("directory listing of /assets/: %d, want 404", r.StatusCode)
	}
	if r := get("/assets/sub"); r.StatusCode != http.StatusNotFound && r.StatusCode != http.StatusMovedPermanently {
		t.Errorf("/assets/sub: %d", r.StatusCode)
	}
	if r := get("/assets/app.js"); r.StatusCode != http.StatusOK {
		t.Errorf("/assets/app.js: %d", r.StatusCode)
	}
	if r := get("/"); r.StatusCode != http.StatusOK {
		t.Errorf("/: %d", r.StatusCode)
	}

	// A stranger trickling a body to the API: 401 and the connection closed at once.
	c, _ := net.Dial("tcp", ln.Addr().String())
	defer c.Close()
	io.WriteString(c, "POST /api/processes HTTP/1.1\r\nHost: "+ln.Addr().String()+"\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{")
	c.SetReadDeadline(time.Now().Add(3 * time.Second))
	start := time.Now()
	br := bufio.NewReader(c)
	status, _ := br.ReadString('\n')
	_, err = io.ReadAll(br)
	if !strings.Contains(status, "401") || err != nil || time.Since(start) > 2*time.Second {
		t.Errorf("slow unauthenticated body: %q, then %v after %v; want 401 and a close", status, err, time.Since(start))
	}
	// The client snippets include TCP through `connect --tcp` (which sends the token handshake);
	// the API takes the dashboard token with any case of the Bearer scheme.
	if err := st.Transports.Start(mcp.TransportTCP); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, base+"/api/clientconfig", nil)
	req.Header.Set("Authorization", "bearer dash-token")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"connect","--tcp","`+st.Transports.Addr(mcp.TransportTCP)+`"`) {
		t.Errorf("client config: %d %s", resp.StatusCode, body)
	}
	if srv.ReadTimeout == 0 || srv.IdleTimeout == 0 || srv.MaxHeaderBytes == 0 || srv.ReadHeaderTimeout == 0 {
		t.Errorf("dashboard server timeouts: %+v", srv)
	}
}
