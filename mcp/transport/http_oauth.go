// The HTTP endpoint's OAuth side ([http] auth = "oauth"): the hub's authorization server's
// endpoints beside /mcp, and bearer tokens it issued mapped to the grant they belong to.

package transport

import (
	"context"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// OAuthResource is the hub's authorization server as the endpoint sees it
// (internal/authserver, adapted in package mcp).
type OAuthResource interface {
	// Handler serves the metadata (/.well-known/…) and /oauth/… endpoints.
	Handler() http.Handler
	// Identify maps a bearer token presented at r to the grant it belongs to; nil when it
	// belongs to none.
	Identify(r *http.Request, token string) *auth.TokenInfo
	// ResourceMetadataURL is the RFC 9728 metadata's URL for r's resource (WWW-Authenticate).
	ResourceMetadataURL(r *http.Request) string
}

// mountOAuth serves the authorization server's endpoints beside /mcp.
func (o HTTPOptions) mountOAuth(mux *http.ServeMux) {
	if o.OAuth == nil {
		return
	}
	as := thisMachineOrTLS(o.OAuth.Handler())
	mux.Handle("/.well-known/", as)
	mux.Handle("/oauth/", as)
}

// oauthGrant returns the grant r's bearer token belongs to, or nil: no OAuth, no token, a
// token that is not (or no longer) good, or plain HTTP addressed to a name that is not this
// machine (see thisMachineOrTLS).
func (o HTTPOptions) oauthGrant(r *http.Request) *auth.TokenInfo {
	if o.OAuth == nil || (r.TLS == nil && !localHost(r.Host)) {
		return nil
	}
	tok, ok := bearerToken(r.Header.Get("Authorization"))
	if !ok {
		return nil
	}
	return o.OAuth.Identify(r, tok)
}

// oauthChallenge answers 401 naming the protected resource's metadata (RFC 9728 §5.1), from
// which a client finds the authorization server.
func (o HTTPOptions) oauthChallenge(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata=%q`, o.OAuth.ResourceMetadataURL(r)))
	http.Error(w, "missing, expired or revoked bearer token: sign in with OAuth (this hub's authorization server; the user approves the client on the hub's dashboard)", http.StatusUnauthorized)
}

// withGrant serves an OAuth client's request through go-sdk's bearer middleware, which puts the
// TokenInfo where the receiving middleware (the grant's limits) and the session binding (a
// session is held by the grant that opened it) find it; the token was verified already.
func withGrant(stream http.Handler, grant *auth.TokenInfo) http.Handler {
	if grant == nil {
		return stream
	}
	return auth.RequireBearerToken(func(context.Context, string, *http.Request) (*auth.TokenInfo, error) { return grant, nil }, nil)(stream)
}

// thisMachineOrTLS refuses a request over plain HTTP whose Host is not this machine. Plain HTTP
// is served on loopback only (beyond it the endpoint requires TLS), so such a request comes from a
// browser page whose name was rebound to 127.0.0.1 (DNS rebinding): it must not register clients
// or start authorizations that name its own host as the issuer. Over TLS any Host may come: a
// rebound name fails the certificate.
func thisMachineOrTLS(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil && !localHost(r.Host) {
			http.Error(w, fmt.Sprintf("Host %q is not this machine; plain HTTP is served on loopback only", r.Host), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}
