package authserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/switchboard-hub/switchboard/internal/fetch"
)

// registration is the RFC 7591 request members the hub reads.
type registration struct {
	RedirectURIs            []string `json:"redirect_uris"`
	ClientName              string   `json:"client_name"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	Scope                   string   `json:"scope"`
	ClientID                string   `json:"client_id"` // CIMD documents name themselves
}

// maxClientName bounds what a client may call itself on the user's screen.
const maxClientName = 80

// validate checks a registration's members: redirect URIs that cannot send the code anywhere
// but the client (RFC 8252, OAuth 2.1 §2.3.1), grant and response types the hub serves.
func (reg *registration) validate() error {
	if len(reg.RedirectURIs) == 0 {
		return errors.New("redirect_uris: required")
	}
	if len(reg.RedirectURIs) > 10 {
		return errors.New("redirect_uris: at most 10")
	}
	for _, u := range reg.RedirectURIs {
		if err := checkRedirectURI(u); err != nil {
			return err
		}
	}
	for _, g := range reg.GrantTypes {
		if g != "authorization_code" && g != "refresh_token" {
			return fmt.Errorf("grant_types: %q is not served; use authorization_code and refresh_token", g)
		}
	}
	for _, t := range reg.ResponseTypes {
		if t != "code" {
			return fmt.Errorf("response_types: %q is not served; use code", t)
		}
	}
	switch reg.TokenEndpointAuthMethod {
	case "", "none", "client_secret_post", "client_secret_basic":
	default:
		return fmt.Errorf("token_endpoint_auth_method: %q is not served; use none, client_secret_post or client_secret_basic", reg.TokenEndpointAuthMethod)
	}
	reg.ClientName = strings.TrimSpace(reg.ClientName)
	if r := []rune(reg.ClientName); len(r) > maxClientName {
		reg.ClientName = string(r[:maxClientName]) + "…"
	}
	return nil
}

// checkRedirectURI accepts https URLs, http on a loopback IP literal or localhost (native
// clients, RFC 8252 §7.3), and private-use schemes of native apps (RFC 8252 §7.1: cursor://…);
// never a fragment, never a scheme that runs code in the browser.
func checkRedirectURI(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return fmt.Errorf("redirect_uri %q: not an absolute URL", raw)
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return fmt.Errorf("redirect_uri %q: must not have a fragment", raw)
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		if u.Host == "" {
			return fmt.Errorf("redirect_uri %q: no host", raw)
		}
		return nil
	case "http":
		if !loopbackHost(u.Hostname()) {
			return fmt.Errorf("redirect_uri %q: http is allowed on loopback only (127.0.0.1, [::1], localhost); use https", raw)
		}
		return nil
	case "javascript", "data", "vbscript", "file", "blob", "about", "ftp", "ws", "wss":
		return fmt.Errorf("redirect_uri %q: scheme %s is not a redirect target", raw, u.Scheme)
	}
	if !strings.Contains(u.Scheme, ".") && !strings.Contains(u.Scheme, "-") && len(u.Scheme) < 4 {
		return fmt.Errorf("redirect_uri %q: a native app's scheme must be its own (e.g. com.example.app:/callback)", raw)
	}
	return nil
}

func loopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(h)
	return err == nil && ip.IsLoopback()
}

// redirectMatches reports whether the redirect_uri of an authorization request is one the
// client registered: exactly, or, for loopback http, the same but for the port (RFC 8252 §7.3:
// native apps listen on an ephemeral port).
func redirectMatches(registered []string, got string) bool {
	if slices.Contains(registered, got) {
		return true
	}
	g, err := url.Parse(got)
	if err != nil || g.Scheme != "http" || !loopbackHost(g.Hostname()) {
		return false
	}
	for _, r := range registered {
		u, err := url.Parse(r)
		if err != nil || u.Scheme != "http" || !loopbackHost(u.Hostname()) {
			continue
		}
		if u.Hostname() == g.Hostname() && u.Path == g.Path && u.RawQuery == g.RawQuery && u.User == nil && g.User == nil {
			return true
		}
	}
	return false
}

// register serves RFC 7591 dynamic registration.
func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		oauthError(w, http.StatusMethodNotAllowed, "invalid_request", "register with POST")
		return
	}
	var reg registration
	if err := json.NewDecoder(io.LimitReader(r.Body, 64<<10)).Decode(&reg); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "the body is not client metadata JSON: "+err.Error())
		return
	}
	if err := reg.validate(); err != nil {
		code := "invalid_client_metadata"
		if strings.HasPrefix(err.Error(), "redirect_uri") {
			code = "invalid_redirect_uri"
		}
		oauthError(w, http.StatusBadRequest, code, err.Error())
		return
	}
	method := reg.TokenEndpointAuthMethod
	if method == "" {
		method = "none"
	}
	c := &Client{ID: randomToken("sbc_")[:28], Name: reg.ClientName, RedirectURIs: reg.RedirectURIs,
		AuthMethod: method, RegisteredAt: s.opts.Now().UTC()}
	var secret string
	if method != "none" {
		secret = randomToken("sbs_")
		c.SecretHash = hashToken(secret)
	}
	s.mu.Lock()
	s.pruneClientsLocked()
	s.st.Clients[c.ID] = c
	s.saveLocked()
	s.mu.Unlock()
	resp := map[string]any{
		"client_id": c.ID, "client_id_issued_at": c.RegisteredAt.Unix(), "redirect_uris": c.RedirectURIs,
		"token_endpoint_auth_method": method, "grant_types": []string{"authorization_code", "refresh_token"},
		"response_types": []string{"code"},
	}
	if c.Name != "" {
		resp["client_name"] = c.Name
	}
	if secret != "" {
		resp["client_secret"] = secret
		resp["client_secret_expires_at"] = 0
	}
	writeJSON(w, http.StatusCreated, resp)
}

// pruneClientsLocked forgets the oldest clients that hold no grant once there are MaxClients.
func (s *Server) pruneClientsLocked() {
	if len(s.st.Clients) < MaxClients {
		return
	}
	held := map[string]bool{}
	for _, g := range s.st.Grants {
		held[g.ClientID] = true
	}
	var idle []*Client
	for _, c := range s.st.Clients {
		if !held[c.ID] {
			idle = append(idle, c)
		}
	}
	slices.SortFunc(idle, func(a, b *Client) int { return a.RegisteredAt.Compare(b.RegisteredAt) })
	for _, c := range idle[:min(len(idle), max(0, len(s.st.Clients)-MaxClients+1))] {
		delete(s.st.Clients, c.ID)
	}
}

// isMetadataURL reports whether a client_id is a Client ID Metadata Document URL: https with a
// path (draft-ietf-oauth-client-id-metadata-document §3).
func isMetadataURL(id string) bool {
	u, err := url.Parse(id)
	return err == nil && u.Scheme == "https" && u.Host != "" && u.Path != "" && u.Path != "/" && u.Fragment == "" && u.User == nil
}

// Bounds of a metadata document fetch.
const (
	maxMetadataDocument = 16 << 10
	metadataTimeout     = 5 * time.Second
	metadataCacheTTL    = 5 * time.Minute
)

// client finds a client by id: registered here, or a metadata document fetched (and cached).
func (s *Server) client(ctx context.Context, id string) (*Client, error) {
	s.mu.Lock()
	c, ok := s.st.Clients[id]
	if !ok {
		if cc, ok := s.cimd[id]; ok && s.opts.Now().Sub(cc.fetchedAt) < metadataCacheTTL {
			c = cc
		}
	}
	s.mu.Unlock()
	if c != nil {
		return c, nil
	}
	if !isMetadataURL(id) {
		return nil, fmt.Errorf("client_id %q is not registered here (register at %s, or use the https URL of a client metadata document)", id, PathRegister)
	}
	if s.opts.NoMetadataDocuments {
		return nil, fmt.Errorf("client_id %q is a client metadata document, which this hub does not fetch ([http] client_metadata_documents = false): register at %s instead", id, PathRegister)
	}
	c, err := s.fetchMetadata(ctx, id)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if len(s.cimd) >= MaxClients {
		clear(s.cimd)
	}
	s.cimd[id] = c
	s.mu.Unlock()
	return c, nil
}

// fetchMetadata reads a Client ID Metadata Document: at most maxMetadataDocument bytes within
// metadataTimeout, no redirect, JSON naming itself by the URL it was fetched from; a public
// client (token_endpoint_auth_method none), since the hub cannot check a key.
func (s *Server) fetchMetadata(ctx context.Context, id string) (*Client, error) {
	ctx, cancel := context.WithTimeout(ctx, metadataTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, id, nil)
	if err != nil {
		return nil, fmt.Errorf("client metadata %s: %w", id, err)
	}
	req.Header.Set("Accept", "application/json")
	hc := *s.opts.HTTP
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("client metadata %s: %w", id, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("client metadata %s: %s", id, resp.Status)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "application/json" && !strings.HasSuffix(mt, "+json") {
		return nil, fmt.Errorf("client metadata %s: content type %q, not JSON", id, mt)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadataDocument+1))
	if err != nil {
		return nil, fmt.Errorf("client metadata %s: %w", id, err)
	}
	if len(body) > maxMetadataDocument {
		return nil, fmt.Errorf("client metadata %s: larger than %d KiB", id, maxMetadataDocument>>10)
	}
	var reg registration
	if err := json.Unmarshal(body, &reg); err != nil {
		return nil, fmt.Errorf("client metadata %s: %w", id, err)
	}
	if reg.ClientID != id {
		return nil, fmt.Errorf("client metadata %s: its client_id is %q, not its own URL", id, reg.ClientID)
	}
	if m := reg.TokenEndpointAuthMethod; m != "" && m != "none" {
		return nil, fmt.Errorf("client metadata %s: token_endpoint_auth_method %q; the hub serves public clients (none) by metadata document", id, m)
	}
	if err := reg.validate(); err != nil {
		return nil, fmt.Errorf("client metadata %s: %w", id, err)
	}
	return &Client{ID: id, Name: reg.ClientName, RedirectURIs: reg.RedirectURIs, AuthMethod: "none",
		MetadataDocument: true, fetchedAt: s.opts.Now()}, nil
}

// MetadataClient is the HTTP client that fetches client metadata documents on a client's word:
// web_fetch's SSRF rules (internal/fetch) on the address actually dialed, so a client_id URL
// cannot point the hub at a loopback, private or link-local (cloud metadata) address. allow
// adds hosts the user trusts (SWITCHBOARD_FETCH_ALLOW's format).
func MetadataClient(allow []string) *http.Client {
	list, err := fetch.ParseAllow(allow)
	if err != nil {
		list, _ = fetch.ParseAllow(nil)
	}
	dialer := &net.Dialer{Timeout: metadataTimeout}
	tr := &http.Transport{
		Proxy:                 nil, // a proxy would dial for us and bypass the address check
		DialContext:           fetch.GuardedDial(dialer, func() *fetch.Allow { return list }, nil),
		TLSHandshakeTimeout:   metadataTimeout,
		ResponseHeaderTimeout: metadataTimeout,
	}
	return &http.Client{Transport: tr, Timeout: metadataTimeout}
}
