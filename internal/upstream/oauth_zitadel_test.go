//go:build unix

package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/client/rp"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/switchboard-hub/switchboard/internal/oauthclient"
)

// zitadel/oidc's OpenID provider has no dynamic client registration (RFC 7591), so the hub is
// a client registered in the example's in-memory storage and configured in the server's oauth
// table, its secret a ${secret:…}.
const (
	zitadelClientID     = "switchboard-zitadel-test"
	zitadelClientSecret = "zitadel-client-secret-7f3a"
)

// zitadelStorage is the example provider's in-memory storage with what the test needs on top:
// access tokens that are JWTs (the resource server verifies them with the provider's keys)
// living ttl, the hub's loopback redirect on any port (RFC 8252 §7.3), and a count of refreshes.
type zitadelStorage struct {
	*storage.Storage
	ttl time.Duration

	mu        sync.Mutex
	refreshes int
}

type zitadelClient struct{ op.Client }

func (zitadelClient) AccessTokenType() op.AccessTokenType { return op.AccessTokenTypeJWT }
func (zitadelClient) RedirectURIGlobs() []string          { return []string{"http://127.0.0.1:*/callback"} }
func (zitadelClient) PostLogoutRedirectURIGlobs() []string {
	return nil
}

func (s *zitadelStorage) GetClientByClientID(ctx context.Context, id string) (op.Client, error) {
	c, err := s.Storage.GetClientByClientID(ctx, id)
	if err != nil {
		return nil, err
	}
	return zitadelClient{c}, nil
}

func (s *zitadelStorage) CreateAccessAndRefreshTokens(ctx context.Context, req op.TokenRequest, current string) (string, string, time.Time, error) {
	id, refresh, _, err := s.Storage.CreateAccessAndRefreshTokens(ctx, req, current)
	if err == nil && current != "" {
		s.mu.Lock()
		s.refreshes++
		s.mu.Unlock()
	}
	return id, refresh, time.Now().Add(s.ttl), err
}

func (s *zitadelStorage) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refreshes
}

// zitadelBrowser is the user at the example provider's login page: it follows the redirects
// to the page, submits its form with the example's test user, and follows the redirects back to
// the hub's loopback listener.
func zitadelBrowser(t *testing.T, user string) (func(string) error, <-chan error) {
	done := make(chan error, 1)
	return func(authURL string) error {
		go func() {
			done <- func() error {
				jar, _ := cookiejar.New(nil)
				c := &http.Client{Jar: jar, Timeout: 20 * time.Second}
				resp, err := c.Get(authURL)
				if err != nil {
					return err
				}
				page, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				id := resp.Request.URL.Query().Get("authRequestID")
				if resp.Request.URL.Path != "/login/username" || id == "" || !strings.Contains(string(page), `name="password"`) {
					return fmt.Errorf("not the login page: %s %d %.300s", resp.Request.URL, resp.StatusCode, page)
				}
				form := url.Values{"username": {user}, "password": {"verysecure"}, "id": {id}}
				resp, err = c.PostForm(resp.Request.URL.Scheme+"://"+resp.Request.URL.Host+"/login/username", form)
				if err != nil {
					return err
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.Request.URL.Host == "" || !strings.HasPrefix(resp.Request.URL.Path, "/callback") || resp.StatusCode != http.StatusOK {
					return fmt.Errorf("the login did not end at the hub's loopback: %s %d %.300s", resp.Request.URL, resp.StatusCode, body)
				}
				return nil
			}()
		}()
		return nil
	}, done
}

// A real OpenID provider (zitadel/oidc's example OP, its storage, login page and test user) is
// the authorization server of a go-sdk MCP server that accepts only the provider's JWT access
// tokens, verified with its published keys. The hub, configured with a client_id and a
// ${secret:…} client secret registered at the provider, finds the provider from the server's
// protected-resource metadata (RFC 9728) and OpenID discovery, signs in (authorization code,
// PKCE S256, the user logging in on the provider's page), calls a tool, and keeps calling it
// across refreshes of three-second tokens without the user; when the provider revokes the
// refresh token, the server goes back to "sign in".
func TestOAuthZitadelProvider(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	issuer := "http://" + ln.Addr().String()
	storage.RegisterClients(storage.WebClient(zitadelClientID, zitadelClientSecret, "http://127.0.0.1/callback"))
	st := &zitadelStorage{Storage: storage.NewStorage(storage.NewUserStore(issuer)), ttl: 3 * time.Second}
	provider := &httptest.Server{Listener: ln, Config: &http.Server{Handler: exampleop.SetupServer(issuer, st, nil, false)}}
	provider.Start()
	t.Cleanup(provider.Close)

	// The resource server: a go-sdk MCP server behind a bearer check of the provider's tokens.
	verifier := op.NewAccessTokenVerifier(issuer, rp.NewRemoteKeySet(http.DefaultClient, issuer+"/keys"))
	var mu sync.Mutex
	accepted := map[string]bool{}
	verify := func(ctx context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
		claims, err := op.VerifyAccessToken[*oidc.AccessTokenClaims](ctx, tok, verifier)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", auth.ErrInvalidToken, err)
		}
		if !slices.Contains(claims.Audience, zitadelClientID) {
			return nil, fmt.Errorf("%w: audience %v", auth.ErrInvalidToken, claims.Audience)
		}
		mu.Lock()
		accepted[tok] = true
		mu.Unlock()
		return &auth.TokenInfo{Scopes: claims.Scopes, Expiration: claims.Expiration.AsTime(), UserID: claims.Subject}, nil
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "zitadel-protected", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "whoami", Description: "says who called"}, func(_ context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		ti := req.Extra.TokenInfo
		if ti == nil {
			return nil, nil, errors.New("no token info")
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "user " + ti.UserID}}}, nil, nil
	})
	mux := http.NewServeMux()
	rs := httptest.NewServer(mux)
	t.Cleanup(rs.Close)
	metaURL := rs.URL + "/.well-known/oauth-protected-resource/mcp"
	mux.Handle("/.well-known/oauth-protected-resource/mcp", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: rs.URL + "/mcp", AuthorizationServers: []string{issuer}, ScopesSupported: []string{"openid", "offline_access"},
	}))
	mux.Handle("/mcp", auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: metaURL})(
		sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)))

	store := &oauthclient.MemStore{}
	m := newTestManager(t, Options{OAuthStore: store, Secret: func(name string) (string, error) {
		if name == "zitadel-client-secret" {
			return zitadelClientSecret, nil
		}
		return "", fmt.Errorf("no secret %q", name)
	}})
	spec := Spec{Name: "zitadel", URL: rs.URL + "/mcp", OAuth: &OAuth{
		ClientID: zitadelClientID, ClientSecret: "${secret:zitadel-client-secret}", Scopes: []string{"openid", "offline_access"},
	}}
	if err := spec.Validate(nil); err != nil {
		t.Fatal(err)
	}
	if err := approveSync(m, []Spec{spec}); err != nil {
		t.Fatal(err)
	}
	waitState(t, m, "zitadel", StateSignin)

	// The example's test user is named after the issuer's host.
	open, done := zitadelBrowser(t, "test-user@127.0.0.1")
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := m.Login(ctx, "zitadel", open); err != nil {
		t.Fatalf("sign-in: %v (browser: %v)", err, <-done)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	waitState(t, m, "zitadel", StateRunning)
	if _, err := m.Approve(t.Context(), "zitadel"); err != nil {
		t.Fatal(err)
	}
	g, err := store.Load(t.Context(), "zitadel")
	if err != nil || g.Issuer != issuer || g.RefreshToken == "" || strings.Count(g.AccessToken, ".") != 2 {
		t.Fatalf("grant after sign-in: issuer %q, refresh token %v, JWT access token %v, %v", g.Issuer, g.RefreshToken != "", strings.Count(g.AccessToken, ".") == 2, err)
	}

	deadline := time.Now().Add(8 * time.Second)
	n := 0
	for time.Now().Before(deadline) {
		r, err := m.CallTool(t.Context(), "zitadel", "whoami", json.RawMessage(`{}`), nil)
		if err != nil || text(r) != "user id1" {
			t.Fatalf("call %d: %v %v", n, r, err)
		}
		n++
		time.Sleep(200 * time.Millisecond)
	}
	mu.Lock()
	tokens := len(accepted)
	mu.Unlock()
	if st.count() < 2 || tokens < 3 {
		t.Errorf("in 8 s of 3 s tokens: %d refreshes at the provider, %d access tokens accepted by the server", st.count(), tokens)
	}
	if s, _ := m.Status("zitadel"); s.State != StateRunning || !s.SignedIn {
		t.Errorf("after the refreshes: %s signed in %v %q", s.State, s.SignedIn, s.LastError)
	}
	t.Logf("%d calls, %d refreshes, %d access tokens", n, st.count(), tokens)

	// The first access token has expired: the server refuses it, so the calls above rode on
	// refreshed ones.
	req, _ := http.NewRequest(http.MethodPost, rs.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Authorization", "Bearer "+g.AccessToken)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the first, expired access token: %v %v; want 401", resp, err)
	} else {
		resp.Body.Close()
	}

	// The user revokes the hub's access at the provider (its own revocation of the refresh
	// token the hub holds now; retried if the hub rotated it meanwhile): once the access token
	// expires, the server waits for the user again and its tools say so.
	for i := 0; ; i++ {
		g, err := store.Load(t.Context(), "zitadel")
		if err != nil {
			t.Fatal(err)
		}
		if oe := st.RevokeToken(t.Context(), g.RefreshToken, "id1", zitadelClientID); oe != nil {
			t.Fatal(oe)
		}
		time.Sleep(300 * time.Millisecond)
		if now, _ := store.Load(t.Context(), "zitadel"); now != nil && now.RefreshToken == g.RefreshToken {
			break
		}
		if i == 10 {
			t.Fatal("the hub's refresh token keeps changing")
		}
	}
	time.Sleep(3100 * time.Millisecond)
	if _, err := m.CallTool(t.Context(), "zitadel", "whoami", json.RawMessage(`{}`), nil); err == nil || !strings.Contains(err.Error(), "needs you to sign in") {
		t.Errorf("call after the provider revoked the grant: %v; want the sign-in instruction", err)
	}
	waitState(t, m, "zitadel", StateSignin)

	// No token the provider issued shows in the statuses or the server's log.
	stj, _ := json.Marshal(m.Statuses())
	logs, _ := m.Logs("zitadel", 0)
	lj, _ := json.Marshal(logs)
	mu.Lock()
	defer mu.Unlock()
	for tok := range accepted {
		if strings.Contains(string(stj)+string(lj), tok) {
			t.Error("an access token shows in the status or the log")
		}
	}
}
