//go:build linux

package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/app/apptest"
	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/internal/hubtls"
	"github.com/switchboard-hub/switchboard/internal/oauthclient/keyring"
	"github.com/switchboard-hub/switchboard/internal/policy"
	"github.com/switchboard-hub/switchboard/internal/secrets/secretstest"
	"github.com/switchboard-hub/switchboard/internal/testutil"
	"github.com/switchboard-hub/switchboard/internal/upstream"
	"github.com/switchboard-hub/switchboard/mcp"
)

// remoteHub is hub B, "the workstation": [http] auth = "oauth" listening beyond loopback, so it
// serves TLS with its own self-signed certificate; its user is at its dashboard (approvals wait
// for an answer); a file in its workspace tells its tools from anyone else's; its policy denies
// file_delete.
type remoteHub struct {
	*oauthHub
	pin     string // its certificate's fingerprint as tls_fingerprint takes it
	cfgPath string
}

func newRemoteHub(t *testing.T) *remoteHub {
	t.Helper()
	cfgPath := filepath.Join(t.TempDir(), "config.toml")
	rules := []policy.RuleSpec{{Tool: "file_delete", Action: "deny"}}
	if err := os.WriteFile(cfgPath, []byte("[[policy.rules]]\ntool = \"file_delete\"\naction = \"deny\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	st := apptest.Stack(t, "", func(c *config.Config) {
		c.Path = cfgPath
		c.HTTP.Addr = "0.0.0.0:0"
		c.HTTP.Auth = config.HTTPAuthOAuth
		c.Policy = policy.Config{Rules: rules}
	})
	if err := st.Transports.Start(mcp.TransportHTTP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Approvals.AddPresence(func() bool { return true })) // the user is at B's dashboard
	ctl := app.NewController(st, "test")
	dash := httptest.NewServer(NewServer(ctl, "dash-token").Handler())
	t.Cleanup(dash.Close)
	if err := os.WriteFile(filepath.Join(st.Config.Workspace, "on-b.txt"), []byte("written on hub B"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(st.Transports.Addr(mcp.TransportHTTP))
	g := ctl.Grants()
	if !g.TLS || g.Fingerprint == "" {
		t.Fatalf("hub B does not serve TLS with its own certificate: %+v", g)
	}
	return &remoteHub{
		oauthHub: &oauthHub{st: st, mcpURL: "https://127.0.0.1:" + port + "/mcp", dashURL: dash.URL},
		pin:      hubtls.PinPrefix + g.Fingerprint, cfgPath: cfgPath,
	}
}

// localHub is hub A, "the laptop": B as its server "b" (url and the pin), the keyring a real
// gnome-keyring on a private bus; policyText is its config file's policy.
type localHub struct {
	st      *app.Stack
	dashURL string
	cfgPath string
	answers strings.Builder
}

func newLocalHub(t *testing.T, spec upstream.Spec, rules []policy.RuleSpec, policyText string) *localHub {
	t.Helper()
	cfgPath := filepath.Join(t.TempDir(), "config.toml")
	data, err := upstream.AddServer([]byte(policyText), spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfgPath, data, 0o600); err != nil {
		t.Fatal(err)
	}
	st := apptest.Stack(t, "", func(c *config.Config) {
		c.Path = cfgPath
		c.Env = config.ReadEnv() // the test's keyring bus
		c.Servers = []upstream.Spec{spec}
		c.Policy = policy.Config{Rules: rules}
	})
	dash := httptest.NewServer(NewServer(app.NewController(st, "test"), "dash-token").Handler())
	t.Cleanup(dash.Close)
	return &localHub{st: st, dashURL: dash.URL, cfgPath: cfgPath}
}

func (h *localHub) api(t *testing.T, method, route string, body any) map[string]any {
	t.Helper()
	code, out := apptest.DashAPI(t, h.dashURL, "dash-token", method, route, body)
	b, _ := json.Marshal(out)
	h.answers.Write(b)
	if code != 200 {
		t.Fatalf("hub A: %s %s: %d %s", method, route, code, b)
	}
	return out
}

func (h *localHub) row(t *testing.T) map[string]any {
	t.Helper()
	return h.api(t, "GET", "/api/servers", nil)["servers"].([]any)[0].(map[string]any)
}

func (h *localHub) waitState(t *testing.T, want string) map[string]any {
	t.Helper()
	var row map[string]any
	if !testutil.Poll(30*time.Second, func() bool { row = h.row(t); return row["state"] == want }) {
		t.Fatalf("hub A's server b: state %v, want %s: %v", row["state"], want, row["last_error"])
	}
	return row
}

// pinnedBrowser is the user's browser on A's machine, which trusts B's certificate (the user
// checked its fingerprint): it follows B's authorization page, which waits (meta refresh) until
// the user answers on B, then the redirect to A's loopback listener, and returns that page.
func pinnedBrowser(ctx context.Context, authURL, pin string) (string, error) {
	u, err := url.Parse(authURL)
	if err != nil {
		return "", err
	}
	p, err := hubtls.ParsePin(pin)
	if err != nil {
		return "", err
	}
	c := &http.Client{
		Transport:     hubtls.PinnedTransport(http.DefaultTransport.(*http.Transport), u.Host, p),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	next := authURL
	for range 200 {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, next, nil)
		resp, err := c.Do(req)
		if err != nil {
			return "", err
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusFound {
			next = resp.Header.Get("Location")
			continue
		}
		i := strings.Index(string(body), "url=")
		if resp.StatusCode != http.StatusOK || i < 0 {
			return string(body), nil // A's callback page (or an error page)
		}
		rest := string(body[i+4:])
		base, _ := url.Parse(next)
		ref, _ := url.Parse(strings.ReplaceAll(rest[:strings.IndexByte(rest, '"')], "&amp;", "&"))
		next = base.ResolveReference(ref).String()
	}
	return "", errors.New("the authorization page never redirected")
}

func textOf(r *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestHubAsAnotherHubsServer: two hubs in one process stand in for two machines. Hub B
// ([http] auth = "oauth" beyond loopback: TLS with its own certificate) is hub A's server "b",
// pinned by the fingerprint B's Settings show. A signs in to B with its OAuth client (discovery,
// registration, PKCE; the browser stand-in follows B's authorization page), the user allows A
// on B's dashboard (DecideApproval through B's /api) with the files toolset only, and A's
// clients call B's tools as b__<tool>: b__file_read reads B's workspace. A deny on A (b__file_write)
// refuses before B sees the call; a deny on B (file_delete) refuses on B, and A's client reads
// B's refusal. A's Servers view shows b as a hub with its machine name (hub.machine). The tokens
// are in A's keyring, in neither hub's /api answers nor A's data directory. Revoking the grant on
// B cuts A off at its next call and puts b back to "sign in".
func TestHubAsAnotherHubsServer(t *testing.T) {
	secretstest.Start(t)
	b := newRemoteHub(t)
	spec := upstream.Spec{Name: "b", URL: b.mcpURL, TLSFingerprint: b.pin}
	a := newLocalHub(t, spec, []policy.RuleSpec{{Tool: "b__file_write", Action: "deny"}},
		"[[policy.rules]]\ntool = \"b__file_write\"\naction = \"deny\"\n")

	a.api(t, "POST", "/api/servers/b/approve-command", map[string]any{"hash": a.row(t)["command_hash"]})
	// This hub starts servers on demand: approving the tools starts b, which asks for a sign-in.
	apptest.DashAPI(t, a.dashURL, "dash-token", "POST", "/api/servers/b/approve", map[string]any{"tools": []string{}})
	a.waitState(t, "signin")

	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	si := a.api(t, "POST", "/api/servers/b/login", nil)
	authURL, _ := si["url"].(string)
	if !strings.HasPrefix(authURL, strings.TrimSuffix(b.mcpURL, "/mcp")+"/oauth/authorize?") {
		t.Fatalf("A's sign-in does not go to B's authorization server: %v", si)
	}
	type page struct {
		text string
		err  error
	}
	landed := make(chan page, 1)
	go func() { p, err := pinnedBrowser(ctx, authURL, b.pin); landed <- page{p, err} }()
	asked := b.pendingClient(t)
	if asked["client"] != "Switchboard" {
		t.Errorf("B's approval names the client %v, want Switchboard", asked["client"])
	}
	b.api(t, "POST", "/api/approvals/"+asked["id"].(string), map[string]any{"decision": "allow", "scopes": []string{"files"}})
	p := <-landed
	if p.err != nil || !strings.Contains(p.text, "Switchboard is signed in to b") {
		t.Fatalf("the browser: %q %v", p.text, p.err)
	}
	row := a.waitState(t, "running")
	machine, _ := os.Hostname()
	if hub, _ := row["hub"].(map[string]any); hub == nil || hub["machine"] != machine {
		t.Errorf("A's Servers view does not show b as a hub on %q: hub = %v (server_info %v)", machine, row["hub"], row["server_info"])
	}
	if row["signed_in"] != true {
		t.Errorf("b runs on a sign-in, signed_in = %v", row["signed_in"])
	}
	var tools []string
	for _, tl := range row["tools"].([]any) {
		tools = append(tools, tl.(map[string]any)["name"].(string))
	}
	if !strings.Contains(strings.Join(tools, " "), "file_read") || strings.Contains(strings.Join(tools, " "), "exec") {
		t.Errorf("B offers A %v; want its files tools only (the toolset the user granted)", tools)
	}
	a.api(t, "POST", "/api/servers/b/approve", map[string]any{"tools": []string{}})

	cs := apptest.InMemoryClient(t, a.st, "laptop-agent")
	if r := apptest.CallTool(t, cs, "b__file_read", map[string]any{"path": "on-b.txt"}); r.IsError || !strings.Contains(textOf(r), "written on hub B") {
		t.Fatalf("b__file_read through A: %q", textOf(r))
	}
	// Denied on A: refused with A's rule, and B never wrote the file.
	r := apptest.CallTool(t, cs, "b__file_write", map[string]any{"path": "from-a.txt", "content": "x"})
	if !r.IsError || !strings.Contains(textOf(r), "denied by") || !strings.Contains(textOf(r), a.cfgPath) {
		t.Errorf("b__file_write (denied on A): %q", textOf(r))
	}
	if _, err := os.Stat(filepath.Join(b.st.Config.Workspace, "from-a.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a call A's policy denies reached B: %v", err)
	}
	// Denied on B: A allows it, B refuses with its own rule; the file stays.
	r = apptest.CallTool(t, cs, "b__file_delete", map[string]any{"path": "on-b.txt"})
	if !r.IsError || !strings.Contains(textOf(r), "file_delete: denied by") || !strings.Contains(textOf(r), b.cfgPath) {
		t.Errorf("b__file_delete (denied on B): %q", textOf(r))
	}
	if _, err := os.Stat(filepath.Join(b.st.Config.Workspace, "on-b.txt")); err != nil {
		t.Errorf("a call B's policy denies deleted B's file: %v", err)
	}

	// B's Settings list A's grant; no token is in either hub's answers or A's data directory.
	grants := b.api(t, "GET", "/api/grants", nil)["grants"].([]any)
	if len(grants) != 1 {
		t.Fatalf("B's grants: %v", grants)
	}
	var files strings.Builder
	_ = filepath.WalkDir(a.st.Config.DataDir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			files.Write(b)
		}
		return nil
	})
	// The grant is in A's keyring (where the tokens live), and nowhere else.
	g, err := keyring.Store{Bus: app.SessionBus(a.st.Config.Env)}.Load(ctx, "b")
	if err != nil || g.AccessToken == "" || g.RefreshToken == "" {
		t.Fatalf("A's keyring has no grant for b: %v", err)
	}
	for _, tok := range []string{g.AccessToken, g.RefreshToken} {
		if strings.Contains(a.answers.String(), tok) || strings.Contains(b.answers.String(), tok) || strings.Contains(files.String(), tok) {
			t.Errorf("a token B issued is in an /api answer or a file of A's data directory")
		}
	}

	// Revoked on B (Settings › Other machines): A's next call is refused, and A's server waits
	// for a sign-in, its tools answering how.
	b.api(t, "POST", "/api/grants/"+grants[0].(map[string]any)["id"].(string)+"/revoke", nil)
	r = apptest.CallTool(t, cs, "b__file_read", map[string]any{"path": "on-b.txt"})
	if !r.IsError || strings.Contains(textOf(r), "written on hub B") {
		t.Errorf("b__file_read after B revoked A's grant: %q", textOf(r))
	}
	a.waitState(t, "signin")
	r = apptest.CallTool(t, cs, "b__file_read", map[string]any{"path": "on-b.txt"})
	if !r.IsError || !strings.Contains(textOf(r), "server b needs you to sign in") {
		t.Errorf("b__file_read once b waits for a sign-in: %q", textOf(r))
	}
}

// TestHubUpstreamCertificatePin: A's connection to B checks B's certificate by the fingerprint
// pinned in the server's entry. A wrong pin is refused with an error naming tls_fingerprint and
// the fingerprint seen; without a pin the self-signed certificate is refused with its
// fingerprint and how to pin it. Neither sends B a request that reaches its authorization
// server (no pending approval on B).
func TestHubUpstreamCertificatePin(t *testing.T) {
	secretstest.Start(t) // A reads the keyring of the test's own bus, never the user's
	b := newRemoteHub(t)
	wrong := hubtls.PinPrefix + strings.Repeat("AB:", 31) + "AB"
	for _, tc := range []struct {
		name, pin string
		want      []string
	}{
		{"wrong pin", wrong, []string{"tls_fingerprint", "not the one pinned", b.pin}},
		{"no pin", "", []string{fmt.Sprintf("tls_fingerprint = %q", b.pin), "certificate"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newLocalHub(t, upstream.Spec{Name: "b", URL: b.mcpURL, TLSFingerprint: tc.pin}, nil, "")
			a.api(t, "POST", "/api/servers/b/approve-command", map[string]any{"hash": a.row(t)["command_hash"]})
			apptest.DashAPI(t, a.dashURL, "dash-token", "POST", "/api/servers/b/approve", map[string]any{"tools": []string{}}) // starts it
			var row map[string]any
			if !testutil.Poll(30*time.Second, func() bool {
				row = a.row(t)
				s, _ := row["last_error"].(string)
				return strings.Contains(s, "certificate")
			}) {
				t.Fatalf("hub A's server b: %v %v", row["state"], row["last_error"])
			}
			if row["state"] == "running" || row["state"] == "signin" {
				t.Errorf("state %v with a refused certificate", row["state"])
			}
			for _, w := range tc.want {
				if !strings.Contains(row["last_error"].(string), w) {
					t.Errorf("last_error %q does not say %q", row["last_error"], w)
				}
			}
			if approvals := b.api(t, "GET", "/api/approvals", nil)["approvals"].([]any); len(approvals) != 0 {
				t.Errorf("B was asked to approve a client: %v", approvals)
			}
		})
	}
}
