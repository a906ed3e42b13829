//go:build linux

package dashboard

import (
	"context"
	"crypto/tls"
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

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/app/apptest"
	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/internal/hubtls"
	"github.com/switchboard-hub/switchboard/internal/testutil"
	"github.com/switchboard-hub/switchboard/internal/upstream"
	"github.com/switchboard-hub/switchboard/mcp"
)

// oauthHub is a hub with [http] auth = "oauth" serving HTTP on loopback, its dashboard's /api,
// and a user who is "there" (the dashboard counts as open), so approvals wait for an answer.
type oauthHub struct {
	st      *app.Stack
	mcpURL  string
	dashURL string
	answers strings.Builder // every /api answer, searched for tokens at the end
}

func newOAuthHub(t *testing.T) *oauthHub {
	t.Helper()
	st := apptest.Stack(t, "", func(c *config.Config) { c.HTTP.Auth = config.HTTPAuthOAuth })
	if err := st.Transports.Start(mcp.TransportHTTP); err != nil {
		t.Fatal(err)
	}
	remove := st.Approvals.AddPresence(func() bool { return true }) // the dashboard is open
	t.Cleanup(remove)
	dash := httptest.NewServer(NewServer(app.NewController(st, "test"), "dash-token").Handler())
	t.Cleanup(dash.Close)
	return &oauthHub{st: st, mcpURL: "http://" + st.Transports.Addr(mcp.TransportHTTP) + "/mcp", dashURL: dash.URL}
}

func (h *oauthHub) api(t *testing.T, method, route string, body any) map[string]any {
	t.Helper()
	code, out := apptest.DashAPI(t, h.dashURL, "dash-token", method, route, body)
	b, _ := json.Marshal(out)
	h.answers.Write(b)
	if code != 200 {
		t.Fatalf("%s %s: %d %s", method, route, code, b)
	}
	return out
}

// pendingClient waits for a client's authorization among the approvals.
func (h *oauthHub) pendingClient(t *testing.T) map[string]any {
	t.Helper()
	var found map[string]any
	if !testutil.Poll(20*time.Second, func() bool {
		for _, a := range h.api(t, "GET", "/api/approvals", nil)["approvals"].([]any) {
			if m := a.(map[string]any); m["kind"] == "client" {
				found = m
				return true
			}
		}
		return false
	}) {
		t.Fatal("no client authorization among the approvals")
	}
	return found
}

// browser follows an authorization URL as a browser does: the waiting page reloads itself (its
// meta refresh) until the hub redirects to the client's redirect URI, which it returns.
func browser(ctx context.Context, authURL string) (*url.URL, error) {
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	next := authURL
	for range 100 {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, next, nil)
		resp, err := c.Do(req)
		if err != nil {
			return nil, err
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusFound {
			return url.Parse(resp.Header.Get("Location"))
		}
		i := strings.Index(string(body), "url=")
		if resp.StatusCode != http.StatusOK || i < 0 {
			return nil, fmt.Errorf("authorize page: %d %s", resp.StatusCode, body)
		}
		rest := string(body[i+4:])
		base, _ := url.Parse(next)
		ref, _ := url.Parse(strings.ReplaceAll(rest[:strings.IndexByte(rest, '"')], "&amp;", "&"))
		next = base.ResolveReference(ref).String()
	}
	return nil, errors.New("the authorize page never redirected")
}

// TestOAuthClientFullFlow: go-sdk's MCP client with its OAuth support (discovery from the 401,
// dynamic registration, authorization code with PKCE and the resource indicator) against a hub
// with auth = "oauth". The authorization shows up among the dashboard's approvals ("<client> on
// <device>"), the user allows it with the files toolset only through DecideApproval; the
// client lists and calls files tools and is refused a process tool; a refresh rotates the
// tokens; RevokeGrant cuts the client off at its next request (401 with resource_metadata).
// No token is in any /api answer, the audit log, the hub log or any file of the data directory.
func TestOAuthClientFullFlow(t *testing.T) {
	h := newOAuthHub(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	// Unauthenticated: 401 naming the protected resource's metadata.
	resp, err := http.Post(h.mcpURL, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	origin := strings.TrimSuffix(h.mcpURL, "/mcp")
	if want := fmt.Sprintf(`Bearer resource_metadata=%q`, origin+"/.well-known/oauth-protected-resource/mcp"); resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") != want {
		t.Fatalf("unauthenticated: %d %q, want 401 %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), want)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0") // the client's loopback redirect (never called: the browser stops at it)
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	redirect := "http://" + ln.Addr().String() + "/callback"
	var asked map[string]any
	handler, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			ClientName: "Laptop Agent", RedirectURIs: []string{redirect}, GrantTypes: []string{"authorization_code", "refresh_token"},
			TokenEndpointAuthMethod: "none",
		}},
		RedirectURL:         redirect,
		RequestRefreshToken: true,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			type result struct {
				loc *url.URL
				err error
			}
			done := make(chan result, 1)
			go func() { loc, err := browser(ctx, args.URL); done <- result{loc, err} }()
			asked = h.pendingClient(t)
			h.api(t, "POST", "/api/approvals/"+asked["id"].(string), map[string]any{"decision": "allow", "scopes": []string{"files"}})
			r := <-done
			if r.err != nil {
				return nil, r.err
			}
			q := r.loc.Query()
			if q.Get("error") != "" {
				return nil, fmt.Errorf("authorization refused: %s", q.Get("error_description"))
			}
			return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "laptop-agent", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: h.mcpURL, OAuthHandler: handler}, nil)
	if err != nil {
		t.Fatalf("connect with OAuth: %v", err)
	}
	defer cs.Close()
	if asked["client"] != "Laptop Agent" || asked["device"] != "127.0.0.1" || asked["redirect"] != "http://"+ln.Addr().String() {
		t.Fatalf("the approval shown: %v", asked)
	}

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
		if mcp.ToolsetOf(tl) != "" && mcp.ToolsetOf(tl) != "files" {
			t.Errorf("tools/list shows %s (toolset %s) to a client granted files only", tl.Name, mcp.ToolsetOf(tl))
		}
	}
	if !strings.Contains(strings.Join(names, " "), "file_write") {
		t.Fatalf("tools/list: %v", names)
	}
	wr := apptest.CallTool(t, cs, "file_write", map[string]any{"path": "from-laptop.txt", "content": "hello"})
	if wr.IsError {
		t.Fatalf("file_write: %v", wr.Content)
	}
	if b, err := os.ReadFile(filepath.Join(h.st.Config.Workspace, "from-laptop.txt")); err != nil || string(b) != "hello" {
		t.Fatalf("the file written: %q %v", b, err)
	}
	ps, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "process_start", Arguments: map[string]any{"command": "true"}})
	if err != nil || !ps.IsError || !strings.Contains(fmt.Sprint(ps.Content[0].(*sdk.TextContent).Text), "not granted") {
		t.Fatalf("process_start outside the grant: %v %v", ps, err)
	}

	// The grant in Settings: client, device, scopes, last use.
	grants := h.api(t, "GET", "/api/grants", nil)
	list := grants["grants"].([]any)
	if grants["enabled"] != true || len(list) != 1 {
		t.Fatalf("grants: %v", grants)
	}
	g := list[0].(map[string]any)
	if g["clientName"] != "Laptop Agent" || g["device"] != "127.0.0.1" || fmt.Sprint(g["scopes"]) != "[files]" || g["lastUsed"] == nil {
		t.Fatalf("grant: %v", g)
	}

	// Refresh through the token endpoint with the client's refresh token: rotated.
	ts, err := handler.TokenSource(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := ts.Token()
	if err != nil || tok.RefreshToken == "" {
		t.Fatalf("the client's token: %v (refresh token %t)", err, tok != nil && tok.RefreshToken != "")
	}
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}, "client_id": {g["clientId"].(string)}, "resource": {h.mcpURL}}
	resp, err = http.PostForm(origin+"/oauth/token", form)
	if err != nil {
		t.Fatal(err)
	}
	var refreshed oauth2.Token
	_ = json.NewDecoder(resp.Body).Decode(&refreshed)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || refreshed.AccessToken == "" || refreshed.RefreshToken == tok.RefreshToken {
		t.Fatalf("refresh: %d %+v", resp.StatusCode, refreshed.RefreshToken != "")
	}
	rawCall := func(token string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, h.mcpURL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	if r := rawCall(refreshed.AccessToken); r.StatusCode != http.StatusOK {
		t.Fatalf("the refreshed access token: %d", r.StatusCode)
	}
	// The static token keeps working on loopback.
	if r := rawCall("test-token"); r.StatusCode != http.StatusOK {
		t.Fatalf("the static token on loopback: %d", r.StatusCode)
	}

	// A 2026-07-28 listen stream the client holds open under the grant (ended by the revocation).
	listenReq, _ := http.NewRequest(http.MethodPost, h.mcpURL, strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"subscriptions/listen","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}},"notifications":{"toolsListChanged":true}}}`))
	for k, v := range map[string]string{"Authorization": "Bearer " + refreshed.AccessToken, "Content-Type": "application/json",
		"Accept": "application/json, text/event-stream", "Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"} {
		listenReq.Header.Set(k, v)
	}
	listenResp, err := http.DefaultClient.Do(listenReq)
	if err != nil || listenResp.StatusCode != http.StatusOK {
		t.Fatalf("listen under the grant: %v %v", err, listenResp)
	}
	listenEnded := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, listenResp.Body); listenResp.Body.Close(); close(listenEnded) }()

	// RevokeGrant: the next request with the grant's token is refused, and the open stream ends.
	after := h.api(t, "POST", "/api/grants/"+g["id"].(string)+"/revoke", nil)
	select {
	case <-listenEnded:
	case <-time.After(5 * time.Second):
		t.Error("the listen stream opened under the grant is still open 5 s after RevokeGrant")
	}
	if len(after["grants"].([]any)) != 0 {
		t.Fatalf("grants after revoke: %v", after)
	}
	r := rawCall(refreshed.AccessToken)
	if r.StatusCode != http.StatusUnauthorized || !strings.Contains(r.Header.Get("WWW-Authenticate"), "resource_metadata=") {
		t.Fatalf("after revoke: %d %q", r.StatusCode, r.Header.Get("WWW-Authenticate"))
	}

	// No token anywhere it could leak.
	secrets := []string{tok.AccessToken, tok.RefreshToken, refreshed.AccessToken, refreshed.RefreshToken}
	for _, s := range secrets {
		if strings.Contains(h.answers.String(), s) {
			t.Fatal("an /api answer holds a token")
		}
	}
	_ = filepath.Walk(h.st.Config.DataDir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return nil
		}
		b, _ := os.ReadFile(p)
		for _, s := range secrets {
			if strings.Contains(string(b), s) {
				t.Errorf("%s holds a token", p)
			}
		}
		return nil
	})
}

// startAuthorization registers a public client and opens its authorization in a "browser";
// it returns the client id, the PKCE verifier and where the browser ends (once the user answered).
func (h *oauthHub) startAuthorization(t *testing.T, name string) (clientID, verifier, redirect string, landed <-chan *url.URL) {
	t.Helper()
	origin := strings.TrimSuffix(h.mcpURL, "/mcp")
	redirect = "http://127.0.0.1:45678/cb"
	b, _ := json.Marshal(map[string]any{"client_name": name, "redirect_uris": []string{redirect}, "token_endpoint_auth_method": "none"})
	resp, err := http.Post(origin+"/oauth/register", "application/json", strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	var reg map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&reg)
	resp.Body.Close()
	clientID, _ = reg["client_id"].(string)
	if resp.StatusCode != http.StatusCreated || clientID == "" {
		t.Fatalf("register: %d %v", resp.StatusCode, reg)
	}
	verifier = strings.Repeat("v", 20) + oauth2.GenerateVerifier()
	q := url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {redirect}, "state": {"s"},
		"code_challenge": {oauth2.S256ChallengeFromVerifier(verifier)}, "code_challenge_method": {"S256"}, "resource": {h.mcpURL}}
	out := make(chan *url.URL, 1)
	go func() { // ends when the hub redirects (the user answered) or the test's hub closes
		loc, err := browser(context.Background(), origin+"/oauth/authorize?"+q.Encode())
		if err != nil {
			loc = &url.URL{RawQuery: "error=" + url.QueryEscape(err.Error())}
		}
		out <- loc
	}()
	return clientID, verifier, redirect, out
}

// grantToken runs a whole authorization answered with scopes and returns the access token.
func (h *oauthHub) grantToken(t *testing.T, name string, scopes []string) string {
	t.Helper()
	id, verifier, redirect, landed := h.startAuthorization(t, name)
	a := h.pendingClient(t)
	h.api(t, "POST", "/api/approvals/"+a["id"].(string), map[string]any{"decision": "allow", "scopes": scopes})
	loc := <-landed
	resp, err := http.PostForm(strings.TrimSuffix(h.mcpURL, "/mcp")+"/oauth/token", url.Values{"grant_type": {"authorization_code"},
		"code": {loc.Query().Get("code")}, "client_id": {id}, "redirect_uri": {redirect}, "code_verifier": {verifier}, "resource": {h.mcpURL}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok oauth2.Token
	_ = json.NewDecoder(resp.Body).Decode(&tok)
	if resp.StatusCode != http.StatusOK || tok.AccessToken == "" {
		t.Fatalf("token: %d", resp.StatusCode)
	}
	return tok.AccessToken
}

// bearerClient connects an MCP client presenting token.
func bearerClient(t *testing.T, endpoint, token string) *sdk.ClientSession {
	t.Helper()
	hc := &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+token)
		return http.DefaultTransport.RoundTrip(r)
	})}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bearer", Version: "1"}, nil).Connect(context.Background(),
		&sdk.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestOAuthReadOnlyScopeLimitsToReadOnlyTools: the user grants files + readonly; the client
// reads but cannot write, and tools/list shows no tool that is not read-only.
func TestOAuthReadOnlyScopeLimitsToReadOnlyTools(t *testing.T) {
	h := newOAuthHub(t)
	if err := os.WriteFile(filepath.Join(h.st.Config.Workspace, "a.txt"), []byte("content"), 0o644); err != nil {
		t.Fatal(err)
	}
	cs := bearerClient(t, h.mcpURL, h.grantToken(t, "Reader", []string{"files", "readonly"}))
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.Tools {
		if tl.Annotations == nil || !tl.Annotations.ReadOnlyHint {
			t.Errorf("a read-only grant lists %s, which is not read-only", tl.Name)
		}
	}
	if rd := apptest.CallTool(t, cs, "file_read", map[string]any{"path": "a.txt"}); rd.IsError {
		t.Fatalf("file_read: %v", rd.Content)
	}
	wr, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "file_write", Arguments: map[string]any{"path": "b.txt", "content": "x"}})
	if err != nil || !wr.IsError {
		t.Fatalf("file_write with a read-only grant: %v %v", wr, err)
	}
	if _, err := os.Stat(filepath.Join(h.st.Config.Workspace, "b.txt")); err == nil {
		t.Fatal("a read-only grant wrote a file")
	}
}

// TestOAuthApprovalCannotBeForgedAndDenialReachesTheClient: while a client waits, its approval
// cannot be answered by a web page (no dashboard token: 401; a foreign Origin: 403), nor by the
// client through the hub's MCP origin (no such route), nor by query parameters on the
// authorization pages; the user's Deny reaches the client as access_denied and leaves no grant.
func TestOAuthApprovalCannotBeForgedAndDenialReachesTheClient(t *testing.T) {
	h := newOAuthHub(t)
	_, _, _, landed := h.startAuthorization(t, "Self Approver")
	a := h.pendingClient(t)
	id := a["id"].(string)
	post := func(base, token, origin string) int {
		req, _ := http.NewRequest(http.MethodPost, base+"/api/approvals/"+id, strings.NewReader(`{"decision":"allow"}`))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if c := post(h.dashURL, "", "https://evil.example"); c != 401 {
		t.Errorf("a web page without the dashboard token: %d, want 401", c)
	}
	if c := post(h.dashURL, "dash-token", "https://evil.example"); c != 403 {
		t.Errorf("a foreign Origin: %d, want 403", c)
	}
	origin := strings.TrimSuffix(h.mcpURL, "/mcp")
	if c := post(origin, "test-token", ""); c != 404 {
		t.Errorf("the decision through the MCP endpoint's origin: %d, want 404", c)
	}
	for _, p := range []string{"/oauth/authorize?decision=allow&id=" + id, "/oauth/authorize/wait?request=" + id + "&decision=allow"} {
		if resp, err := http.Get(origin + p); err == nil {
			resp.Body.Close()
		}
	}
	if still := h.pendingClient(t); still["id"] != id {
		t.Fatalf("the approval changed: %v", still)
	}
	h.api(t, "POST", "/api/approvals/"+id, map[string]any{"decision": "deny"})
	loc := <-landed
	if loc.Query().Get("error") != "access_denied" || loc.Query().Get("code") != "" {
		t.Fatalf("denied client landed on %s", loc)
	}
	if g := h.api(t, "GET", "/api/grants", nil)["grants"].([]any); len(g) != 0 {
		t.Fatalf("grants after a denial: %v", g)
	}
}

// TestOAuthGrantCannotContinueAnotherGrantsSession: an MCP session opened by one grant is not
// usable with another grant's token, nor with the static token (go-sdk binds a session to the
// TokenInfo's user, here the grant).
func TestOAuthGrantCannotContinueAnotherGrantsSession(t *testing.T) {
	h := newOAuthHub(t)
	tokA := h.grantToken(t, "A", []string{"files"})
	tokB := h.grantToken(t, "B", []string{"files"})
	init := func(token, session string) *http.Response {
		body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
		if session != "" {
			body = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
		}
		req, _ := http.NewRequest(http.MethodPost, h.mcpURL, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	sess := init(tokA, "").Header.Get("Mcp-Session-Id")
	if sess == "" {
		t.Fatal("no session")
	}
	if r := init(tokB, sess); r.StatusCode < 400 {
		t.Errorf("another grant continued the session: %d", r.StatusCode)
	}
	if r := init("test-token", sess); r.StatusCode < 400 {
		t.Errorf("the static token continued a grant's session: %d", r.StatusCode)
	}
	if r := init(tokA, sess); r.StatusCode != http.StatusOK && r.StatusCode != http.StatusAccepted {
		t.Errorf("the grant's own session: %d", r.StatusCode)
	}
}

// TestHTTPBeyondLoopbackNeedsOAuthAndServesTLS: HTTP on an address beyond loopback is refused
// without auth = "oauth"; with it, the hub makes its own certificate, serves TLS (plain HTTP gets
// nowhere), and the certificate a client sees has the fingerprint the dashboard shows; the
// metadata names https endpoints.
func TestHTTPBeyondLoopbackNeedsOAuthAndServesTLS(t *testing.T) {
	plain := apptest.Stack(t, "", func(c *config.Config) { c.HTTP.Addr = "0.0.0.0:0" })
	if err := plain.Transports.Start(mcp.TransportHTTP); err == nil || !strings.Contains(err.Error(), `auth = "oauth"`) {
		t.Fatalf("HTTP beyond loopback without OAuth: %v", err)
	}

	st := apptest.Stack(t, "", func(c *config.Config) { c.HTTP.Addr = "0.0.0.0:0"; c.HTTP.Auth = config.HTTPAuthOAuth })
	if err := st.Transports.Start(mcp.TransportHTTP); err != nil {
		t.Fatal(err)
	}
	var endpoint string
	for _, s := range st.Transports.Status() {
		if s.Name == mcp.TransportHTTP {
			endpoint = s.URL
		}
	}
	if !strings.HasPrefix(endpoint, "https://") {
		t.Fatalf("the HTTP transport's URL %q, want https", endpoint)
	}
	_, port, _ := net.SplitHostPort(st.Transports.Addr(mcp.TransportHTTP))
	grants := app.NewController(st, "test").Grants()
	if grants.Fingerprint == "" || !grants.SelfSigned || !grants.TLS {
		t.Fatalf("grants: %+v, want the hub's own certificate's fingerprint, served", grants)
	}
	var seen string
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, // the check is the fingerprint below
		VerifyConnection: func(cs tls.ConnectionState) error {
			seen = hubtls.Fingerprint(cs.PeerCertificates[0].Raw)
			return nil
		}}}}
	resp, err := hc.Get("https://127.0.0.1:" + port + "/.well-known/oauth-authorization-server")
	if err != nil {
		t.Fatal(err)
	}
	var meta map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&meta)
	resp.Body.Close()
	if seen != grants.Fingerprint {
		t.Fatalf("the served certificate's fingerprint %s, the dashboard shows %s", seen, grants.Fingerprint)
	}
	if meta["token_endpoint"] != "https://127.0.0.1:"+port+"/oauth/token" {
		t.Fatalf("metadata over TLS: %v", meta)
	}
	if resp, err := http.Get("http://127.0.0.1:" + port + "/mcp"); err == nil {
		resp.Body.Close()
		if resp.StatusCode < 400 {
			t.Fatalf("plain HTTP on the TLS port: %d", resp.StatusCode)
		}
	}
}

// TestOAuthEndpointsRefuseARebindingHost: over plain HTTP (loopback only) a request whose Host is
// not this machine — a web page whose name was rebound to 127.0.0.1 — can neither read the
// metadata, register a client nor start an authorization naming its own host as the issuer.
func TestOAuthEndpointsRefuseARebindingHost(t *testing.T) {
	h := newOAuthHub(t)
	origin := strings.TrimSuffix(h.mcpURL, "/mcp")
	for _, path := range []string{"/.well-known/oauth-authorization-server", "/oauth/register", "/oauth/authorize?client_id=x"} {
		req, _ := http.NewRequest(http.MethodGet, origin+path, nil)
		if path == "/oauth/register" {
			req, _ = http.NewRequest(http.MethodPost, origin+path, strings.NewReader(`{"redirect_uris":["https://evil.example/cb"]}`))
		}
		req.Host = "evil.example:9101"
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s with a rebound Host: %d, want 403", path, resp.StatusCode)
		}
	}
	// The same from this machine's name is served.
	resp, err := http.Get(origin + "/.well-known/oauth-authorization-server")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("metadata on loopback: %d", resp.StatusCode)
	}
}

// TestHTTPMovedBeyondLoopbackServesTLS: a hub with auth = "oauth" started on loopback serves plain
// HTTP there; moved beyond loopback while it runs (Settings' address), it serves TLS with the
// certificate it made at start, whose fingerprint Settings showed all along.
func TestHTTPMovedBeyondLoopbackServesTLS(t *testing.T) {
	h := newOAuthHub(t)
	ctl := app.NewController(h.st, "test")
	before := ctl.Grants()
	if before.TLS || before.Fingerprint == "" || !strings.HasPrefix(h.mcpURL, "http://") {
		t.Fatalf("on loopback: %+v %s", before, h.mcpURL)
	}
	if err := h.st.Transports.SetAddr(t.Context(), mcp.TransportHTTP, "0.0.0.0:0"); err != nil {
		t.Fatal(err)
	}
	after := ctl.Grants()
	if !after.TLS || after.Fingerprint != before.Fingerprint {
		t.Fatalf("beyond loopback: %+v (before %+v)", after, before)
	}
	if b, _ := json.Marshal(ctl.ClientConfig().HTTP); !strings.Contains(string(b), "https://") {
		t.Fatalf("client configuration: %s", b)
	}
}

// TestOAuthGrantCoversUpstreamResourcesAndPromptsByServer: an upstream server's resources and
// prompts reach an OAuth client only when its grant covers that server's toolset.
func TestOAuthGrantCoversUpstreamResourcesAndPromptsByServer(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "notes", Version: "1"}, nil)
	srv.AddResource(&sdk.Resource{Name: "secret", URI: "note://secret", MIMEType: "text/plain"},
		func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: "note://secret", MIMEType: "text/plain", Text: "the secret note"}}}, nil
		})
	srv.AddPrompt(&sdk.Prompt{Name: "greet"}, func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
		return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: "hello"}}}}, nil
	})
	sdk.AddTool(srv, &sdk.Tool{Name: "ping", Description: "answers"}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "pong"}}}, nil, nil
	})
	up := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(up.Close) // after the hub's own cleanup (registered later), which ends its session here
	spec := upstream.Spec{Name: "notes", URL: up.URL}
	cfgPath := filepath.Join(t.TempDir(), "config.toml")
	data, err := upstream.AddServer(nil, spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfgPath, data, 0o600); err != nil {
		t.Fatal(err)
	}
	st := apptest.Stack(t, "", func(c *config.Config) {
		c.Path = cfgPath
		c.HTTP.Auth = config.HTTPAuthOAuth
		c.Servers = []upstream.Spec{spec}
	})
	if err := st.Transports.Start(mcp.TransportHTTP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Approvals.AddPresence(func() bool { return true }))
	dash := httptest.NewServer(NewServer(app.NewController(st, "test"), "dash-token").Handler())
	defer dash.Close()
	h := &oauthHub{st: st, mcpURL: "http://" + st.Transports.Addr(mcp.TransportHTTP) + "/mcp", dashURL: dash.URL}
	hash := h.api(t, "GET", "/api/servers", nil)["servers"].([]any)[0].(map[string]any)["command_hash"].(string)
	h.api(t, "POST", "/api/servers/notes/approve-command", map[string]any{"hash": hash})
	h.api(t, "POST", "/api/servers/notes/approve", map[string]any{"tools": []string{}})
	if !testutil.Poll(30*time.Second, func() bool {
		return h.api(t, "GET", "/api/servers", nil)["servers"].([]any)[0].(map[string]any)["state"] == "running"
	}) {
		t.Fatalf("the upstream server never ran: %v", h.api(t, "GET", "/api/servers", nil))
	}
	ctx := t.Context()
	with := bearerClient(t, h.mcpURL, h.grantToken(t, "With notes", []string{"files", "notes"}))
	if !testutil.Poll(10*time.Second, func() bool {
		res, err := with.ListResources(ctx, nil)
		return err == nil && len(res.Resources) == 1
	}) {
		t.Fatal("a grant covering the server does not see its resource")
	}
	if r, err := with.ReadResource(ctx, &sdk.ReadResourceParams{URI: "note://secret"}); err != nil || r.Contents[0].Text != "the secret note" {
		t.Fatalf("read with the server granted: %v %v", r, err)
	}
	if p, err := with.ListPrompts(ctx, nil); err != nil || len(p.Prompts) != 1 {
		t.Fatalf("prompts with the server granted: %v %v", p, err)
	}

	without := bearerClient(t, h.mcpURL, h.grantToken(t, "Files only", []string{"files"}))
	if res, err := without.ListResources(ctx, nil); err != nil || len(res.Resources) != 0 {
		t.Fatalf("resources/list outside the grant: %v %v", res, err)
	}
	if r, err := without.ReadResource(ctx, &sdk.ReadResourceParams{URI: "note://secret"}); err == nil || !strings.Contains(err.Error(), "not granted") {
		t.Fatalf("resources/read outside the grant: %v %v", r, err)
	}
	if p, err := without.ListPrompts(ctx, nil); err != nil || len(p.Prompts) != 0 {
		t.Fatalf("prompts/list outside the grant: %v %v", p, err)
	}
	name := "notes__greet"
	if _, err := without.GetPrompt(ctx, &sdk.GetPromptParams{Name: name}); err == nil {
		t.Fatal("prompts/get outside the grant answered")
	}
	if r, err := without.CallTool(ctx, &sdk.CallToolParams{Name: "notes__ping"}); err != nil || !r.IsError {
		t.Fatalf("the server's tool outside the grant: %v %v", r, err)
	}
}
