package oauthclient_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/oauthclient"
	"github.com/switchboard-hub/switchboard/internal/oauthclient/oauthtest"
)

var okHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") })

func flow(t *testing.T, res *oauthtest.Resource, store oauthclient.Store) *oauthclient.Flow {
	t.Helper()
	hc, err := oauthclient.HTTPClient(res.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &oauthclient.Flow{Server: "remote", URL: res.URL, Store: store, HTTP: hc, Open: oauthtest.Browser(t), Timeout: 10 * time.Second}
}

func transport(t *testing.T, res *oauthtest.Resource, store oauthclient.Store, signin *atomic.Int32) *http.Client {
	hc, _ := oauthclient.HTTPClient(res.URL, nil)
	return &http.Client{Transport: &oauthclient.Transport{Server: "remote", URL: res.URL, Store: store, HTTP: hc,
		OnSignIn: func(string) {
			if signin != nil {
				signin.Add(1)
			}
		}}}
}

func get(c *http.Client, u string) (int, error) {
	resp, err := c.Post(u, "application/json", strings.NewReader(`{}`))
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// The whole sign-in against the test AS: dynamic registration, PKCE S256, the resource
// indicator, then tokens that live two seconds refreshed across many calls, each refresh
// rotating the refresh token.
func TestSignInAndRefreshAcrossManyCalls(t *testing.T) {
	as := oauthtest.NewAS(t)
	as.TokenTTL = 2 * time.Second
	res := oauthtest.NewResource(t, as, okHandler)
	store := &oauthclient.MemStore{}
	g, err := flow(t, res, store).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if g.Resource != res.URL || g.Issuer != as.URL || !strings.HasPrefix(g.ClientID, "dcr-") || g.RefreshToken == "" {
		t.Fatalf("grant: resource %q issuer %q client %q refresh %v", g.Resource, g.Issuer, g.ClientID, g.RefreshToken != "")
	}
	if !slices.Contains(g.Scopes, "offline_access") {
		t.Errorf("scopes %v: offline_access is offered by the AS and should be asked for", g.Scopes)
	}
	first := g.RefreshToken
	var signin atomic.Int32
	c := transport(t, res, store, &signin)
	deadline := time.Now().Add(5 * time.Second)
	n := 0
	for time.Now().Before(deadline) {
		if code, err := get(c, res.URL); err != nil || code != 200 {
			t.Fatalf("call %d: %d %v", n, code, err)
		}
		n++
		time.Sleep(50 * time.Millisecond)
	}
	if r := as.Counts(); r < 2 {
		t.Errorf("%d refreshes over 5 s of 2 s tokens", r)
	}
	if signin.Load() != 0 {
		t.Error("the user was asked to sign in during refreshes")
	}
	now, _ := store.Load(context.Background(), "remote")
	if now.RefreshToken == first {
		t.Error("refresh token not rotated in the store")
	}
	t.Logf("%d calls, %d refreshes", n, as.Counts())
}

// A refresh token the AS revoked turns the next call into "sign in", and the grant is dropped.
func TestRevokedRefreshTokenNeedsSignIn(t *testing.T) {
	as := oauthtest.NewAS(t)
	as.TokenTTL = time.Second
	res := oauthtest.NewResource(t, as, okHandler)
	store := &oauthclient.MemStore{}
	if _, err := flow(t, res, store).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	var signin atomic.Int32
	c := transport(t, res, store, &signin)
	if code, err := get(c, res.URL); code != 200 || err != nil {
		t.Fatal(code, err)
	}
	as.RevokeAll()
	_, err := get(c, res.URL)
	var ns *oauthclient.NeedsSignIn
	if !errors.As(err, &ns) || signin.Load() != 1 {
		t.Fatalf("after revocation: %v (sign-in callbacks %d); want NeedsSignIn", err, signin.Load())
	}
	if !strings.Contains(err.Error(), "switchboard servers login remote") {
		t.Errorf("error %q does not say how to sign in", err)
	}
	if _, err := store.Load(context.Background(), "remote"); !errors.Is(err, oauthclient.ErrNoGrant) {
		t.Errorf("grant still stored after refusal: %v", err)
	}
}

// Without a grant a 401 asks for the user at once; after a sign-in elsewhere (the CLI, another
// process) the same transport picks the new grant from the store.
func TestSignInElsewhereIsPickedUp(t *testing.T) {
	as := oauthtest.NewAS(t)
	res := oauthtest.NewResource(t, as, okHandler)
	store := &oauthclient.MemStore{}
	var signin atomic.Int32
	c := transport(t, res, store, &signin)
	var ns *oauthclient.NeedsSignIn
	if _, err := get(c, res.URL); !errors.As(err, &ns) {
		t.Fatalf("no grant: %v", err)
	}
	if _, err := flow(t, res, store).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if code, err := get(c, res.URL); code != 200 || err != nil {
		t.Fatalf("after sign-in: %d %v", code, err)
	}
}

// Attack: a redirect to the listener that does not carry the sign-in's state (a forged link
// with the attacker's own code, login CSRF) is refused and its code never exchanged; a
// redirect to another path of the listener is not an answer either. The hub's token request
// carries exactly the redirect URI of its authorization request.
func TestAttackStateAndRedirectMismatch(t *testing.T) {
	as := oauthtest.NewAS(t)
	res := oauthtest.NewResource(t, as, okHandler)
	f := flow(t, res, &oauthclient.MemStore{})
	var forged []int
	f.Open = func(u string) error {
		au, _ := url.Parse(u)
		redirect := au.Query().Get("redirect_uri")
		for _, bad := range []string{
			redirect + "?code=attacker-code&state=not-ours&iss=" + url.QueryEscape(as.URL),
			strings.Replace(redirect, "/callback", "/other", 1) + "?code=attacker-code&state=" + au.Query().Get("state"),
		} {
			resp, err := http.Get(bad)
			if err != nil {
				return err
			}
			resp.Body.Close()
			forged = append(forged, resp.StatusCode)
		}
		return oauthtest.Browser(t)(u)
	}
	if _, err := f.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(forged, []int{400, 404}) {
		t.Errorf("forged redirects answered %v; want 400 (state) and 404 (path)", forged)
	}
	if slices.Contains(as.Exchange, "attacker-code") || len(as.Exchange) != 1 {
		t.Errorf("codes exchanged: %v; want only the real one", as.Exchange)
	}
	if len(as.AuthorizeRedirects) != 1 || !slices.Equal(as.AuthorizeRedirects, as.TokenRedirects) || !strings.HasPrefix(as.TokenRedirects[0], "http://127.0.0.1:") {
		t.Errorf("redirect URIs: authorize %v, token %v; want one loopback IP URI, the same in both", as.AuthorizeRedirects, as.TokenRedirects)
	}
}

// Attack: the authorization code replayed. The browser delivering the redirect twice gets the
// code exchanged once; an attacker replaying it at the token endpoint gets refused and the AS
// revokes what the code granted: the hub's next refresh is refused and it asks for the user
// instead of failing obscurely.
func TestAttackCodeReplay(t *testing.T) {
	as := oauthtest.NewAS(t)
	as.TokenTTL = time.Second
	res := oauthtest.NewResource(t, as, okHandler)
	store := &oauthclient.MemStore{}
	f := flow(t, res, store)
	var callback string
	var mu sync.Mutex
	f.Open = func(u string) error {
		go func() {
			c := &http.Client{CheckRedirect: func(r *http.Request, via []*http.Request) error { return http.ErrUseLastResponse }}
			resp, err := c.Get(u)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			loc := resp.Header.Get("Location")
			mu.Lock()
			callback = loc
			mu.Unlock()
			for range 2 { // delivered twice
				if r, err := http.Get(loc); err == nil {
					r.Body.Close()
				}
			}
		}()
		return nil
	}
	if _, err := f.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if len(as.Exchange) != 1 {
		t.Fatalf("the code was exchanged %d times by the hub", len(as.Exchange))
	}
	// The listener is gone: a replay to it reaches nothing.
	mu.Lock()
	cb := callback
	mu.Unlock()
	if r, err := http.Get(cb); err == nil {
		r.Body.Close()
		t.Errorf("the redirect listener still answers after the sign-in (%d)", r.StatusCode)
	}
	// The attacker replays the code at the token endpoint.
	u, _ := url.Parse(cb)
	g, _ := store.Load(context.Background(), "remote")
	resp, err := http.PostForm(as.URL+"/token", url.Values{"grant_type": {"authorization_code"}, "code": {u.Query().Get("code")}, "client_id": {g.ClientID}, "redirect_uri": {as.TokenRedirects[0]}, "resource": {res.URL}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("replayed code: %d", resp.StatusCode)
	}
	var signin atomic.Int32
	_, err = get(transport(t, res, store, &signin), res.URL)
	var ns *oauthclient.NeedsSignIn
	if !errors.As(err, &ns) {
		t.Fatalf("after the replay revoked the grant: %v; want NeedsSignIn", err)
	}
}

// Attack: a PKCE downgrade. An AS whose metadata offers only "plain" (or no PKCE) is refused
// before the user is sent anywhere.
func TestAttackPKCEDowngrade(t *testing.T) {
	for name, methods := range map[string]any{"plain": []string{"plain"}, "none": nil} {
		t.Run(name, func(t *testing.T) {
			as := oauthtest.NewAS(t)
			as.Meta = func(m map[string]any) { m["code_challenge_methods_supported"] = methods }
			res := oauthtest.NewResource(t, as, okHandler)
			f := flow(t, res, &oauthclient.MemStore{})
			opened := false
			f.Open = func(string) error { opened = true; return nil }
			_, err := f.Run(context.Background())
			if err == nil || !strings.Contains(err.Error(), "PKCE") {
				t.Fatalf("err = %v; want a refusal naming PKCE", err)
			}
			if opened || slices.Contains(as.Requests(), "GET /authorize") {
				t.Error("the user was sent to the authorization server anyway")
			}
		})
	}
}

// Attack: issuer mix-up (RFC 9207). A response whose iss is not the AS the hub sent the user to
// is refused and its code never exchanged; so is one without iss from an AS that says it sends
// one.
func TestAttackIssuerMixUp(t *testing.T) {
	for name, iss := range map[string]string{"other issuer": "https://evil.example", "no iss": " "} {
		t.Run(name, func(t *testing.T) {
			as := oauthtest.NewAS(t)
			res := oauthtest.NewResource(t, as, okHandler)
			f := flow(t, res, &oauthclient.MemStore{})
			if iss == " " {
				f.Open = func(u string) error {
					go func() {
						c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
						resp, err := c.Get(u)
						if err != nil {
							return
						}
						resp.Body.Close()
						loc, _ := url.Parse(resp.Header.Get("Location"))
						q := loc.Query()
						q.Del("iss")
						loc.RawQuery = q.Encode()
						if r, err := http.Get(loc.String()); err == nil {
							r.Body.Close()
						}
					}()
					return nil
				}
			} else {
				as.Iss = iss
			}
			_, err := f.Run(context.Background())
			if err == nil || !strings.Contains(err.Error(), "RFC 9207") {
				t.Fatalf("err = %v; want an RFC 9207 refusal", err)
			}
			if len(as.Exchange) != 0 {
				t.Errorf("code exchanged despite the mix-up: %v", as.Exchange)
			}
		})
	}
}

// Attack: a token for another resource. Resource metadata that names another resource is
// refused (RFC 9728 §3.3); a token whose audience is another resource is refused (RFC 8707);
// a grant obtained for one URL is never sent to another (the url was edited).
func TestAttackTokenForAnotherResource(t *testing.T) {
	t.Run("metadata for another resource", func(t *testing.T) {
		as := oauthtest.NewAS(t)
		res := oauthtest.NewResource(t, as, okHandler)
		res.PRM = func(m map[string]any) { m["resource"] = "https://other.example/mcp" }
		_, err := flow(t, res, &oauthclient.MemStore{}).Run(context.Background())
		if err == nil || slices.Contains(as.Requests(), "GET /authorize") {
			t.Fatalf("err = %v; want a refusal before authorization", err)
		}
	})
	t.Run("token audience", func(t *testing.T) {
		as := oauthtest.NewAS(t)
		as.Audience = "https://other.example/mcp"
		res := oauthtest.NewResource(t, as, okHandler)
		store := &oauthclient.MemStore{}
		_, err := flow(t, res, store).Run(context.Background())
		if err == nil || !strings.Contains(err.Error(), "RFC 8707") {
			t.Fatalf("err = %v; want an RFC 8707 refusal", err)
		}
		if _, err := store.Load(context.Background(), "remote"); !errors.Is(err, oauthclient.ErrNoGrant) {
			t.Error("the token was stored")
		}
	})
	t.Run("grant of another URL", func(t *testing.T) {
		as := oauthtest.NewAS(t)
		res := oauthtest.NewResource(t, as, okHandler)
		other := oauthtest.NewResource(t, as, okHandler)
		store := &oauthclient.MemStore{}
		if _, err := flow(t, res, store).Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		// The same server name now points at another URL: its grant is not sent there.
		_, err := get(transport(t, other, store, nil), other.URL)
		var ns *oauthclient.NeedsSignIn
		if !errors.As(err, &ns) {
			t.Fatalf("err = %v; want NeedsSignIn", err)
		}
		for _, h := range other.Seen() {
			if h != "" {
				t.Errorf("the other resource received %q", h)
			}
		}
	})
}

// Attack: metadata that points the hub at an internal address. The server is on 127.0.0.1
// (its host is trusted); an authorization server or token endpoint on another loopback
// address, or on a link-local one (cloud metadata), is refused where it is dialed, and never
// receives a request.
func TestAttackMetadataPointsInside(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("cannot listen on 127.0.0.2: %v", err)
		}
		t.Skipf("cannot listen on 127.0.0.2: %v", err)
	}
	ln.Close()
	for _, c := range []struct {
		name string
		bend func(as, inside *oauthtest.AS, res *oauthtest.Resource)
	}{
		{"authorization server on 127.0.0.2", func(as, inside *oauthtest.AS, res *oauthtest.Resource) {
			res.PRM = func(m map[string]any) { m["authorization_servers"] = []string{inside.URL} }
		}},
		{"token endpoint on 127.0.0.2", func(as, inside *oauthtest.AS, res *oauthtest.Resource) {
			as.Meta = func(m map[string]any) { m["token_endpoint"] = inside.URL + "/token" }
		}},
		{"registration endpoint on 127.0.0.2", func(as, inside *oauthtest.AS, res *oauthtest.Resource) {
			as.Meta = func(m map[string]any) { m["registration_endpoint"] = inside.URL + "/register" }
		}},
		{"authorization server on the cloud metadata address", func(as, inside *oauthtest.AS, res *oauthtest.Resource) {
			res.PRM = func(m map[string]any) { m["authorization_servers"] = []string{"http://169.254.169.254"} }
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			as := oauthtest.NewAS(t)
			inside := oauthtest.NewASOn(t, "127.0.0.2:0")
			res := oauthtest.NewResource(t, as, okHandler)
			c.bend(as, inside, res)
			_, err := flow(t, res, &oauthclient.MemStore{}).Run(context.Background())
			if err == nil {
				t.Fatal("signed in through an internal address")
			}
			if got := inside.Requests(); len(got) > 0 {
				t.Errorf("the internal server received %v", got)
			}
			t.Log(err)
		})
	}
}

// A configured client (client_id and secret) is used as it is, with the secret in the token
// requests' Basic authentication, when the AS does not register clients.
func TestConfiguredClient(t *testing.T) {
	as := oauthtest.NewAS(t)
	as.NoDCR = true
	res := oauthtest.NewResource(t, as, okHandler)
	f := flow(t, res, &oauthclient.MemStore{})
	if _, err := f.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "client_id") {
		t.Fatalf("no DCR, no client: %v; want the fix (oauth.client_id)", err)
	}
	f = flow(t, res, &oauthclient.MemStore{})
	f.Config = oauthclient.Config{ClientID: "configured", ClientSecret: "s3cret"}
	f.Open = func(u string) error {
		au, _ := url.Parse(u)
		as.Register("configured", "s3cret", au.Query().Get("redirect_uri"))
		return oauthtest.Browser(t)(u)
	}
	g, err := f.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if g.ClientID != "configured" || g.AuthMethod != "client_secret_basic" {
		t.Errorf("client %q via %q", g.ClientID, g.AuthMethod)
	}
}

// Where the AS supports Client ID Metadata Documents and the hub has one, the hub is identified
// by its document's URL and registers nothing; a configured client_id still wins over it.
func TestClientIDMetadataDocument(t *testing.T) {
	const doc = "https://switchboard.example/oauth/client.json"
	as := oauthtest.NewAS(t)
	as.Documents = map[string][]string{doc: {"http://127.0.0.1/callback"}}
	res := oauthtest.NewResource(t, as, okHandler)
	f := flow(t, res, &oauthclient.MemStore{})
	f.ClientMetadataURL = doc
	g, err := f.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if g.ClientID != doc || slices.Contains(as.Requests(), "POST /register") {
		t.Errorf("client %q; requests %v", g.ClientID, as.Requests())
	}
}

// A hub started again finds its grant in the store at the server's first 401; an access token
// that expired meanwhile is refreshed then, without the user.
func TestExpiredGrantRefreshedAtStart(t *testing.T) {
	as := oauthtest.NewAS(t)
	as.TokenTTL = time.Second
	res := oauthtest.NewResource(t, as, okHandler)
	store := &oauthclient.MemStore{}
	if _, err := flow(t, res, store).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond)
	var signin atomic.Int32
	if code, err := get(transport(t, res, store, &signin), res.URL); code != 200 || err != nil {
		t.Fatalf("first call of a new transport: %d %v", code, err)
	}
	if as.Counts() != 1 || signin.Load() != 0 {
		t.Errorf("refreshes %d, sign-ins asked %d; want 1 and 0", as.Counts(), signin.Load())
	}
}

// A 401 without a Bearer challenge (a server wanting an API key header, Basic auth) is not a
// sign-in: the caller gets the 401 as it is and nobody is asked to sign in.
func TestNonBearer401IsNotASignIn(t *testing.T) {
	for name, hdr := range map[string]string{"none": "", "basic": `Basic realm="x"`} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if hdr != "" {
					w.Header().Set("WWW-Authenticate", hdr)
				}
				http.Error(w, "missing X-API-Key", http.StatusUnauthorized)
			}))
			defer srv.Close()
			var signin atomic.Int32
			c := &http.Client{Transport: &oauthclient.Transport{Server: "remote", URL: srv.URL + "/mcp", Store: &oauthclient.MemStore{},
				OnSignIn: func(string) { signin.Add(1) }}}
			code, err := get(c, srv.URL+"/mcp")
			if code != 401 || err != nil || signin.Load() != 0 {
				t.Errorf("got %d %v, sign-ins %d; want the 401 as it is", code, err, signin.Load())
			}
		})
	}
}

// Step-up (the MCP authorization spec's insufficient_scope): a 403 asking for a scope the grant
// lacks fails that request with NeedsScope, naming the scope, without asking the user to sign in
// for every other request; the grant keeps working, and the next sign-in asks for the scope.
func TestInsufficientScopeStepsUp(t *testing.T) {
	as := oauthtest.NewAS(t)
	as.TokenTTL = time.Hour
	admin := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		if r.URL.Query().Get("admin") != "" && !slices.Contains(strings.Fields(as.Scope(tok)), "admin") {
			w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="mcp admin"`)
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		_, _ = io.WriteString(w, "ok")
	})
	res := oauthtest.NewResource(t, as, admin)
	store := &oauthclient.MemStore{}
	g, err := flow(t, res, store).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(g.Scopes, "admin") {
		t.Fatalf("first sign-in asked for admin already: %v", g.Scopes)
	}
	var signin atomic.Int32
	c := transport(t, res, store, &signin)
	if code, err := get(c, res.URL); err != nil || code != 200 {
		t.Fatalf("plain call: %d %v", code, err)
	}
	_, err = get(c, res.URL+"?admin=1")
	var ns *oauthclient.NeedsScope
	if !errors.As(err, &ns) || !slices.Equal(ns.Scopes, []string{"mcp", "admin"}) || !strings.Contains(err.Error(), "servers login remote") {
		t.Fatalf("admin call: %v, want NeedsScope naming mcp admin and how to sign in", err)
	}
	if code, err := get(c, res.URL); err != nil || code != 200 {
		t.Fatalf("plain call after the 403: %d %v (the grant should keep working)", code, err)
	}
	if signin.Load() != 0 {
		t.Error("a step-up took the server to sign in")
	}
	stored, _ := store.Load(context.Background(), "remote")
	if !slices.Equal(stored.StepUp, []string{"admin"}) {
		t.Fatalf("stored step-up %v, want [admin]", stored.StepUp)
	}
	g2, err := flow(t, res, store).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(g2.Scopes, "admin") || !slices.Contains(g2.Scopes, "mcp") || len(g2.StepUp) != 0 {
		t.Fatalf("second sign-in scopes %v step-up %v, want mcp and admin asked for", g2.Scopes, g2.StepUp)
	}
	c2 := transport(t, res, store, &signin)
	if code, err := get(c2, res.URL+"?admin=1"); err != nil || code != 200 {
		t.Fatalf("admin call after signing in again: %d %v", code, err)
	}
}
