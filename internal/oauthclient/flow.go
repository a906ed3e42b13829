package oauthclient

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// Flow signs the hub in to one server: discovery, registration, the user's consent in the
// browser, the token request. Run it once per sign-in.
type Flow struct {
	// Server is the server's name (the grant's key in Store); URL its MCP endpoint.
	Server string
	URL    string
	Config Config
	Store  Store
	// HTTP makes the hub's requests (HTTPClient: SSRF rules); nil: HTTPClient(URL, nil).
	HTTP *http.Client
	// ClientMetadataURL is the hub's Client ID Metadata Document (an https URL with a path);
	// used as the client_id where the authorization server supports CIMD. Empty: not used.
	ClientMetadataURL string
	// Open shows the authorization URL to the user (their browser); it returns at once.
	Open func(authURL string) error
	// Timeout bounds the wait for the user (default 5 minutes).
	Timeout time.Duration
	// Version is the hub's version, announced when registering.
	Version string
}

// Discovery is what the server and its authorization server say about themselves.
type Discovery struct {
	Resource *oauthex.ProtectedResourceMetadata
	Auth     *oauthex.AuthServerMeta
	// Scopes the server's 401 asked for.
	ChallengeScopes []string
}

// probe sends the MCP initialize request without a token and returns the server's 401
// challenges (nil: the server did not ask for authorization).
func (f *Flow) probe(ctx context.Context) ([]oauthex.Challenge, error) {
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"switchboard","version":"sign-in probe"}}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.URL, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := f.HTTP.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reach %s: %w", f.URL, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusUnauthorized {
		return nil, nil
	}
	cs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return nil, fmt.Errorf("the server's WWW-Authenticate header: %w", err)
	}
	if cs == nil {
		cs = []oauthex.Challenge{}
	}
	return cs, nil
}

// Discover finds the protected resource's metadata (RFC 9728: the URL the challenge names,
// then at the endpoint's path, then at the root) and its authorization server's (RFC 8414 and
// OpenID discovery), and refuses an authorization server that does not support PKCE S256.
func (f *Flow) Discover(ctx context.Context, challenges []oauthex.Challenge) (*Discovery, error) {
	d := &Discovery{}
	var metaURL string
	for _, c := range challenges {
		if c.Scheme == "bearer" {
			if u := c.Params["resource_metadata"]; u != "" && metaURL == "" {
				metaURL = u
			}
			if s := c.Params["scope"]; s != "" && d.ChallengeScopes == nil {
				d.ChallengeScopes = strings.Fields(s)
			}
		}
	}
	ru, err := url.Parse(f.URL)
	if err != nil {
		return nil, err
	}
	type cand struct{ meta, resource string }
	var cands []cand
	if metaURL != "" {
		cands = append(cands, cand{metaURL, f.URL})
	}
	atPath := *ru
	atPath.Path = "/.well-known/oauth-protected-resource/" + strings.TrimLeft(ru.Path, "/")
	atPath.RawQuery = ""
	cands = append(cands, cand{atPath.String(), f.URL})
	root := *ru
	root.Path, root.RawQuery = "/.well-known/oauth-protected-resource", ""
	origin := *ru
	origin.Path, origin.RawQuery = "", ""
	cands = append(cands, cand{root.String(), origin.String()})
	var errs []error
	for _, c := range cands {
		prm, err := oauthex.GetProtectedResourceMetadata(ctx, c.meta, c.resource, f.HTTP)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if len(prm.AuthorizationServers) == 0 {
			return nil, fmt.Errorf("the server's resource metadata (%s) names no authorization server", c.meta)
		}
		d.Resource = prm
		break
	}
	if d.Resource == nil {
		return nil, fmt.Errorf("the server asked for authorization but its resource metadata (RFC 9728) could not be used: %w", errors.Join(errs...))
	}
	issuer := d.Resource.AuthorizationServers[0]
	asm, err := auth.GetAuthServerMetadata(ctx, issuer, f.HTTP)
	if err != nil {
		return nil, fmt.Errorf("authorization server %s: %w", issuer, err)
	}
	if asm == nil {
		return nil, fmt.Errorf("authorization server %s publishes no metadata (RFC 8414 or OpenID discovery); the hub does not guess its endpoints, as it could not check PKCE", issuer)
	}
	if !slices.Contains(asm.CodeChallengeMethodsSupported, "S256") {
		return nil, fmt.Errorf("authorization server %s does not support PKCE with S256 (it offers %q); the hub does not sign in without it", issuer, asm.CodeChallengeMethodsSupported)
	}
	if asm.AuthorizationEndpoint == "" || asm.TokenEndpoint == "" {
		return nil, fmt.Errorf("authorization server %s: its metadata lacks authorization_endpoint or token_endpoint", issuer)
	}
	for _, e := range []string{asm.AuthorizationEndpoint, asm.TokenEndpoint, asm.RegistrationEndpoint} {
		if e == "" {
			continue
		}
		if u, err := url.Parse(e); err != nil || (u.Scheme != "https" && u.Scheme != "http") {
			return nil, fmt.Errorf("authorization server %s: endpoint %q is not an http(s) URL", issuer, e)
		}
	}
	d.Auth = asm
	return d, nil
}

// Run signs in: it returns once the grant is stored, the user refused, or ctx or the timeout
// ends.
func (f *Flow) Run(ctx context.Context) (*Grant, error) {
	if f.HTTP == nil {
		hc, err := HTTPClient(f.URL, nil)
		if err != nil {
			return nil, err
		}
		f.HTTP = hc
	}
	if f.Timeout <= 0 {
		f.Timeout = 5 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, f.Timeout)
	defer cancel()
	challenges, err := f.probe(ctx)
	if err != nil {
		return nil, err
	}
	if challenges == nil {
		return nil, fmt.Errorf("server %s answers without asking for authorization: there is nothing to sign in to", f.Server)
	}
	d, err := f.Discover(ctx, challenges)
	if err != nil {
		return nil, err
	}
	// The loopback redirect (RFC 8252 §7.3): an IP literal, not "localhost", on a port of the
	// moment; only this listener's /callback path answers.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("loopback listener for the redirect: %w", err)
	}
	defer ln.Close()
	redirect := fmt.Sprintf("http://%s/callback", ln.Addr())
	cl, err := f.client(ctx, d, redirect)
	if err != nil {
		return nil, err
	}
	scopes := f.Config.Scopes
	if len(scopes) == 0 {
		scopes = d.ChallengeScopes
	}
	if len(scopes) == 0 {
		scopes = d.Resource.ScopesSupported
	}
	// Step-up (a 403 with insufficient_scope since the last sign-in): what the grant had and
	// what the server asked for besides.
	if prev, err := f.Store.Load(ctx, f.Server); err == nil && len(prev.StepUp) > 0 {
		scopes = slices.Clone(scopes)
		for _, s := range slices.Concat(prev.Scopes, prev.StepUp) {
			if !slices.Contains(scopes, s) {
				scopes = append(scopes, s)
			}
		}
	}
	if slices.Contains(d.Auth.ScopesSupported, "offline_access") && !slices.Contains(scopes, "offline_access") {
		scopes = append(slices.Clone(scopes), "offline_access")
	}
	cfg := &oauth2.Config{
		ClientID:    cl.ClientID,
		Endpoint:    oauth2.Endpoint{AuthURL: d.Auth.AuthorizationEndpoint, TokenURL: d.Auth.TokenEndpoint},
		RedirectURL: redirect,
		Scopes:      scopes,
	}
	verifier := oauth2.GenerateVerifier()
	state := rand.Text()
	resource := d.Resource.Resource
	authURL := cfg.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", resource))

	type result struct {
		code string
		err  error
	}
	got := make(chan result, 1)
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/callback" {
			http.NotFound(w, r)
			return
		}
		q := r.URL.Query()
		// A redirect that does not carry this sign-in's state is not the answer to it (a forged
		// or stale link): it is refused and the hub keeps waiting for the real one.
		if subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(state)) != 1 {
			page(w, http.StatusBadRequest, "This is not the sign-in Switchboard started (state mismatch). Nothing was done.")
			return
		}
		res := result{}
		switch iss := q.Get("iss"); {
		case q.Get("error") != "":
			res.err = fmt.Errorf("the authorization server refused: %s %s", q.Get("error"), q.Get("error_description"))
		case d.Auth.AuthorizationResponseIssParameterSupported && iss == "":
			res.err = fmt.Errorf("the authorization response has no iss, though %s says it sends one (RFC 9207): refused", d.Auth.Issuer)
		case iss != "" && iss != d.Auth.Issuer:
			res.err = fmt.Errorf("the authorization response comes from issuer %q, not %q (RFC 9207 mix-up): refused", iss, d.Auth.Issuer)
		case q.Get("code") == "":
			res.err = errors.New("the authorization response has no code")
		default:
			res.code = q.Get("code")
		}
		if res.err != nil {
			page(w, http.StatusBadRequest, "Sign-in failed: "+res.err.Error())
		} else {
			page(w, http.StatusOK, "Switchboard is signed in to "+f.Server+". You can close this tab.")
		}
		select {
		case got <- res:
		default: // answered already: a replayed redirect changes nothing
		}
	})}
	go func() { _ = srv.Serve(ln) }()
	defer func() {
		// Shutdown, not Close: the browser gets its page before the listener goes.
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if f.Open != nil {
		if err := f.Open(authURL); err != nil {
			return nil, err
		}
	}
	var res result
	select {
	case res = <-got:
	case <-ctx.Done():
		return nil, fmt.Errorf("sign-in to %s: no answer from the browser: %w", f.Server, ctx.Err())
	}
	if res.err != nil {
		return nil, res.err
	}
	g := &Grant{
		Resource: resource, Issuer: d.Auth.Issuer, TokenEndpoint: d.Auth.TokenEndpoint,
		RevocationEndpoint: d.Auth.RevocationEndpoint, ClientID: cl.ClientID, ClientSecret: cl.ClientSecret,
		AuthMethod: cl.AuthMethod, Scopes: scopes,
	}
	tr, err := tokenRequest(ctx, f.HTTP, g, url.Values{
		"grant_type":    {"authorization_code"},
		"code":          {res.code},
		"redirect_uri":  {redirect},
		"code_verifier": {verifier},
		"resource":      {resource},
	})
	if err != nil {
		return nil, fmt.Errorf("token request: %w", err)
	}
	if err := tr.apply(g, time.Now()); err != nil {
		return nil, err
	}
	if err := f.Store.Save(ctx, f.Server, g); err != nil {
		return nil, fmt.Errorf("store the grant in the keyring: %w", err)
	}
	return g, nil
}

// client is how the hub identifies itself to the authorization server: the client the user
// configured (oauth.client_id) when there is one, else its Client ID Metadata Document where the
// authorization server supports it, else one registered now (RFC 7591).
type client struct{ ClientID, ClientSecret, AuthMethod string }

func (f *Flow) client(ctx context.Context, d *Discovery, redirect string) (client, error) {
	switch {
	case f.ClientMetadataURL != "" && d.Auth.ClientIDMetadataDocumentSupported && f.Config.ClientID == "":
		return client{ClientID: f.ClientMetadataURL, AuthMethod: "none"}, nil
	case f.Config.ClientID != "":
		c := client{ClientID: f.Config.ClientID, ClientSecret: f.Config.ClientSecret, AuthMethod: "none"}
		if c.ClientSecret != "" {
			c.AuthMethod = "client_secret_basic"
			if slices.Contains(d.Auth.TokenEndpointAuthMethodsSupported, "client_secret_post") && !slices.Contains(d.Auth.TokenEndpointAuthMethodsSupported, "client_secret_basic") {
				c.AuthMethod = "client_secret_post"
			}
		}
		return c, nil
	case d.Auth.RegistrationEndpoint != "":
		meta := &oauthex.ClientRegistrationMetadata{
			RedirectURIs:            []string{redirect},
			TokenEndpointAuthMethod: "none",
			GrantTypes:              []string{"authorization_code", "refresh_token"},
			ResponseTypes:           []string{"code"},
			ClientName:              "Switchboard",
			ClientURI:               "https://github.com/switchboard-hub/switchboard",
			SoftwareID:              "switchboard",
			SoftwareVersion:         f.Version,
			ApplicationType:         "native",
		}
		r, err := oauthex.RegisterClient(ctx, d.Auth.RegistrationEndpoint, meta, f.HTTP)
		if err != nil {
			return client{}, fmt.Errorf("register the hub with %s (RFC 7591): %w", d.Auth.Issuer, err)
		}
		m := r.TokenEndpointAuthMethod
		if m == "" {
			m = "none"
			if r.ClientSecret != "" {
				m = "client_secret_basic"
			}
		}
		return client{ClientID: r.ClientID, ClientSecret: r.ClientSecret, AuthMethod: m}, nil
	}
	return client{}, fmt.Errorf("authorization server %s neither accepts a Client ID Metadata Document from the hub nor registers clients (RFC 7591): register Switchboard there and set oauth = { client_id = \"…\" } (and client_secret = \"${secret:NAME}\" if it has one) in the server's [[servers]] entry", d.Auth.Issuer)
}

// tokenResponse is a token endpoint's answer (RFC 6749 §5.1).
type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	RefreshToken string `json:"refresh_token"`
	ExpiresIn    int64  `json:"expires_in"`
	Scope        string `json:"scope"`
}

// apply puts a token response into g, refusing a token that says it is for another resource.
func (tr *tokenResponse) apply(g *Grant, now time.Time) error {
	if tr.AccessToken == "" {
		return errors.New("token request: no access token in the answer")
	}
	if tr.TokenType != "" && !strings.EqualFold(tr.TokenType, "bearer") {
		return fmt.Errorf("token request: token type %q; the hub sends bearer tokens only", tr.TokenType)
	}
	if aud := jwtAudience(tr.AccessToken); len(aud) > 0 && allURLs(aud) && !oauthex.MatchesResource(aud, g.Resource) {
		return fmt.Errorf("the authorization server issued a token for %q, not for %s (RFC 8707): refused", aud, g.Resource)
	}
	g.AccessToken, g.TokenType, g.Obtained = tr.AccessToken, tr.TokenType, now
	g.Expiry = time.Time{}
	if tr.ExpiresIn > 0 {
		g.Expiry = now.Add(time.Duration(tr.ExpiresIn) * time.Second)
	}
	if tr.RefreshToken != "" { // rotation: a new refresh token replaces the old one
		g.RefreshToken = tr.RefreshToken
	}
	if tr.Scope != "" {
		g.Scopes = strings.Fields(tr.Scope)
	}
	return nil
}

// TokenError is a token endpoint's refusal (RFC 6749 §5.2).
type TokenError struct {
	Status      int
	Code        string
	Description string
}

func (e *TokenError) Error() string {
	s := fmt.Sprintf("the authorization server answered %d", e.Status)
	if e.Code != "" {
		s += " " + e.Code
	}
	if e.Description != "" {
		s += ": " + e.Description
	}
	return s
}

// tokenRequest posts form to g's token endpoint with the client's authentication.
func tokenRequest(ctx context.Context, hc *http.Client, g *Grant, form url.Values) (*tokenResponse, error) {
	form = cloneValues(form)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.TokenEndpoint, nil)
	if err != nil {
		return nil, err
	}
	switch g.AuthMethod {
	case "client_secret_basic":
		req.SetBasicAuth(url.QueryEscape(g.ClientID), url.QueryEscape(g.ClientSecret))
	case "client_secret_post":
		form.Set("client_id", g.ClientID)
		form.Set("client_secret", g.ClientSecret)
	default:
		form.Set("client_id", g.ClientID)
	}
	body := form.Encode()
	req.Body = io.NopCloser(strings.NewReader(body))
	req.ContentLength = int64(len(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		te := &TokenError{Status: resp.StatusCode}
		var e struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}
		if json.Unmarshal(b, &e) == nil {
			te.Code, te.Description = e.Error, e.Description
		}
		return nil, te
	}
	var tr tokenResponse
	if err := json.Unmarshal(b, &tr); err != nil {
		return nil, fmt.Errorf("the token endpoint's answer is not JSON: %w", err)
	}
	return &tr, nil
}

func cloneValues(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = slices.Clone(vs)
	}
	return out
}

// jwtAudience is the aud claim of a token that is a JWT, or nil. The hub treats tokens as
// opaque; a JWT that names another resource is refused all the same.
func jwtAudience(tok string) []string {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return nil
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil
	}
	var c struct {
		Aud json.RawMessage `json:"aud"`
	}
	if json.Unmarshal(b, &c) != nil || len(c.Aud) == 0 {
		return nil
	}
	var one string
	if json.Unmarshal(c.Aud, &one) == nil {
		return []string{one}
	}
	var many []string
	_ = json.Unmarshal(c.Aud, &many)
	return many
}

func allURLs(ss []string) bool {
	for _, s := range ss {
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return false
		}
	}
	return true
}

func page(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	var b bytes.Buffer
	b.WriteString("<!doctype html><meta charset=utf-8><title>Switchboard</title><p>")
	b.WriteString(html.EscapeString(msg))
	_, _ = w.Write(b.Bytes())
}
