//go:build linux

package clients_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/app/apptest"
	"github.com/switchboard-hub/switchboard/app/dashboard"
	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/internal/procgroup"
	"github.com/switchboard-hub/switchboard/internal/testutil"
	"github.com/switchboard-hub/switchboard/internal/webview"
	"github.com/switchboard-hub/switchboard/mcp"
)

// claudeCodeMetadataURL is the Client ID Metadata Document Claude Code names itself by (its
// client_id) when an authorization server says it supports them.
const claudeCodeMetadataURL = "https://claude.ai/oauth/claude-code-client-metadata"

// claudeCodeMetadata is that document as Anthropic publishes it (quoted in anthropics/claude-code
// #37767, #41011 and #64705): loopback redirect URIs without a port, while Claude Code redirects
// to an ephemeral port, so the hub must match loopback redirects port-free (RFC 8252 §7.3).
const claudeCodeMetadata = `{
  "client_id": "https://claude.ai/oauth/claude-code-client-metadata",
  "client_name": "Claude Code",
  "client_uri": "https://claude.ai",
  "redirect_uris": ["http://localhost/callback", "http://127.0.0.1/callback"],
  "grant_types": ["authorization_code", "refresh_token"],
  "response_types": ["code"],
  "token_endpoint_auth_method": "none"
}`

// publishedDocuments serves copies of documents published on the internet, which this machine
// cannot reach, to the hub's metadata fetcher; anything else fails as the closed network does.
type publishedDocuments struct {
	docs    map[string]string
	fetched atomic.Int32
}

func (p *publishedDocuments) RoundTrip(r *http.Request) (*http.Response, error) {
	doc, ok := p.docs[r.URL.String()]
	if !ok || r.Method != http.MethodGet {
		return nil, fmt.Errorf("%s %s: not a published document this test serves (the network is closed)", r.Method, r.URL)
	}
	p.fetched.Add(1)
	return &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(doc)),
		ContentLength: int64(len(doc)), Request: r}, nil
}

// TestClaudeCodeOAuthToTheHub: Claude Code's own HTTP transport as an inbound OAuth client of a
// hub with [http] auth = "oauth", as a user sets it up: `claude mcp add --transport http`, then
// `claude mcp login` (in a terminal: it refuses to run without one, so it runs under script(1)'s
// pseudo-terminal). Claude Code gets the hub's 401, discovers the protected resource and the
// hub's authorization server, names itself by its Client ID Metadata Document (which the hub
// fetches: here from a copy, the network being closed) and opens the authorization URL through
// $BROWSER, which Debian's headless Chromium loads. The user allows it on the hub's dashboard
// (the approvals, files toolset only); Chromium follows the hub to Claude Code's loopback
// callback (an ephemeral port the document does not name), Claude Code exchanges the code and
// keeps the tokens. Then `claude mcp list` says connected, and `claude -p` against the scripted
// model writes and reads a file through the hub with no token in its configuration. Settings
// lists the grant; revoking it there cuts Claude Code off at its next request.
//
// With [http] client_metadata_documents = false (a hub that cannot reach claude.ai) the hub's
// metadata offers no documents, and Claude Code registers (RFC 7591) instead; the rest is the same.
func TestClaudeCodeOAuthToTheHub(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping Claude Code and Chromium")
	}
	t.Run("metadata document", func(t *testing.T) { claudeCodeSignsIn(t, true) })
	t.Run("registration", func(t *testing.T) { claudeCodeSignsIn(t, false) })
}

func claudeCodeSignsIn(t *testing.T, documents bool) {
	cc := claudeCode(t)
	browser := testutil.RequireBrowser(t, webview.FindBrowser)
	scriptBin := need(t, "/usr/bin/script", "script(1) (util-linux, for a pseudo-terminal)")

	// The hub: OAuth on its loopback HTTP endpoint, the dashboard open (so a new client is put
	// to the user there), its metadata fetcher given the published document — or, with
	// documents off, nothing at all: it must not be asked.
	docs := &publishedDocuments{docs: map[string]string{claudeCodeMetadataURL: claudeCodeMetadata}}
	st := apptest.StackWith(t, "", app.StackOptions{ClientMetadataHTTP: &http.Client{Transport: docs}},
		func(c *config.Config) {
			c.HTTP.Auth = config.HTTPAuthOAuth
			c.HTTP.ClientMetadataDocuments = &documents
		})
	if err := st.Transports.Start(mcp.TransportHTTP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Approvals.AddPresence(func() bool { return true }))
	dash := httptest.NewServer(dashboard.NewServer(app.NewController(st, "test"), "dash-token").Handler())
	t.Cleanup(dash.Close)
	hubURL := "http://" + st.Transports.Addr(mcp.TransportHTTP) + "/mcp"
	api := func(method, route string, body any) map[string]any {
		t.Helper()
		code, out := apptest.DashAPI(t, dash.URL, "dash-token", method, route, body)
		if code != http.StatusOK {
			t.Fatalf("%s %s: %d %v", method, route, code, out)
		}
		return out
	}

	// Claude Code: its own HOME; the hub added as a user does, with no token.
	r := newRun(t, "project")
	r.noEntry = true
	nonce := "nonce-" + randomHex(t, 8)
	r.model = newModelStub(t, nonce)
	argv, env := cc.prepare(t, r)
	bin := argv[0]
	claude := func(args ...string) string {
		t.Helper()
		out, _, err := runCLI(t, r.workspace, append([]string{bin}, args...), env)
		if err != nil {
			t.Fatalf("claude %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	claude("mcp", "add", "--transport", "http", "--scope", "user", serverName, hubURL)
	if out := claude("mcp", "list"); !regexp.MustCompile(serverName + `: .*Needs authentication`).MatchString(out) {
		t.Fatalf("before signing in, claude mcp list says:\n%s", out)
	}

	// `claude mcp login` in a pseudo-terminal; $BROWSER hands the URL to this test.
	opened := filepath.Join(r.tmp, "opened-url")
	browserScript := filepath.Join(r.tmp, "browser.sh")
	writeFile(t, browserScript, fmt.Sprintf("#!/bin/sh\nprintf '%%s\\n' \"$1\" > '%s.part' && mv '%s.part' '%s'\n", opened, opened, opened))
	if err := os.Chmod(browserScript, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	login := exec.CommandContext(ctx, scriptBin, "-qfec", bin+" mcp login "+serverName, "/dev/null")
	login.Dir = r.workspace
	login.Env = append(append([]string(nil), env...), "BROWSER="+browserScript, "TERM=xterm")
	login.SysProcAttr = procgroup.GroupAttr()
	login.Cancel = func() error { return procgroup.Signal(login.Process.Pid, syscall.SIGKILL) }
	login.WaitDelay = 5 * time.Second
	stdin, err := login.StdinPipe() // kept open: an EOF would end the prompt for a pasted URL
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	var loginOut testutil.SyncBuffer
	login.Stdout, login.Stderr = &loginOut, &loginOut
	if err := login.Start(); err != nil {
		t.Fatal(err)
	}
	loginDone := make(chan error, 1)
	go func() { loginDone <- login.Wait() }()

	var authURL string
	if !testutil.Poll(60*time.Second, func() bool {
		b, err := os.ReadFile(opened)
		authURL = strings.TrimSpace(string(b))
		return err == nil && authURL != ""
	}) {
		t.Fatalf("claude mcp login opened no URL:\n%s", loginOut.String())
	}
	u, err := url.Parse(authURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	redirect, _ := url.Parse(q.Get("redirect_uri"))
	if documents != (q.Get("client_id") == claudeCodeMetadataURL) {
		t.Fatalf("client_id %q with metadata documents %v: %s", q.Get("client_id"), documents, authURL)
	}
	if u.Host != st.Transports.Addr(mcp.TransportHTTP) || q.Get("client_id") == "" ||
		q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("resource") != hubURL ||
		redirect == nil || redirect.Scheme != "http" || redirect.Port() == "" {
		t.Fatalf("the authorization URL Claude Code opened: %s", authURL)
	}

	// The browser step: headless Chromium loads the URL and waits on the hub's page; the user
	// allows the client on the dashboard; the page goes on to Claude Code's callback.
	bctx := testutil.HeadlessChromium(t, browser)
	landed := make(chan error, 1)
	go func() {
		nctx, ncancel := context.WithTimeout(bctx, 90*time.Second)
		defer ncancel()
		if err := chromedp.Do(nctx, chromedp.Navigate(authURL)); err != nil {
			landed <- err
			return
		}
		var at string
		for nctx.Err() == nil {
			if loc, err := chromedp.Run(nctx, chromedp.Location()); err == nil {
				at = loc
			}
			if strings.HasPrefix(at, redirect.Scheme+"://"+redirect.Host+redirect.Path) {
				landed <- nil
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
		landed <- fmt.Errorf("Chromium never reached %s (at %s)", redirect, at)
	}()
	var pending map[string]any
	if !testutil.Poll(60*time.Second, func() bool {
		for _, a := range api("GET", "/api/approvals", nil)["approvals"].([]any) {
			if m := a.(map[string]any); m["kind"] == "client" {
				pending = m
				return true
			}
		}
		return false
	}) {
		t.Fatalf("Claude Code's authorization never reached the approvals:\n%s", loginOut.String())
	}
	// The name the user sees: the document's, or the one Claude Code registers under (it adds
	// the server's name).
	wantName := "Claude Code"
	if !documents {
		wantName = "Claude Code (" + serverName + ")"
	}
	if pending["client"] != wantName || pending["device"] != "127.0.0.1" {
		t.Errorf("the approval shows client %v on %v, want %s on 127.0.0.1: %v", pending["client"], pending["device"], wantName, pending)
	}
	api("POST", "/api/approvals/"+url.PathEscape(pending["id"].(string)), map[string]any{"decision": "allow", "scopes": []string{"files"}})
	if err := <-landed; err != nil {
		t.Fatalf("browser: %v\nclaude mcp login:\n%s", err, loginOut.String())
	}
	select {
	case err := <-loginDone:
		if err != nil {
			t.Fatalf("claude mcp login: %v\n%s", err, loginOut.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("claude mcp login did not finish after the callback:\n%s", loginOut.String())
	}
	t.Logf("claude mcp login:\n%s", loginOut.String())
	if fetched := docs.fetched.Load(); documents && fetched == 0 {
		t.Error("the hub never fetched Claude Code's client metadata document")
	} else if !documents && fetched != 0 {
		t.Errorf("with metadata documents off the hub fetched one %d times", fetched)
	}
	if out := claude("mcp", "list"); !regexp.MustCompile(serverName + `: .*Connected`).MatchString(out) {
		t.Fatalf("after signing in, claude mcp list says:\n%s", out)
	}

	// The agent at work, with the tokens Claude Code keeps: no token in any configuration.
	out, _, err := runCLI(t, r.workspace, argv, env)
	if err != nil {
		t.Fatalf("claude -p: %v\n%s", err, out)
	}
	hubWorkspace := st.Config.Workspace
	checkScript(t, r.model, nonce, hubWorkspace, func(format string, a ...any) {
		t.Helper()
		t.Errorf(format+"\n%s\n%s", append(a, r.model.report(), tail(out, 4000))...)
	})
	grants := api("GET", "/api/grants", nil)["grants"].([]any)
	if len(grants) != 1 {
		t.Fatalf("grants: %v", grants)
	}
	g := grants[0].(map[string]any)
	if g["clientName"] != wantName || fmt.Sprint(g["scopes"]) != "[files]" || g["lastUsed"] == nil {
		t.Errorf("Settings lists the grant as %v", g)
	}
	for _, f := range []string{filepath.Join(r.home, ".claude", ".claude.json"), filepath.Join(r.workspace, ".mcp.json")} {
		if b, err := os.ReadFile(f); err == nil && strings.Contains(string(b), "Bearer") {
			t.Errorf("%s carries a bearer token: the sign-in should have made that unnecessary", f)
		}
	}

	// Revoked on the hub: Claude Code is cut off at its next request.
	api("POST", "/api/grants/"+url.PathEscape(fmt.Sprint(g["id"]))+"/revoke", nil)
	if out := claude("mcp", "list"); regexp.MustCompile(serverName + `: .*Connected`).MatchString(out) {
		t.Fatalf("after the grant was revoked, claude mcp list still says:\n%s", out)
	}
}
