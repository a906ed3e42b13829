//go:build unix

package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/oauthclient"
	"github.com/switchboard-hub/switchboard/internal/oauthclient/oauthtest"
)

// oauthServer is a go-sdk MCP server with an echo tool behind the test AS's tokens.
func oauthServer(t *testing.T, as *oauthtest.AS) *oauthtest.Resource {
	srv := sdk.NewServer(&sdk.Implementation{Name: "protected", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "echo", Description: "echoes"}, func(_ context.Context, _ *sdk.CallToolRequest, in struct {
		Message string `json:"message"`
	}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "Echo: " + in.Message}}}, nil, nil
	})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	return oauthtest.NewResource(t, as, h)
}

// A remote server that answers 401 waits in "signin" (its tools answering with how to sign
// in), signs in through the test AS (a browser that follows redirects), then serves calls
// across many refreshes of two-second tokens without the user; a revoked refresh token puts it
// back to "signin". No token shows in its status, its log, the approvals file or any file the
// hub wrote.
func TestOAuthServerSignInRefreshRevoke(t *testing.T) {
	as := oauthtest.NewAS(t)
	as.TokenTTL = 2 * time.Second
	res := oauthServer(t, as)
	store := &oauthclient.MemStore{}
	dir := t.TempDir()
	m := newTestManager(t, Options{OAuthStore: store, ApprovalsFile: filepath.Join(dir, "approvals.json"), StateDir: filepath.Join(dir, "state"), Workspace: dir})
	spec := Spec{Name: "remote", URL: res.URL}
	if err := approveSync(m, []Spec{spec}); err != nil {
		t.Fatal(err)
	}
	st := waitState(t, m, "remote", StateSignin)
	want := "server remote needs you to sign in: run `switchboard servers login remote` or click Sign in in the Servers view"
	if st.LastError != want {
		t.Errorf("last error %q", st.LastError)
	}
	if _, err := m.CallTool(t.Context(), "remote", "echo", json.RawMessage(`{}`), nil); err == nil || err.Error() != want {
		t.Errorf("call while signed out: %v", err)
	}
	if err := m.Login(t.Context(), "remote", oauthtest.Browser(t)); err != nil {
		t.Fatal(err)
	}
	waitState(t, m, "remote", StateRunning)
	if _, err := m.Approve(t.Context(), "remote"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	n := 0
	for time.Now().Before(deadline) {
		r, err := m.CallTool(t.Context(), "remote", "echo", json.RawMessage(`{"message":"hi"}`), nil)
		if err != nil || text(r) != "Echo: hi" {
			t.Fatalf("call %d: %v %v", n, text(r), err)
		}
		n++
		time.Sleep(100 * time.Millisecond)
	}
	if as.Counts() < 2 {
		t.Errorf("%d refreshes in 5 s of 2 s tokens", as.Counts())
	}
	t.Logf("%d calls, %d refreshes", n, as.Counts())

	as.RevokeAll()
	time.Sleep(2100 * time.Millisecond) // the access token expires: the next call needs a refresh
	if _, err := m.CallTool(t.Context(), "remote", "echo", json.RawMessage(`{"message":"x"}`), nil); err == nil || !strings.Contains(err.Error(), "needs you to sign in") {
		t.Errorf("call after revocation: %v; want the sign-in instruction", err)
	}
	waitState(t, m, "remote", StateSignin)

	// Tokens sought everywhere the hub shows or writes things.
	g, _ := store.Load(context.Background(), "remote")
	var secrets []string
	if g != nil {
		secrets = append(secrets, g.AccessToken, g.RefreshToken)
	}
	// The AS issued more; every token string it handed out is in its log of exchanges only by
	// code, so look for the shape: the test AS's tokens are 24 base64url characters.
	stj, _ := json.Marshal(m.Statuses())
	logs, _ := m.Logs("remote", 0)
	lj, _ := json.Marshal(logs)
	files := string(stj) + string(lj)
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			files += string(b)
		}
		return nil
	})
	for _, s := range append(secrets, as.Issued()...) {
		if s != "" && strings.Contains(files, s) {
			t.Errorf("a token shows in the status, log or files: %q", s)
		}
	}
	if !strings.Contains(string(lj), "needs the user to sign in") {
		t.Errorf("the log does not say why: %s", lj)
	}
}

// logout forgets the grant and the server waits for the user again.
func TestOAuthLogout(t *testing.T) {
	as := oauthtest.NewAS(t)
	res := oauthServer(t, as)
	store := &oauthclient.MemStore{}
	m := newTestManager(t, Options{OAuthStore: store})
	if err := approveSync(m, []Spec{{Name: "remote", URL: res.URL}}); err != nil {
		t.Fatal(err)
	}
	waitState(t, m, "remote", StateSignin)
	if err := m.Login(t.Context(), "remote", oauthtest.Browser(t)); err != nil {
		t.Fatal(err)
	}
	st := waitState(t, m, "remote", StateRunning)
	if !st.SignedIn || !st.OAuth {
		t.Errorf("running after a sign-in: oauth %v signed_in %v", st.OAuth, st.SignedIn)
	}
	if err := m.Logout(t.Context(), "remote"); err != nil {
		t.Fatal(err)
	}
	if st, _ := m.Status("remote"); st.State == StateRunning {
		t.Error("Logout returned while the server still ran on the grant")
	}
	waitState(t, m, "remote", StateSignin)
	if _, err := store.Load(t.Context(), "remote"); err == nil {
		t.Error("grant kept after logout")
	}
	if !strings.Contains(strings.Join(as.Requests(), " "), "POST /revoke") {
		t.Error("logout did not revoke at the AS")
	}
}

// Nothing is sent to a server, not even a sign-in, before its command is approved.
func TestOAuthLoginNeedsApprovedCommand(t *testing.T) {
	as := oauthtest.NewAS(t)
	res := oauthServer(t, as)
	m := newTestManager(t, Options{OAuthStore: &oauthclient.MemStore{}})
	if err := m.Sync([]Spec{{Name: "remote", URL: res.URL}}); err != nil {
		t.Fatal(err)
	}
	waitState(t, m, "remote", StateUnapproved)
	if err := m.Login(t.Context(), "remote", oauthtest.Browser(t)); err == nil || !strings.Contains(err.Error(), "not approved") {
		t.Fatalf("login of an unapproved server: %v", err)
	}
	if len(res.Seen()) != 0 || len(as.Requests()) != 0 {
		t.Errorf("requests before approval: %v %v", res.Seen(), as.Requests())
	}
}

// A sign-in that fails (here: the authorization server offers no PKCE S256) says why on the
// server's status, where the dashboard and `servers list` show it, and the server keeps waiting.
func TestOAuthFailedSignInShowsWhy(t *testing.T) {
	as := oauthtest.NewAS(t)
	as.Meta = func(m map[string]any) { m["code_challenge_methods_supported"] = []string{"plain"} }
	res := oauthServer(t, as)
	m := newTestManager(t, Options{OAuthStore: &oauthclient.MemStore{}})
	if err := approveSync(m, []Spec{{Name: "remote", URL: res.URL}}); err != nil {
		t.Fatal(err)
	}
	waitState(t, m, "remote", StateSignin)
	if err := m.Login(t.Context(), "remote", oauthtest.Browser(t)); err == nil {
		t.Fatal("signed in without S256")
	}
	st, _ := m.Status("remote")
	if st.State != StateSignin || !strings.Contains(st.LastError, "sign-in failed: ") || !strings.Contains(st.LastError, "S256") || !strings.Contains(st.LastError, "switchboard servers login remote") {
		t.Errorf("status after a failed sign-in: %s %q", st.State, st.LastError)
	}
}

// Sign out of a remote server that never asked for a sign-in changes nothing: it keeps running.
func TestOAuthLogoutWithoutSignIn(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "open", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "echo", Description: "echoes"}, func(_ context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}}, nil, nil
	})
	open := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(open.Close) // after the manager's shutdown (cleanups run last first): its stream ends then
	m := newTestManager(t, Options{OAuthStore: &oauthclient.MemStore{}})
	if err := approveSync(m, []Spec{{Name: "open", URL: open.URL}}); err != nil {
		t.Fatal(err)
	}
	st := waitState(t, m, "open", StateRunning)
	if !st.OAuth || st.SignedIn {
		t.Errorf("an open server: oauth %v signed_in %v; want true, false", st.OAuth, st.SignedIn)
	}
	if err := m.Logout(t.Context(), "open"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if st, _ := m.Status("open"); st.State != StateRunning {
		t.Errorf("after a sign-out with nothing to forget: %s", st.State)
	}
}

// Step-up through the manager: a remote server that refuses one request with 403
// insufficient_scope answers that call with how to grant the scope, stays running for every
// other call, and the next sign-in asks for the scope.
func TestOAuthInsufficientScopeStepsUp(t *testing.T) {
	as := oauthtest.NewAS(t)
	as.TokenTTL = time.Hour
	srv := sdk.NewServer(&sdk.Implementation{Name: "protected", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "echo", Description: "echoes"}, func(_ context.Context, _ *sdk.CallToolRequest, in struct {
		Message string `json:"message"`
	}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "Echo: " + in.Message}}}, nil, nil
	})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	// The server wants "admin" for an echo of "admin", as a remote server wants a wider scope for
	// a write: it looks at the body, like a resource server deciding per operation.
	gate := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"message":"admin"`)) && !strings.Contains(as.Scope(tok), "admin") {
			w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="mcp admin"`)
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
	res := oauthtest.NewResource(t, as, gate)
	store := &oauthclient.MemStore{}
	dir := t.TempDir()
	m := newTestManager(t, Options{OAuthStore: store, ApprovalsFile: filepath.Join(dir, "approvals.json"), StateDir: filepath.Join(dir, "state"), Workspace: dir})
	if err := approveSync(m, []Spec{{Name: "remote", URL: res.URL}}); err != nil {
		t.Fatal(err)
	}
	waitState(t, m, "remote", StateSignin)
	if err := m.Login(t.Context(), "remote", oauthtest.Browser(t)); err != nil {
		t.Fatal(err)
	}
	waitState(t, m, "remote", StateRunning)
	if _, err := m.Approve(t.Context(), "remote"); err != nil {
		t.Fatal(err)
	}
	_, err := m.CallTool(t.Context(), "remote", "echo", json.RawMessage(`{"message":"admin"}`), nil)
	if err == nil || !strings.Contains(err.Error(), `needs more access for this (scope "mcp admin")`) || !strings.Contains(err.Error(), "servers login remote") {
		t.Fatalf("call needing admin: %v", err)
	}
	if r, err := m.CallTool(t.Context(), "remote", "echo", json.RawMessage(`{"message":"hi"}`), nil); err != nil || text(r) != "Echo: hi" {
		t.Fatalf("the next call: %v %v; the server should keep serving", text(r), err)
	}
	if err := m.Login(t.Context(), "remote", oauthtest.Browser(t)); err != nil {
		t.Fatal(err)
	}
	waitState(t, m, "remote", StateRunning)
	var r *sdk.CallToolResult
	deadline := time.Now().Add(10 * time.Second)
	for {
		r, err = m.CallTool(t.Context(), "remote", "echo", json.RawMessage(`{"message":"admin"}`), nil)
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil || text(r) != "Echo: admin" {
		t.Fatalf("call needing admin after signing in again: %v %v", text(r), err)
	}
}
