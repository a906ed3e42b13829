// Package oauthclient signs the hub in to remote MCP servers as a client of the MCP
// authorization spec: on a 401 with WWW-Authenticate it discovers the protected resource's
// metadata (RFC 9728) and its authorization server's (RFC 8414, OpenID discovery), identifies
// the hub by the client_id the user configured, else by a Client ID Metadata Document where the
// server supports it, else registers dynamically (RFC 7591), and runs the authorization code flow with
// PKCE S256 and a loopback redirect (RFC 8252) in the user's browser, with resource indicators
// (RFC 8707) and the issuer checked (RFC 9207). The grant (tokens and the client it was issued
// to) lives in a Store (the keyring in the product), never in a file; Transport adds the access
// token to the resource's requests and refreshes it before it expires and on a 401, rotating
// the refresh token.
//
// Discovery, metadata validation and registration come from go-sdk's oauthex and auth
// packages; PKCE and the authorization URL from golang.org/x/oauth2. What is written here is
// what they leave to the caller: refusing an authorization server without S256, the SSRF rules
// of every request the hub makes on the metadata's word, the loopback listener, the token
// requests (a refresh carries the resource indicator, which oauth2's refreshing TokenSource
// cannot send) and the grant's storage. It imports nothing from MCP's hub packages.
package oauthclient

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Config is what the user configured for a server (`oauth = {…}` in its [[servers]] entry),
// with the client secret resolved.
type Config struct {
	// ClientID and ClientSecret identify a client the user registered with the server's
	// authorization server by hand; empty: the hub identifies itself (CIMD) or registers.
	ClientID     string
	ClientSecret string
	// Scopes to ask for; empty: what the server's 401 or its metadata names.
	Scopes []string
}

// Grant is what signing in to one server leaves: the client the tokens were issued to and the
// tokens. It is stored whole in the Store and never shown.
type Grant struct {
	// Resource is the protected resource (RFC 9728 resource, the RFC 8707 indicator) the tokens
	// are for; the hub sends them to that origin only.
	Resource           string   `json:"resource"`
	Issuer             string   `json:"issuer"`
	TokenEndpoint      string   `json:"token_endpoint"`
	RevocationEndpoint string   `json:"revocation_endpoint,omitempty"`
	ClientID           string   `json:"client_id"`
	ClientSecret       string   `json:"client_secret,omitempty"`
	AuthMethod         string   `json:"token_endpoint_auth_method,omitempty"` // none, client_secret_basic or client_secret_post
	Scopes             []string `json:"scopes,omitempty"`
	// StepUp is what the server asked for beyond Scopes (a 403 with insufficient_scope, RFC 6750
	// §3.1): the next sign-in asks for Scopes and StepUp together.
	StepUp []string `json:"step_up,omitempty"`

	AccessToken  string    `json:"access_token"`
	TokenType    string    `json:"token_type,omitempty"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
	Obtained     time.Time `json:"obtained,omitzero"`
}

// expiring reports whether the access token should be refreshed before it is used at now: in
// its last tenth of life, and at most 30 s before it expires (a token that lives seconds is
// refreshed just before it expires, not at every call).
func (g *Grant) expiring(now time.Time) bool {
	if g.Expiry.IsZero() {
		return false
	}
	skew := 30 * time.Second
	if life := g.Expiry.Sub(g.Obtained); !g.Obtained.IsZero() && life/10 < skew {
		skew = life / 10
	}
	return !now.Add(skew).Before(g.Expiry)
}

// Store keeps grants by server name. The product's is the keyring (package keyring).
type Store interface {
	// Load returns the server's grant, or an error matching ErrNoGrant.
	Load(ctx context.Context, server string) (*Grant, error)
	Save(ctx context.Context, server string, g *Grant) error
	// Delete forgets the server's grant; none is not an error.
	Delete(ctx context.Context, server string) error
}

// ErrNoGrant is a Store's answer for a server the hub has not signed in to (or signed out of).
var ErrNoGrant = errors.New("not signed in")

// NeedsSignIn is the error of a request the server refused without a grant the hub can use:
// none was ever obtained, or its refresh token was refused (revoked, expired). Only the user
// can fix it, by signing in again.
type NeedsSignIn struct {
	Server string
	Reason string
}

func (e *NeedsSignIn) Error() string {
	return SignInMessage(e.Server) + " (" + e.Reason + ")"
}

// NeedsScope is the error of a request the server refused for want of scopes the grant lacks
// (403, insufficient_scope): the grant still serves other requests, and the next sign-in asks
// for the scopes too (Grant.StepUp). Only the user can grant them.
type NeedsScope struct {
	Server string
	Scopes []string
}

func (e *NeedsScope) Error() string {
	return fmt.Sprintf("server %s needs more access for this (scope %q): sign in again to grant it: run `switchboard servers login %s` or click Sign in in the Servers view", e.Server, strings.Join(e.Scopes, " "), e.Server)
}

// SignInMessage is what a call of a server that needs the user to sign in answers.
func SignInMessage(server string) string {
	return fmt.Sprintf("server %s needs you to sign in: run `switchboard servers login %s` or click Sign in in the Servers view", server, server)
}

// MemStore is a Store in memory, for tests.
type MemStore struct {
	mu sync.Mutex
	m  map[string]Grant
}

// Load returns the server's grant, or ErrNoGrant.
func (s *MemStore) Load(_ context.Context, server string) (*Grant, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.m[server]
	if !ok {
		return nil, ErrNoGrant
	}
	return &g, nil
}

// Save keeps a copy of g for the server.
func (s *MemStore) Save(_ context.Context, server string, g *Grant) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]Grant{}
	}
	s.m[server] = *g
	return nil
}

// Delete forgets the server's grant.
func (s *MemStore) Delete(_ context.Context, server string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, server)
	return nil
}
