package dashboard

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/mcp"
	mcptransport "github.com/switchboard-hub/switchboard/mcp/transport"
)

// TestDashboardSecurityHeadersAndNoListing: every dashboard response carries the browser policy,
// directories without an index are not listed, and a stranger's slow body is cut at once.
func TestDashboardSecurityHeadersAndNoListing(t *testing.T) {
	cfg := config.Default()
	cfg.Workspace = t.TempDir()
	cfg.DataDir = t.TempDir()
	cfg.TCP.Addr = "127.0.0.1:0"
	st, err := app.BuildStack(cfg, "test", app.StackOptions{WithHub: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close(context.Background())
	if err := st.Transports.Start(mcp.TransportWS); err != nil {
		t.Fatal(err)
	}
	d := NewServer(app.NewController(st, "test"), "dash-token")
	d.assets = fstest.MapFS{
		"index.html":    {Data: []byte("<!doctype html><title>x</title>")},
		"assets/app.js": {Data: []byte("console.log(1)")},
		"assets/sub/a":  {Data: []byte("a")},
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := mcptransport.NewHTTPServer(d.Handler())
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
