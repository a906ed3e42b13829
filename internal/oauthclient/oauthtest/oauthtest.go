// Package oauthtest is a small authorization server for tests, written from the RFCs the hub
// relies on (6749 with the 2.1 draft's rules, 7636 PKCE, 7591 registration, 7009 revocation,
// 8414 metadata, 8707 resource indicators, 9207 iss) and a protected MCP resource in front of
// a handler (RFC 9728 metadata, 6750 challenges). It approves every authorization request at
// once (the "user" always consents), so a test's browser is an HTTP client that follows
// redirects. Knobs bend it into the attacker of each attack test. Nothing in the product
// imports it.
package oauthtest

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// AS is the authorization server.
type AS struct {
	URL string // the issuer
	srv *httptest.Server

	mu sync.Mutex
	// TokenTTL is each access token's lifetime (default an hour).
	TokenTTL time.Duration
	// Meta changes the metadata before it is served (a downgrade, a mix-up, an internal
	// address).
	Meta func(m map[string]any)
	// Iss, when set, is the iss the authorization response carries instead of the issuer.
	Iss string
	// Audience, when set, makes access tokens JWT-shaped with this aud claim.
	Audience string
	// NoDCR leaves the registration endpoint out.
	NoDCR bool
	// Documents are Client ID Metadata Documents as if fetched from their URL (the client_id):
	// the redirect URIs each lists. Set, the metadata says CIMD is supported; a loopback redirect
	// URI matches on any port (RFC 8252 §7.3).
	Documents map[string][]string

	clients   map[string]client
	codes     map[string]*code
	access    map[string]token
	refresh   map[string]token // refresh token → what it grants
	revoked   map[string]bool  // refresh tokens refused from now on
	Log       []string         // every request: "METHOD /path"
	Exchange  []string         // codes exchanged (successfully or not)
	Refreshes int
	// AuthorizeRedirects are the redirect_uri values of authorization requests; TokenRedirects
	// those of code exchanges.
	AuthorizeRedirects, TokenRedirects []string
}

type client struct {
	secret   string
	redirect []string
}

type code struct {
	client, redirect, challenge, resource, scope string
	used                                         bool
	issued                                       []string // refresh tokens issued from it (revoked on replay)
}

type token struct {
	client, resource, scope string
	expiry                  time.Time
}

// NewAS starts an authorization server on a loopback port.
func NewAS(t testing.TB) *AS { return NewASOn(t, "127.0.0.1:0") }

// NewASOn starts one on addr.
func NewASOn(t testing.TB, addr string) *AS {
	a := &AS{clients: map[string]client{}, codes: map[string]*code{}, access: map[string]token{}, refresh: map[string]token{}, revoked: map[string]bool{}, TokenTTL: time.Hour}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	a.srv = &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(a.serve)}}
	a.srv.Start()
	a.URL = a.srv.URL
	t.Cleanup(a.srv.Close)
	return a
}

// Register adds a client by hand (a pre-registered one).
func (a *AS) Register(id, secret string, redirects ...string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.clients[id] = client{secret: secret, redirect: redirects}
}

// RevokeAll refuses every refresh token issued so far (the user revoked the hub's access).
func (a *AS) RevokeAll() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for r := range a.refresh {
		a.revoked[r] = true
	}
	for at := range a.access {
		a.revoked[at] = true
	}
}

// Requests returns the log of requests so far.
func (a *AS) Requests() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.Log)
}

// Counts returns the number of successful refreshes.
func (a *AS) Counts() (refreshes int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.Refreshes
}

// Valid reports whether tok is a live access token for resource.
func (a *AS) Valid(tok, resource string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	t, ok := a.access[tok]
	return ok && !a.revoked[tok] && time.Now().Before(t.expiry) && t.resource == resource
}

// Scope is the scope an access token was issued with ("" for an unknown token).
func (a *AS) Scope(tok string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.access[tok].scope
}

func random() string {
	b := make([]byte, 18)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func jsonOut(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func oauthErr(w http.ResponseWriter, status int, code, desc string) {
	jsonOut(w, status, map[string]string{"error": code, "error_description": desc})
}

func (a *AS) metadata() map[string]any {
	m := map[string]any{
		"issuer":                                         a.URL,
		"authorization_endpoint":                         a.URL + "/authorize",
		"token_endpoint":                                 a.URL + "/token",
		"revocation_endpoint":                            a.URL + "/revoke",
		"response_types_supported":                       []string{"code"},
		"grant_types_supported":                          []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported":               []string{"S256"},
		"token_endpoint_auth_methods_supported":          []string{"none", "client_secret_basic"},
		"scopes_supported":                               []string{"mcp", "offline_access"},
		"authorization_response_iss_parameter_supported": true,
	}
	if !a.NoDCR {
		m["registration_endpoint"] = a.URL + "/register"
	}
	if a.Documents != nil {
		m["client_id_metadata_document_supported"] = true
	}
	if a.Meta != nil {
		a.Meta(m)
	}
	return m
}

func (a *AS) serve(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.Log = append(a.Log, r.Method+" "+r.URL.Path)
	switch r.URL.Path {
	case "/.well-known/oauth-authorization-server":
		jsonOut(w, 200, a.metadata())
	case "/register":
		var m struct {
			RedirectURIs []string `json:"redirect_uris"`
		}
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil || len(m.RedirectURIs) == 0 {
			oauthErr(w, 400, "invalid_redirect_uri", "redirect_uris required")
			return
		}
		id := "dcr-" + random()
		a.clients[id] = client{redirect: m.RedirectURIs}
		jsonOut(w, 201, map[string]any{"client_id": id, "redirect_uris": m.RedirectURIs, "token_endpoint_auth_method": "none"})
	case "/authorize":
		a.authorize(w, r)
	case "/token":
		a.token(w, r)
	case "/revoke":
		_ = r.ParseForm()
		a.revoked[r.PostForm.Get("token")] = true
		w.WriteHeader(http.StatusOK)
	default:
		http.NotFound(w, r)
	}
}

func (a *AS) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	a.AuthorizeRedirects = append(a.AuthorizeRedirects, q.Get("redirect_uri"))
	c, ok := a.client(q.Get("client_id"), q.Get("redirect_uri"))
	// Without a known client and an exactly registered redirect URI there is nobody to send an
	// error to: an error page, never a redirect (RFC 6749 §4.1.2.1).
	if !ok || !slices.Contains(c.redirect, q.Get("redirect_uri")) {
		http.Error(w, "unknown client or redirect_uri not registered", http.StatusBadRequest)
		return
	}
	back, _ := url.Parse(q.Get("redirect_uri"))
	v := url.Values{"state": {q.Get("state")}}
	if q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" {
		v.Set("error", "invalid_request")
	} else {
		cd := random()
		a.codes[cd] = &code{client: q.Get("client_id"), redirect: q.Get("redirect_uri"), challenge: q.Get("code_challenge"), resource: q.Get("resource"), scope: q.Get("scope")}
		v.Set("code", cd)
	}
	iss := a.URL
	if a.Iss != "" {
		iss = a.Iss
	}
	v.Set("iss", iss)
	back.RawQuery = v.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

// client finds a registered client, or one whose metadata document lists redirect (the
// document's loopback URIs on any port).
func (a *AS) client(id, redirect string) (client, bool) {
	if c, ok := a.clients[id]; ok {
		return c, true
	}
	doc, ok := a.Documents[id]
	if !ok {
		return client{}, false
	}
	ru, err := url.Parse(redirect)
	if err != nil {
		return client{}, false
	}
	for _, d := range doc {
		du, err := url.Parse(d)
		if err == nil && du.Scheme == ru.Scheme && du.Hostname() == ru.Hostname() && du.Path == ru.Path && (du.Port() == ru.Port() || du.Hostname() == "127.0.0.1") {
			return client{redirect: []string{redirect}}, true
		}
	}
	return client{}, false
}

// clientOf authenticates the client of a token request.
func (a *AS) clientOf(r *http.Request) (string, bool) {
	id, secret, basic := r.BasicAuth()
	if basic {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if _, ok := a.Documents[id]; ok {
		return id, secret == "" // a public client identified by its document
	}
	c, ok := a.clients[id]
	return id, ok && c.secret == secret
}

func (a *AS) issue(w http.ResponseWriter, clientID, resource, scope string) string {
	at, rt := random(), random()
	if a.Audience != "" {
		hdr := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none"}`))
		body, _ := json.Marshal(map[string]any{"aud": a.Audience, "jti": at})
		at = hdr + "." + base64.RawURLEncoding.EncodeToString(body) + ".x"
	}
	tk := token{client: clientID, resource: resource, scope: scope, expiry: time.Now().Add(a.TokenTTL)}
	a.access[at] = tk
	a.refresh[rt] = tk
	jsonOut(w, 200, map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": int(a.TokenTTL.Seconds() + 0.5), "refresh_token": rt, "scope": scope})
	return rt
}

func (a *AS) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		oauthErr(w, 400, "invalid_request", err.Error())
		return
	}
	f := r.PostForm
	id, ok := a.clientOf(r)
	if !ok {
		oauthErr(w, 401, "invalid_client", "unknown client or wrong secret")
		return
	}
	switch f.Get("grant_type") {
	case "authorization_code":
		a.Exchange = append(a.Exchange, f.Get("code"))
		a.TokenRedirects = append(a.TokenRedirects, f.Get("redirect_uri"))
		c := a.codes[f.Get("code")]
		switch {
		case c == nil:
			oauthErr(w, 400, "invalid_grant", "unknown code")
			return
		case c.used:
			// A replayed code: refused, and what it granted is revoked (RFC 6749 §4.1.2).
			for _, rt := range c.issued {
				a.revoked[rt] = true
			}
			for at := range a.access {
				a.revoked[at] = true
			}
			oauthErr(w, 400, "invalid_grant", "code already used")
			return
		case c.client != id || c.redirect != f.Get("redirect_uri"):
			oauthErr(w, 400, "invalid_grant", "client or redirect_uri mismatch")
			return
		case c.resource != f.Get("resource"):
			oauthErr(w, 400, "invalid_target", "resource differs from the authorization request's")
			return
		}
		sum := sha256.Sum256([]byte(f.Get("code_verifier")))
		if base64.RawURLEncoding.EncodeToString(sum[:]) != c.challenge {
			c.used = true
			oauthErr(w, 400, "invalid_grant", "PKCE verification failed")
			return
		}
		c.used = true
		c.issued = append(c.issued, a.issue(w, id, c.resource, c.scope))
	case "refresh_token":
		rt := f.Get("refresh_token")
		tk, ok := a.refresh[rt]
		if !ok || a.revoked[rt] || tk.client != id {
			oauthErr(w, 400, "invalid_grant", "refresh token revoked, rotated or unknown")
			return
		}
		if res := f.Get("resource"); res != "" && res != tk.resource {
			oauthErr(w, 400, "invalid_target", "resource differs from the grant's")
			return
		}
		// Rotation: a refresh token is good once.
		a.revoked[rt] = true
		a.Refreshes++
		for _, c := range a.codes {
			if slices.Contains(c.issued, rt) {
				c.issued = append(c.issued, a.issue(w, id, tk.resource, tk.scope))
				return
			}
		}
		a.issue(w, id, tk.resource, tk.scope)
	default:
		oauthErr(w, 400, "unsupported_grant_type", f.Get("grant_type"))
	}
}

// Resource is a protected resource: Handler behind bearer tokens the AS issued for it.
type Resource struct {
	URL string // the MCP endpoint: <server>/mcp
	srv *httptest.Server
	// PRM changes the resource metadata before it is served.
	PRM func(m map[string]any)

	mu   sync.Mutex
	seen []string // Authorization header values received
}

// NewResource starts a protected resource on a loopback port, in front of h, whose tokens as
// issues.
func NewResource(t testing.TB, as *AS, h http.Handler) *Resource {
	res := &Resource{}
	mux := http.NewServeMux()
	res.srv = httptest.NewServer(mux)
	t.Cleanup(res.srv.Close)
	res.URL = res.srv.URL + "/mcp"
	meta := res.srv.URL + "/.well-known/oauth-protected-resource/mcp"
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		m := map[string]any{"resource": res.URL, "authorization_servers": []string{as.URL}, "scopes_supported": []string{"mcp"}, "bearer_methods_supported": []string{"header"}}
		if res.PRM != nil {
			res.PRM(m)
		}
		jsonOut(w, 200, m)
	})
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		res.mu.Lock()
		res.seen = append(res.seen, auth)
		res.mu.Unlock()
		tok, ok := strings.CutPrefix(auth, "Bearer ")
		if !ok || !as.Valid(tok, res.URL) {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="invalid_token", resource_metadata=%q, scope="mcp"`, meta))
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
	return res
}

// Seen returns the Authorization headers received on the MCP endpoint.
func (r *Resource) Seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.seen)
}

// Browser is the user's browser for an AS that consents at once: it follows the authorization
// URL's redirects to the hub's loopback listener. Use it as Flow.Open.
func Browser(t testing.TB) func(string) error {
	return func(u string) error {
		go func() {
			resp, err := http.Get(u)
			if err != nil {
				t.Logf("browser: %v", err)
				return
			}
			resp.Body.Close()
		}()
		return nil
	}
}

// Issued returns every access and refresh token the AS issued.
func (a *AS) Issued() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for k := range a.access {
		out = append(out, k)
	}
	for k := range a.refresh {
		out = append(out, k)
	}
	return out
}
