package oauthclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// Transport adds the server's access token to its requests (to the grant's resource origin
// only), refreshes the token before it expires and once on a 401 (rotating the refresh token),
// and saves every new token in the Store. A request the server refuses without a usable grant
// fails with *NeedsSignIn, after OnSignIn is told.
type Transport struct {
	Server string
	// URL is the server's configured endpoint; a grant for another resource is not used.
	URL   string
	Store Store
	// HTTP makes the token requests (HTTPClient); Base carries the server's own requests.
	HTTP *http.Client
	Base http.RoundTripper
	// OnSignIn is called when only the user can fix it (no grant, refresh refused).
	OnSignIn func(reason string)
	// Now is the clock (tests); nil: time.Now.
	Now func() time.Time

	mu      sync.Mutex
	grant   *Grant
	loaded  bool
	loadErr error
	has     atomic.Bool // grant != nil, read without mu (a refresh holds mu over the network)
}

func (t *Transport) setGrantLocked(g *Grant) {
	t.grant = g
	t.has.Store(g != nil)
}

// SignedIn reports whether the transport holds a grant for the server now (it read one from the
// store at the server's first 401, or refreshed it). It never waits.
func (t *Transport) SignedIn() bool { return t.has.Load() }

func (t *Transport) now() time.Time {
	if t.Now != nil {
		return t.Now()
	}
	return time.Now()
}

// current is the grant to use, refreshed when it is about to expire. The keyring is read at
// the server's first 401, not before: a server that asks for no authorization never costs a
// keyring lookup.
func (t *Transport) current(ctx context.Context) (*Grant, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.grant != nil && t.grant.expiring(t.now()) && t.grant.RefreshToken != "" {
		if err := t.refreshLocked(ctx); err != nil {
			return nil, err
		}
	}
	return t.grant, nil
}

// loadLocked reads the grant from the store. A store that cannot be read (no keyring, a
// locked one) is no grant, with why kept for the sign-in reason.
func (t *Transport) loadLocked(ctx context.Context) {
	g, err := t.Store.Load(ctx, t.Server)
	t.loadErr = nil
	switch {
	case errors.Is(err, ErrNoGrant):
		t.setGrantLocked(nil)
	case err != nil:
		t.setGrantLocked(nil)
		t.loadErr = err
	case !sameResource(g.Resource, t.URL):
		// Signed in for another address (the url was edited since): never sent elsewhere.
		t.setGrantLocked(nil)
	default:
		t.setGrantLocked(g)
	}
	t.loaded = true
}

// sameResource: the grant's resource is the configured URL, or its origin (a server whose
// metadata names its root as the resource).
func sameResource(resource, configured string) bool {
	if resource == configured || strings.TrimSuffix(resource, "/") == strings.TrimSuffix(configured, "/") {
		return true
	}
	r, err1 := url.Parse(resource)
	c, err2 := url.Parse(configured)
	return err1 == nil && err2 == nil && (r.Path == "" || r.Path == "/") && r.Scheme == c.Scheme && strings.EqualFold(r.Host, c.Host)
}

// refreshLocked uses the refresh token. A refusal (invalid_grant: revoked or expired) drops
// the grant's tokens; the user has to sign in again.
func (t *Transport) refreshLocked(ctx context.Context) error {
	g := *t.grant
	tr, err := tokenRequest(ctx, t.HTTP, &g, url.Values{
		"grant_type":    {"refresh_token"},
		"refresh_token": {g.RefreshToken},
		"resource":      {g.Resource},
	})
	var te *TokenError
	if errors.As(err, &te) && te.Status >= 400 && te.Status < 500 {
		t.setGrantLocked(nil)
		_ = t.Store.Delete(ctx, t.Server)
		return t.signIn("the authorization server refused the refresh token: " + te.Error())
	}
	if err != nil {
		return fmt.Errorf("server %s: refresh its token: %w", t.Server, err)
	}
	if err := tr.apply(&g, t.now()); err != nil {
		return fmt.Errorf("server %s: refresh its token: %w", t.Server, err)
	}
	if err := t.Store.Save(ctx, t.Server, &g); err != nil {
		return fmt.Errorf("server %s: store its new token in the keyring: %w", t.Server, err)
	}
	t.setGrantLocked(&g)
	return nil
}

func (t *Transport) signIn(reason string) error {
	if t.OnSignIn != nil {
		t.OnSignIn(reason)
	}
	return &NeedsSignIn{Server: t.Server, Reason: reason}
}

// RoundTrip sends r with the token; on a 401 it refreshes (or re-reads the keyring, where a
// sign-in by another process may have put a new grant) and retries once.
func (t *Transport) RoundTrip(r *http.Request) (*http.Response, error) {
	ctx := r.Context()
	g, err := t.current(ctx)
	if err != nil {
		return nil, err
	}
	resp, err := t.send(r, g)
	if err == nil && resp.StatusCode == http.StatusForbidden && g != nil && t.forResource(r.URL) {
		if scopes := insufficientScope(resp.Header); scopes != nil {
			drain(resp)
			// A sign-in since this grant was loaded (the user granted the scope: here, or with
			// `servers login` in another process) put a new grant in the store: try it once.
			if g2 := t.reloadIfNewer(ctx, g); g2 != nil && (r.Body == nil || r.GetBody != nil) {
				r2 := r.Clone(ctx)
				if r.GetBody != nil {
					if r2.Body, err = r.GetBody(); err != nil {
						return nil, err
					}
				}
				resp, err = t.send(r2, g2)
				if err != nil || resp.StatusCode != http.StatusForbidden {
					return resp, err
				}
				if scopes = insufficientScope(resp.Header); scopes == nil {
					return resp, nil
				}
				drain(resp)
				g = g2
			}
			return nil, t.stepUp(ctx, g, scopes)
		}
	}
	if err != nil || resp.StatusCode != http.StatusUnauthorized || !t.forResource(r.URL) {
		return resp, err
	}
	if r.Body != nil && r.GetBody == nil {
		return resp, nil // cannot send the body again: the caller sees the 401
	}
	if g == nil && !bearerChallenge(resp.Header) {
		// Not the MCP authorization spec's challenge (another scheme, or none: a missing API
		// key header, say): nothing to sign in to; the caller sees the 401 as it is.
		return resp, nil
	}
	drain(resp)
	t.mu.Lock()
	switch {
	case t.grant != g: // another request refreshed (or loaded) meanwhile
	case !t.loaded || g == nil || g.RefreshToken == "":
		// The first 401, or a grant that cannot be refreshed: read the store, where a sign-in
		// (this hub's, or the CLI's in another process) put the grant.
		t.loadLocked(ctx)
		switch {
		case t.grant == nil || t.grant.AccessToken == g.token() && t.grant.RefreshToken == "":
			t.setGrantLocked(nil)
			reason := "not signed in"
			if t.loadErr != nil {
				reason = "its sign-in could not be read from the keyring: " + t.loadErr.Error()
			} else if g != nil {
				reason = "the server refused its token and there is no refresh token"
			}
			err = t.signIn(reason)
		case t.grant.AccessToken == g.token() || t.grant.expiring(t.now()):
			err = t.refreshLocked(ctx)
		}
	default:
		err = t.refreshLocked(ctx)
	}
	g2 := t.grant
	t.mu.Unlock()
	if err != nil {
		return nil, err
	}
	r2 := r.Clone(ctx)
	if r.GetBody != nil {
		if r2.Body, err = r.GetBody(); err != nil {
			return nil, err
		}
	}
	resp, err = t.send(r2, g2)
	if err == nil && resp.StatusCode == http.StatusUnauthorized && t.forResource(r.URL) {
		drain(resp)
		t.mu.Lock()
		if t.grant == g2 {
			t.setGrantLocked(nil)
			_ = t.Store.Delete(ctx, t.Server)
		}
		t.mu.Unlock()
		return nil, t.signIn("the server refused a fresh token")
	}
	return resp, err
}

// insufficientScope is the scope a 403's Bearer challenge says the request needs (RFC 6750
// §3.1, error="insufficient_scope"; the MCP authorization spec's step-up), or nil for another
// 403. A challenge that names no scope needs the ones the grant has again: an empty, non-nil
// slice.
func insufficientScope(h http.Header) []string {
	cs, err := oauthex.ParseWWWAuthenticate(h.Values("WWW-Authenticate"))
	if err != nil {
		return nil
	}
	for _, c := range cs {
		if c.Scheme == "bearer" && c.Params["error"] == "insufficient_scope" {
			return append([]string{}, strings.Fields(c.Params["scope"])...)
		}
	}
	return nil
}

// reloadIfNewer reads the store and returns its grant when it differs from g (nil otherwise).
func (t *Transport) reloadIfNewer(ctx context.Context, g *Grant) *Grant {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.grant != g {
		return t.grant // another request reloaded or refreshed meanwhile
	}
	t.loadLocked(ctx)
	if t.grant == nil {
		t.setGrantLocked(g) // the store lost it; keep what works
		return nil
	}
	if t.grant.AccessToken == g.AccessToken {
		return nil
	}
	return t.grant
}

// stepUp records the scopes the server asked for in the grant (so the next sign-in asks for
// them) and fails the request with *NeedsScope. The grant keeps serving the requests it is
// good for: the server is not taken down to "sign in" for one tool that needs more.
func (t *Transport) stepUp(ctx context.Context, g *Grant, scopes []string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.grant != nil {
		ng := *t.grant
		ng.StepUp = slices.Clone(ng.StepUp)
		for _, s := range scopes {
			if !slices.Contains(ng.Scopes, s) && !slices.Contains(ng.StepUp, s) {
				ng.StepUp = append(ng.StepUp, s)
			}
		}
		if len(ng.StepUp) != len(t.grant.StepUp) {
			if err := t.Store.Save(ctx, t.Server, &ng); err != nil {
				return fmt.Errorf("server %s: record the scope it asks for in the keyring: %w", t.Server, err)
			}
			t.setGrantLocked(&ng)
		}
	}
	if len(scopes) == 0 {
		scopes = g.Scopes
	}
	return &NeedsScope{Server: t.Server, Scopes: scopes}
}

// bearerChallenge reports whether a 401 asks for a Bearer token (RFC 6750 §3).
func bearerChallenge(h http.Header) bool {
	cs, err := oauthex.ParseWWWAuthenticate(h.Values("WWW-Authenticate"))
	if err != nil {
		return false
	}
	for _, c := range cs {
		if c.Scheme == "bearer" {
			return true
		}
	}
	return false
}

func (g *Grant) token() string {
	if g == nil {
		return ""
	}
	return g.AccessToken
}

func (t *Transport) forResource(u *url.URL) bool {
	c, err := url.Parse(t.URL)
	return err == nil && strings.EqualFold(u.Scheme, c.Scheme) && strings.EqualFold(u.Host, c.Host)
}

func (t *Transport) send(r *http.Request, g *Grant) (*http.Response, error) {
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	if g == nil || g.AccessToken == "" || !t.forResource(r.URL) {
		return base.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+g.AccessToken)
	return base.RoundTrip(r)
}

func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

// Revoke asks the authorization server to forget the grant's tokens (RFC 7009), where it has a
// revocation endpoint; best effort: the grant is forgotten by the hub either way.
func Revoke(ctx context.Context, hc *http.Client, g *Grant) error {
	if g.RevocationEndpoint == "" {
		return nil
	}
	rv := *g
	rv.TokenEndpoint = g.RevocationEndpoint
	for _, tok := range []struct{ v, hint string }{{g.RefreshToken, "refresh_token"}, {g.AccessToken, "access_token"}} {
		if tok.v == "" {
			continue
		}
		// RFC 7009 answers 200 with no body: only a failure to reach the server counts.
		_, err := tokenRequest(ctx, hc, &rv, url.Values{"token": {tok.v}, "token_type_hint": {tok.hint}})
		var ue *url.Error
		if errors.As(err, &ue) {
			return err
		}
	}
	return nil
}
