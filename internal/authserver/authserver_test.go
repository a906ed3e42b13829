package authserver

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// harness is the authorization server on a real HTTP listener, with a user who answers each
// request from the answers channel.
type harness struct {
	t       *testing.T
	as      *Server
	srv     *httptest.Server
	asked   chan Request
	answers chan Decision
	mu      sync.Mutex
	offset  time.Duration
}

func newHarness(t *testing.T, tweak ...func(*Options)) *harness {
	t.Helper()
	h := &harness{t: t, asked: make(chan Request, 4), answers: make(chan Decision, 4)}
	o := Options{
		Dir:    t.TempDir(),
		Scopes: func() []string { return []string{"files", "process", "web"} },
		Approve: func(ctx context.Context, r Request) Decision {
			h.asked <- r
			select {
			case d := <-h.answers:
				return d
			case <-ctx.Done():
				return Decision{Reason: "no answer"}
			}
		},
		Now: func() time.Time {
			h.mu.Lock()
			defer h.mu.Unlock()
			return time.Now().Add(h.offset)
		},
		WaitStep: 5 * time.Second,
	}
	for _, f := range tweak {
		f(&o)
	}
	as, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	h.as = as
	h.srv = httptest.NewServer(as.Handler())
	t.Cleanup(func() { h.srv.Close(); as.Close() })
	return h
}

// advance moves the server's clock.
func (h *harness) advance(d time.Duration) {
	h.mu.Lock()
	h.offset += d
	h.mu.Unlock()
}

func (h *harness) resource() string { return h.srv.URL + "/mcp" }

func (h *harness) postJSON(path string, body any) (int, map[string]any) {
	h.t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(h.srv.URL+path, "application/json", strings.NewReader(string(b)))
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func (h *harness) postForm(path string, form url.Values) (int, map[string]any) {
	h.t.Helper()
	resp, err := http.PostForm(h.srv.URL+path, form)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// register registers a public client with one loopback redirect URI.
func (h *harness) register(redirect string) string {
	h.t.Helper()
	code, out := h.postJSON(PathRegister, map[string]any{"redirect_uris": []string{redirect}, "client_name": "Test Client",
		"token_endpoint_auth_method": "none", "grant_types": []string{"authorization_code", "refresh_token"}})
	if code != http.StatusCreated {
		h.t.Fatalf("register: %d %v", code, out)
	}
	return out["client_id"].(string)
}

type pkce struct{ verifier, challenge string }

func newPKCE() pkce {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	v := base64.RawURLEncoding.EncodeToString(b)
	sum := sha256.Sum256([]byte(v))
	return pkce{v, base64.RawURLEncoding.EncodeToString(sum[:])}
}

var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// authorizeURL is an authorization request with PKCE S256, for the hub's resource.
func (h *harness) authorizeURL(clientID, redirect string, p pkce, extra url.Values) string {
	q := url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {redirect},
		"code_challenge": {p.challenge}, "code_challenge_method": {"S256"}, "state": {"st-1"}, "resource": {h.resource()}}
	for k, v := range extra {
		q[k] = v
	}
	return h.srv.URL + PathAuthorize + "?" + q.Encode()
}

// get loads u in a browser that does not follow redirects.
func get(t *testing.T, u string) *http.Response {
	t.Helper()
	resp, err := noRedirect.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// authorize runs the authorization request with the user answering d, and returns where the
// browser is sent.
func (h *harness) authorize(u string, d Decision) *url.URL {
	h.t.Helper()
	done := make(chan *http.Response, 1)
	go func() { done <- get(h.t, u) }()
	select {
	case <-h.asked:
	case resp := <-done:
		h.t.Fatalf("the authorization ended without asking the user: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	case <-time.After(5 * time.Second):
		h.t.Fatal("the user was never asked")
	}
	h.answers <- d
	resp := <-done
	if resp.StatusCode != http.StatusFound {
		h.t.Fatalf("authorize: %d, want a redirect", resp.StatusCode)
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		h.t.Fatal(err)
	}
	return loc
}

// tokens runs the whole flow and returns the token response.
func (h *harness) tokens(clientID, redirect string, d Decision, extra url.Values) map[string]any {
	h.t.Helper()
	p := newPKCE()
	loc := h.authorize(h.authorizeURL(clientID, redirect, p, extra), d)
	code := loc.Query().Get("code")
	if code == "" {
		h.t.Fatalf("no code in %s", loc)
	}
	st, out := h.postForm(PathToken, url.Values{"grant_type": {"authorization_code"}, "code": {code}, "client_id": {clientID},
		"redirect_uri": {redirect}, "code_verifier": {p.verifier}, "resource": {h.resource()}})
	if st != http.StatusOK {
		h.t.Fatalf("token: %d %v", st, out)
	}
	return out
}

const redirect = "http://127.0.0.1:33333/callback"

func TestMetadataNamesTheEndpoints(t *testing.T) {
	h := newHarness(t)
	resp, err := http.Get(h.srv.URL + PathResourceMetadata + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	var prm map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&prm)
	resp.Body.Close()
	if prm["resource"] != h.resource() || prm["authorization_servers"].([]any)[0] != h.srv.URL {
		t.Fatalf("resource metadata %v", prm)
	}
	resp, err = http.Get(h.srv.URL + PathServerMetadata)
	if err != nil {
		t.Fatal(err)
	}
	var asm map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&asm)
	resp.Body.Close()
	if asm["issuer"] != h.srv.URL || asm["token_endpoint"] != h.srv.URL+PathToken || asm["registration_endpoint"] != h.srv.URL+PathRegister {
		t.Fatalf("server metadata %v", asm)
	}
	if m := asm["code_challenge_methods_supported"].([]any); len(m) != 1 || m[0] != "S256" {
		t.Fatalf("code_challenge_methods_supported %v, want S256 only", m)
	}
}

func TestCodeFlowNarrowedScopesAndRefreshRotation(t *testing.T) {
	h := newHarness(t)
	id := h.register(redirect)
	p := newPKCE()
	done := make(chan *http.Response, 1)
	go func() { done <- get(t, h.authorizeURL(id, redirect, p, url.Values{"scope": {"files process"}})) }()
	req := <-h.asked
	if req.ClientName != "Test Client" || req.Device != "127.0.0.1" || !slices.Equal(req.Scopes, []string{"files", "process"}) {
		t.Fatalf("the user was asked %+v", req)
	}
	h.answers <- Decision{Allow: true, Scopes: []string{"files", ScopeReadOnly}}
	resp := <-done
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if loc.Query().Get("state") != "st-1" || loc.Query().Get("iss") != h.srv.URL || !strings.HasPrefix(loc.String(), redirect) {
		t.Fatalf("redirect %s", loc)
	}
	st, tok := h.postForm(PathToken, url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")},
		"client_id": {id}, "redirect_uri": {redirect}, "code_verifier": {p.verifier}, "resource": {h.resource()}})
	if st != http.StatusOK || tok["scope"] != "files readonly" {
		t.Fatalf("token: %d %v", st, tok)
	}
	ident, err := h.as.Verify(tok["access_token"].(string), h.resource())
	if err != nil || !slices.Equal(ident.Scopes, []string{"files", ScopeReadOnly}) || ident.ClientName != "Test Client" {
		t.Fatalf("verify: %+v %v", ident, err)
	}
	// Refresh: new tokens, the old refresh token is spent.
	st, tok2 := h.postForm(PathToken, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok["refresh_token"].(string)}, "client_id": {id}})
	if st != http.StatusOK || tok2["refresh_token"] == tok["refresh_token"] || tok2["access_token"] == tok["access_token"] {
		t.Fatalf("refresh: %d %v", st, tok2)
	}
	if _, err := h.as.Verify(tok2["access_token"].(string), h.resource()); err != nil {
		t.Fatalf("the refreshed token: %v", err)
	}
	// The spent refresh token again: someone copied it. The grant ends, the new tokens too.
	st, out := h.postForm(PathToken, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok["refresh_token"].(string)}, "client_id": {id}})
	if st != http.StatusBadRequest || out["error"] != "invalid_grant" {
		t.Fatalf("replayed refresh: %d %v", st, out)
	}
	if _, err := h.as.Verify(tok2["access_token"].(string), h.resource()); !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("after a refresh replay the grant's tokens still work: %v", err)
	}
	if len(h.as.Grants()) != 0 {
		t.Fatalf("grants after a replay: %v", h.as.Grants())
	}
}

func TestPKCEMissingPlainOrWrongVerifierIsRefused(t *testing.T) {
	h := newHarness(t)
	id := h.register(redirect)
	p := newPKCE()
	for name, q := range map[string]url.Values{
		"missing":                      {"code_challenge": {""}, "code_challenge_method": {""}},
		"plain":                        {"code_challenge_method": {"plain"}},
		"no method (plain by default)": {"code_challenge_method": {""}},
	} {
		resp := get(t, h.authorizeURL(id, redirect, p, q))
		loc, _ := url.Parse(resp.Header.Get("Location"))
		if resp.StatusCode != http.StatusFound || loc.Query().Get("error") != "invalid_request" || loc.Query().Get("code") != "" {
			t.Errorf("%s: %d %s", name, resp.StatusCode, loc)
		}
	}
	select {
	case r := <-h.asked:
		t.Fatalf("a request without PKCE S256 reached the user: %+v", r)
	default:
	}
	// A code obtained with a challenge, exchanged without the verifier, then with a wrong one.
	loc := h.authorize(h.authorizeURL(id, redirect, p, nil), Decision{Allow: true})
	code := loc.Query().Get("code")
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "client_id": {id}, "redirect_uri": {redirect}}
	if st, out := h.postForm(PathToken, form); st != http.StatusBadRequest || out["error"] != "invalid_grant" {
		t.Fatalf("no verifier: %d %v", st, out)
	}
	form.Set("code_verifier", newPKCE().verifier)
	if st, out := h.postForm(PathToken, form); st != http.StatusBadRequest || out["error"] != "invalid_grant" {
		t.Fatalf("wrong verifier: %d %v", st, out)
	}
	// The code is spent by the failures: no guessing the verifier.
	form.Set("code_verifier", p.verifier)
	if st, out := h.postForm(PathToken, form); st != http.StatusBadRequest {
		t.Fatalf("the right verifier after wrong ones: %d %v", st, out)
	}
}

func TestAuthorizationCodeReplayRevokesItsGrant(t *testing.T) {
	h := newHarness(t)
	var revoked []string // OnRevoke: the MCP endpoint closes the grant's open streams by it
	defer h.as.OnRevoke(func(g string) { revoked = append(revoked, g) })()
	id := h.register(redirect)
	p := newPKCE()
	loc := h.authorize(h.authorizeURL(id, redirect, p, nil), Decision{Allow: true})
	form := url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")}, "client_id": {id},
		"redirect_uri": {redirect}, "code_verifier": {p.verifier}}
	st, tok := h.postForm(PathToken, form)
	if st != http.StatusOK {
		t.Fatalf("first exchange: %d %v", st, tok)
	}
	st, out := h.postForm(PathToken, form)
	if st != http.StatusBadRequest || out["error"] != "invalid_grant" {
		t.Fatalf("replay: %d %v", st, out)
	}
	if _, err := h.as.Verify(tok["access_token"].(string), h.resource()); err == nil {
		t.Fatal("the tokens of a replayed code still work")
	}
	if len(revoked) != 1 || revoked[0] == "" {
		t.Errorf("OnRevoke heard %v, want the replayed code's grant once", revoked)
	}
}

func TestRedirectURIMustBeRegisteredAndNeverOpen(t *testing.T) {
	h := newHarness(t)
	id := h.register(redirect)
	p := newPKCE()
	for name, u := range map[string]string{
		"not registered":           h.authorizeURL(id, "https://evil.example/cb", p, nil),
		"another loopback path":    h.authorizeURL(id, "http://127.0.0.1:33333/other", p, nil),
		"unknown client":           h.authorizeURL("nobody", "https://evil.example/cb", p, nil),
		"unknown client, bad code": h.authorizeURL("nobody", "https://evil.example/cb", p, url.Values{"response_type": {"token"}}),
	} {
		resp := get(t, u)
		if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" {
			t.Errorf("%s: %d Location=%q, want 400 and no redirect", name, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	// A loopback redirect on another port is the same native client (RFC 8252 §7.3).
	loc := h.authorize(h.authorizeURL(id, "http://127.0.0.1:40000/callback", p, nil), Decision{Allow: true})
	if loc.Host != "127.0.0.1:40000" || loc.Query().Get("code") == "" {
		t.Fatalf("loopback on another port: %s", loc)
	}
	// Registration refuses redirect URIs that could send a code elsewhere.
	for _, bad := range []string{"http://evil.example/cb", "javascript:alert(1)", "https://ok.example/cb#frag", "data:text/html,x"} {
		st, out := h.postJSON(PathRegister, map[string]any{"redirect_uris": []string{bad}})
		if st != http.StatusBadRequest || out["error"] != "invalid_redirect_uri" {
			t.Errorf("register %q: %d %v", bad, st, out)
		}
	}
}

func TestTokenForAnotherResourceIsRefused(t *testing.T) {
	h := newHarness(t)
	id := h.register(redirect)
	p := newPKCE()
	resp := get(t, h.authorizeURL(id, redirect, p, url.Values{"resource": {"https://other.example/mcp"}}))
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if loc.Query().Get("error") != "invalid_target" {
		t.Fatalf("authorize for another resource: %d %s", resp.StatusCode, loc)
	}
	loc = h.authorize(h.authorizeURL(id, redirect, p, nil), Decision{Allow: true})
	form := url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")}, "client_id": {id},
		"redirect_uri": {redirect}, "code_verifier": {p.verifier}, "resource": {"https://other.example/mcp"}}
	if st, out := h.postForm(PathToken, form); st != http.StatusBadRequest || out["error"] != "invalid_target" {
		t.Fatalf("token for another resource: %d %v", st, out)
	}
	tok := h.tokens(id, redirect, Decision{Allow: true}, nil)
	if _, err := h.as.Verify(tok["access_token"].(string), "https://other.example/mcp"); !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("a token presented to another resource: %v", err)
	}
}

func TestExpiredAndRevokedTokensAreRefused(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.AccessTTL = time.Minute })
	id := h.register(redirect)
	tok := h.tokens(id, redirect, Decision{Allow: true}, nil)
	access := tok["access_token"].(string)
	if _, err := h.as.Verify(access, h.resource()); err != nil {
		t.Fatal(err)
	}
	h.advance(2 * time.Minute)
	if _, err := h.as.Verify(access, h.resource()); !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("an expired token: %v", err)
	}
	st, tok2 := h.postForm(PathToken, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok["refresh_token"].(string)}, "client_id": {id}})
	if st != http.StatusOK {
		t.Fatalf("refresh after expiry: %d %v", st, tok2)
	}
	grants := h.as.Grants()
	if len(grants) != 1 || grants[0].LastUsed.IsZero() {
		t.Fatalf("grants %+v", grants)
	}
	if err := h.as.Revoke(grants[0].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := h.as.Verify(tok2["access_token"].(string), h.resource()); !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("a revoked grant's token: %v", err)
	}
	if st, _ := h.postForm(PathToken, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok2["refresh_token"].(string)}, "client_id": {id}}); st != http.StatusBadRequest {
		t.Fatalf("a revoked grant's refresh: %d", st)
	}
	if err := h.as.Revoke(grants[0].ID); !errors.Is(err, ErrUnknownGrant) {
		t.Fatalf("revoking twice: %v", err)
	}
}

func TestScopeEscalationIsRefused(t *testing.T) {
	h := newHarness(t)
	id := h.register(redirect)
	p := newPKCE()
	resp := get(t, h.authorizeURL(id, redirect, p, url.Values{"scope": {"files admin"}}))
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if loc.Query().Get("error") != "invalid_scope" {
		t.Fatalf("an unknown scope: %s", loc)
	}
	tok := h.tokens(id, redirect, Decision{Allow: true, Scopes: []string{"files"}}, url.Values{"scope": {"files process"}})
	st, out := h.postForm(PathToken, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok["refresh_token"].(string)},
		"client_id": {id}, "scope": {"files process"}})
	if st != http.StatusBadRequest || out["error"] != "invalid_scope" {
		t.Fatalf("a refresh widening the grant: %d %v", st, out)
	}
}

func TestDeniedClientGetsNoCode(t *testing.T) {
	h := newHarness(t)
	id := h.register(redirect)
	loc := h.authorize(h.authorizeURL(id, redirect, newPKCE(), nil), Decision{Reason: "declined on the dashboard"})
	q := loc.Query()
	if q.Get("error") != "access_denied" || q.Get("code") != "" || q.Get("state") != "st-1" {
		t.Fatalf("denied: %s", loc)
	}
	if len(h.as.Grants()) != 0 {
		t.Fatal("a denied client has a grant")
	}
}

func TestBrowserWaitsForTheAnswerAcrossPageLoads(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.WaitStep = 100 * time.Millisecond })
	id := h.register(redirect)
	resp, err := noRedirect.Get(h.authorizeURL(id, redirect, newPKCE(), nil))
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), "Waiting for your answer") {
		t.Fatalf("first load: %d %s", resp.StatusCode, page)
	}
	i := strings.Index(string(page), PathAuthorizeWait)
	next := strings.ReplaceAll(string(page[i:i+strings.IndexByte(string(page[i:]), '"')]), "&amp;", "&")
	<-h.asked
	h.answers <- Decision{Allow: true}
	var loc string
	for range 50 {
		r := get(t, h.srv.URL+next)
		if r.StatusCode == http.StatusFound {
			loc = r.Header.Get("Location")
			break
		}
	}
	if !strings.Contains(loc, "code=") {
		t.Fatalf("the waiting page never went on to the client: %q", loc)
	}
	// The code goes to one page load only.
	if r := get(t, h.srv.URL+next); r.StatusCode != http.StatusNotFound {
		t.Fatalf("the wait page after the redirect: %d", r.StatusCode)
	}
}

func TestGrantsFileHoldsHashesOnlyAndSurvivesRestart(t *testing.T) {
	h := newHarness(t)
	st, reg := h.postJSON(PathRegister, map[string]any{"redirect_uris": []string{redirect}, "client_name": "Confidential",
		"token_endpoint_auth_method": "client_secret_post"})
	if st != http.StatusCreated || reg["client_secret"] == nil {
		t.Fatalf("register: %d %v", st, reg)
	}
	id, secret := reg["client_id"].(string), reg["client_secret"].(string)
	p := newPKCE()
	loc := h.authorize(h.authorizeURL(id, redirect, p, nil), Decision{Allow: true})
	form := url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")}, "client_id": {id},
		"redirect_uri": {redirect}, "code_verifier": {p.verifier}}
	if st, out := h.postForm(PathToken, form); st != http.StatusUnauthorized || out["error"] != "invalid_client" {
		t.Fatalf("a confidential client without its secret: %d %v", st, out)
	}
	loc = h.authorize(h.authorizeURL(id, redirect, p, nil), Decision{Allow: true})
	form.Set("code", loc.Query().Get("code"))
	form.Set("client_secret", secret)
	st, tok := h.postForm(PathToken, form)
	if st != http.StatusOK {
		t.Fatalf("token: %d %v", st, tok)
	}
	b, err := os.ReadFile(filepath.Join(h.as.opts.Dir, "grants.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{tok["access_token"].(string), tok["refresh_token"].(string), secret, loc.Query().Get("code")} {
		if strings.Contains(string(b), secret) {
			t.Fatalf("grants.json holds a token or secret in plain text")
		}
	}
	if fi, _ := os.Stat(filepath.Join(h.as.opts.Dir, "grants.json")); fi.Mode().Perm() != 0o600 {
		t.Fatalf("grants.json mode %v, want 0600", fi.Mode().Perm())
	}
	again, err := New(Options{Dir: h.as.opts.Dir, Approve: h.as.opts.Approve})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if _, err := again.Verify(tok["access_token"].(string), h.resource()); err != nil {
		t.Fatalf("after a restart: %v", err)
	}
}

// cimdServer serves a client metadata document over TLS at /client.json; doc gets its URL.
func cimdServer(t *testing.T, doc func(id string) map[string]any) (*httptest.Server, string) {
	t.Helper()
	var id string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/client.json" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(doc(id))
	}))
	t.Cleanup(srv.Close)
	id = srv.URL + "/client.json"
	return srv, id
}

func TestClientIDMetadataDocument(t *testing.T) {
	doc, id := cimdServer(t, func(id string) map[string]any {
		return map[string]any{"client_id": id, "client_name": "Metadata Client", "redirect_uris": []string{redirect},
			"token_endpoint_auth_method": "none"}
	})
	h := newHarness(t, func(o *Options) { o.HTTP = doc.Client() }) // trusts the test server's certificate and address
	tok := h.tokens(id, redirect, Decision{Allow: true}, nil)
	ident, err := h.as.Verify(tok["access_token"].(string), h.resource())
	if err != nil || ident.ClientID != id || ident.ClientName != "Metadata Client" {
		t.Fatalf("verify: %+v %v", ident, err)
	}
	// Its redirect URIs bind it like a registered client's.
	if resp := get(t, h.authorizeURL(id, "https://evil.example/cb", newPKCE(), nil)); resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" {
		t.Fatalf("unregistered redirect for a metadata client: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// With documents off (a hub that cannot reach where clients publish them) the metadata offers
// none, so clients register, and a document's URL as client_id is refused with that fix, unfetched.
func TestClientIDMetadataDocumentsOff(t *testing.T) {
	fetched := 0
	doc, id := cimdServer(t, func(id string) map[string]any {
		fetched++
		return map[string]any{"client_id": id, "redirect_uris": []string{redirect}, "token_endpoint_auth_method": "none"}
	})
	h := newHarness(t, func(o *Options) { o.HTTP, o.NoMetadataDocuments = doc.Client(), true })
	resp, err := http.Get(h.srv.URL + PathServerMetadata)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var md map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&md); err != nil || md["client_id_metadata_document_supported"] != false || md["registration_endpoint"] == nil {
		t.Fatalf("metadata with documents off: %v %v", md, err)
	}
	page, err := http.Get(h.authorizeURL(id, redirect, newPKCE(), nil))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(page.Body)
	page.Body.Close()
	if page.StatusCode != http.StatusBadRequest || page.Header.Get("Location") != "" || !strings.Contains(string(body), "client_metadata_documents") || fetched != 0 {
		t.Fatalf("a document's URL with documents off: %d %q, fetched %d times", page.StatusCode, body, fetched)
	}
	if id := h.register(redirect); h.tokens(id, redirect, Decision{Allow: true}, nil)["access_token"] == nil {
		t.Fatal("a registered client cannot sign in with documents off")
	}
}

func TestClientIDMetadataDocumentMustNameItselfAndStayOffInternalAddresses(t *testing.T) {
	doc, id := cimdServer(t, func(string) map[string]any {
		return map[string]any{"client_id": "https://someone-else.example/client.json", "redirect_uris": []string{redirect}}
	})
	h := newHarness(t, func(o *Options) { o.HTTP = doc.Client() })
	if resp := get(t, h.authorizeURL(id, redirect, newPKCE(), nil)); resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" {
		t.Fatalf("a document naming another client: %d", resp.StatusCode)
	}
	// With the product's client (SSRF rules), a client_id URL on a loopback address is not fetched.
	_, id2 := cimdServer(t, func(id string) map[string]any {
		return map[string]any{"client_id": id, "redirect_uris": []string{redirect}}
	})
	h2 := newHarness(t)
	if _, err := h2.as.client(context.Background(), id2); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Fatalf("a metadata document on loopback: %v, want refused as loopback", err)
	}
}

// Registration is open to anyone who reaches the endpoint: the clients kept stay bounded, the
// oldest without a grant forgotten first, and a client holding a grant is never dropped.
func TestRegisteredClientsStayBounded(t *testing.T) {
	h := newHarness(t)
	id := h.register(redirect)
	h.tokens(id, redirect, Decision{Allow: true}, nil)
	for range MaxClients + 20 {
		h.register(redirect)
	}
	h.as.mu.Lock()
	n := len(h.as.st.Clients)
	_, kept := h.as.st.Clients[id]
	h.as.mu.Unlock()
	if n > MaxClients || !kept {
		t.Fatalf("%d clients kept (max %d); the one with a grant kept: %t", n, MaxClients, kept)
	}
}

// RFC 7009: a client ends its own grant with one of its tokens; another client's token is left
// alone (the answer is 200 either way, as the RFC asks).
func TestClientRevokesItsOwnGrantOnly(t *testing.T) {
	h := newHarness(t)
	a, b := h.register(redirect), h.register(redirect)
	tokA := h.tokens(a, redirect, Decision{Allow: true}, nil)
	tokB := h.tokens(b, redirect, Decision{Allow: true}, nil)
	if st, _ := h.postForm(PathRevoke, url.Values{"token": {tokB["refresh_token"].(string)}, "client_id": {a}}); st != http.StatusOK {
		t.Fatalf("revoke: %d", st)
	}
	if _, err := h.as.Verify(tokB["access_token"].(string), h.resource()); err != nil {
		t.Fatalf("client A revoked client B's grant: %v", err)
	}
	if st, _ := h.postForm(PathRevoke, url.Values{"token": {tokA["access_token"].(string)}, "client_id": {a}}); st != http.StatusOK {
		t.Fatalf("revoke: %d", st)
	}
	if _, err := h.as.Verify(tokA["access_token"].(string), h.resource()); !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("a grant its client revoked: %v", err)
	}
}
