//go:build unix

package upstream

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/oauthclient"
	"github.com/switchboard-hub/switchboard/internal/oauthclient/oauthtest"
	"github.com/switchboard-hub/switchboard/internal/procgroup"
	"github.com/switchboard-hub/switchboard/internal/testutil"
	"github.com/switchboard-hub/switchboard/internal/webview"

	"github.com/chromedp/chromedp"
)

func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startTSOAuthServer runs the TypeScript SDK's example server in OAuth mode (pinned in
// test/node) with its own demo authorization server, and returns its MCP endpoint. strict
// makes it accept only tokens issued for itself (RFC 8707).
func startTSOAuthServer(t *testing.T, strict bool) string {
	t.Helper()
	dir := testutil.NodeModule(t, "@modelcontextprotocol/sdk")
	mcpPort, authPort := freePort(t), freePort(t)
	args := []string{filepath.Join(dir, "dist", "esm", "examples", "server", "simpleStreamableHttp.js"), "--oauth"}
	if strict {
		args = append(args, "--oauth-strict")
	}
	cmd := exec.Command("node", args...)
	cmd.Env = append(cmd.Environ(), "MCP_PORT="+strconv.Itoa(mcpPort), "MCP_AUTH_PORT="+strconv.Itoa(authPort))
	cmd.SysProcAttr = procgroup.GroupAttr()
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = procgroup.Signal(cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	ready := make(chan struct{})
	var lines testutil.SyncBuffer
	go func() {
		sc := bufio.NewScanner(out)
		n := 0
		for sc.Scan() {
			lines.Write([]byte(sc.Text() + "\n"))
			if strings.Contains(sc.Text(), "listening on port") {
				if n++; n == 2 { // the MCP server and its authorization server
					close(ready)
				}
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		t.Fatalf("the example server did not start: %s", lines.String())
	}
	// The example names itself localhost in its metadata (resource and issuer).
	return "http://localhost:" + strconv.Itoa(mcpPort) + "/mcp"
}

// The real party: the hub signs in to the TypeScript SDK's example server in OAuth mode, with
// its demo authorization server (discovery, dynamic registration, PKCE, the resource indicator
// checked by --oauth-strict), its browser step an HTTP client following the redirects (the
// demo AS consents at once), then calls its tools.
func TestOAuthTypeScriptExampleServer(t *testing.T) {
	url := startTSOAuthServer(t, true)
	store := &oauthclient.MemStore{}
	m := newTestManager(t, Options{OAuthStore: store})
	if err := approveSync(m, []Spec{{Name: "ts", URL: url}}); err != nil {
		t.Fatal(err)
	}
	st := waitState(t, m, "ts", StateSignin)
	if !strings.Contains(st.LastError, "switchboard servers login ts") {
		t.Errorf("last error %q", st.LastError)
	}
	if err := m.Login(t.Context(), "ts", oauthtest.Browser(t)); err != nil {
		t.Fatal(err)
	}
	waitState(t, m, "ts", StateRunning)
	if _, err := m.Approve(t.Context(), "ts"); err != nil {
		t.Fatal(err)
	}
	res, err := m.CallTool(t.Context(), "ts", "greet", json.RawMessage(`{"name":"hub"}`), nil)
	if err != nil || !strings.Contains(text(res), "hub") {
		t.Fatalf("greet: %v %v", text(res), err)
	}
	g, err := store.Load(t.Context(), "ts")
	if err != nil || g.Resource != url || !strings.HasPrefix(g.Issuer, "http://localhost:") {
		t.Fatalf("grant: %+v %v", g, err)
	}
	// Signed out, the server waits for the user again (the demo AS has no revocation endpoint:
	// the grant is forgotten by the hub).
	if err := m.Logout(t.Context(), "ts"); err != nil {
		t.Fatal(err)
	}
	waitState(t, m, "ts", StateSignin)
	if _, err := m.CallTool(t.Context(), "ts", "greet", json.RawMessage(`{"name":"hub"}`), nil); err == nil || !strings.Contains(err.Error(), "needs you to sign in") {
		t.Errorf("after logout: %v", err)
	}
}

// The same sign-in with the browser step in Debian's headless Chromium (driven by chromedp, a
// fresh profile): the page the hub hands out is loaded in a real browser, which follows the
// demo AS's redirect to the hub's loopback listener and shows the hub's answer.
func TestOAuthTypeScriptExampleServerInChromium(t *testing.T) {
	browser := testutil.RequireBrowser(t, webview.FindBrowser)
	url := startTSOAuthServer(t, true)
	m := newTestManager(t, Options{OAuthStore: &oauthclient.MemStore{}})
	if err := approveSync(m, []Spec{{Name: "ts", URL: url}}); err != nil {
		t.Fatal(err)
	}
	waitState(t, m, "ts", StateSignin)
	bctx := testutil.HeadlessChromium(t, browser)
	var page string
	shown := make(chan error, 1)
	open := func(u string) error {
		go func() {
			ctx, cancel := context.WithTimeout(bctx, 30*time.Second)
			defer cancel()
			err := chromedp.Do(ctx, chromedp.Navigate(u), chromedp.WaitVisible(chromedp.CSS("p")))
			if err == nil {
				page, err = chromedp.Run(ctx, chromedp.Text(chromedp.CSS("p")))
			}
			shown <- err
		}()
		return nil
	}
	if err := m.Login(t.Context(), "ts", open); err != nil {
		t.Fatal(err)
	}
	if err := <-shown; err != nil {
		t.Fatalf("chromium: %v", err)
	}
	if !strings.Contains(page, "Switchboard is signed in to ts") {
		t.Errorf("the browser shows %q", page)
	}
	waitState(t, m, "ts", StateRunning)
	if _, err := m.Approve(t.Context(), "ts"); err != nil {
		t.Fatal(err)
	}
	if res, err := m.CallTool(t.Context(), "ts", "greet", json.RawMessage(`{"name":"chromium"}`), nil); err != nil || !strings.Contains(text(res), "chromium") {
		t.Fatalf("greet: %v %v", text(res), err)
	}
}
