// Package authserver is the hub's own OAuth 2.1 authorization server, for MCP clients that reach
// the HTTP endpoint from another machine (the MCP authorization spec, server side): protected
// resource metadata (RFC 9728), authorization server metadata (RFC 8414), client registration
// (RFC 7591, and Client ID Metadata Documents: a client_id that is an https URL), the
// authorization code grant with PKCE S256 only, refresh tokens with rotation and replay
// detection, and resource indicators (RFC 8707). Every new authorization is put to the user
// (Options.Approve: the hub's dashboard and tray); the browser that started it waits on a page
// that redirects once the user answered. Grants are kept in a file under the hub's state
// directory with the SHA-256 of their tokens, never the tokens.
//
// It is written here rather than taken from a library: the well-kept Go servers (ory/fosite,
// zitadel/oidc's op) are OpenID providers built around user accounts, login pages and signing
// keys; the hub has one user, who answers on its dashboard, and opaque tokens checked against
// this store are all it needs (revocation takes effect at the next request). It imports nothing
// from MCP.
package authserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-hub/switchboard/internal/listeners"
)

// Request is a client asking to use the hub, as it is put to the user.
type Request struct {
	ClientID    string
	ClientName  string // what the client calls itself: a label, not an identity
	Device      string // the address the browser came from
	RedirectURI string
	Scopes      []string // asked for
}

// Decision is the user's answer to a Request.
type Decision struct {
	Allow bool
	// Scopes granted; empty with Allow: those asked for.
	Scopes []string
	Reason string // why not, for the client's error_description
}

// Approver puts a request to the user and waits for the answer, until ctx ends.
type Approver func(ctx context.Context, r Request) Decision

// Scope names beyond the toolsets.
const (
	// ScopeReadOnly limits a grant to tools annotated read-only (the policy's read-only mode).
	ScopeReadOnly = "readonly"
	// ScopeOfflineAccess asks for a refresh token; the hub issues one anyway and drops the scope.
	ScopeOfflineAccess = "offline_access"
)

// Paths of the endpoints, under the hub's HTTP origin.
const (
	PathResourceMetadata = "/.well-known/oauth-protected-resource"
	PathServerMetadata   = "/.well-known/oauth-authorization-server"
	PathRegister         = "/oauth/register"
	PathAuthorize        = "/oauth/authorize"
	PathAuthorizeWait    = "/oauth/authorize/wait"
	PathToken            = "/oauth/token"
	PathRevoke           = "/oauth/revoke"
)

// Options configure a Server.
type Options struct {
	// Dir holds grants.json (the hub's state directory).
	Dir string
	// ResourcePath is the MCP endpoint's path ("/mcp").
	ResourcePath string
	// Scopes lists the scopes a client may ask for (the toolsets); ScopeReadOnly is always
	// accepted besides.
	Scopes func() []string
	// Approve asks the user; required.
	Approve Approver
	// HTTP fetches Client ID Metadata Documents; nil: MetadataClient(nil) (SSRF rules).
	HTTP *http.Client
	// NoMetadataDocuments turns Client ID Metadata Documents off: the metadata says so, so
	// clients register (RFC 7591), and a client_id that is a document's URL is refused with
	// that fix. For a hub that cannot reach where clients publish theirs.
	NoMetadataDocuments bool
	// Lifetimes (zero: defaults).
	AccessTTL, RefreshTTL, CodeTTL, ApprovalTimeout time.Duration
	// WaitStep is how long one page load of the authorize endpoint waits for the answer
	// before the page reloads itself (default 20 s).
	WaitStep time.Duration
	Logger   *slog.Logger
	Now      func() time.Time
}

// Defaults.
const (
	DefaultAccessTTL       = time.Hour
	DefaultRefreshTTL      = 30 * 24 * time.Hour
	DefaultCodeTTL         = time.Minute
	DefaultApprovalTimeout = 5 * time.Minute
	// MaxClients bounds registered clients without a grant (registration is open to anyone
	// who can reach the endpoint): the oldest such clients are forgotten beyond it.
	MaxClients = 200
	// MaxPending bounds authorizations waiting for the user.
	MaxPending = 20
)

// Server is the authorization server. Its methods are safe for concurrent use.
type Server struct {
	opts Options
	path string

	ctx    context.Context // ends in Close: pending questions are withdrawn
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu        sync.Mutex
	st        *state
	byAccess  map[string]string // access token hash → grant id
	byRefresh map[string]string // refresh hash (current or used) → grant id
	codes     map[string]*authCode
	pending   map[string]*pendingAuth
	cimd      map[string]*Client
	savedUse  time.Time

	revoked listeners.Set[string] // grant ids, as each is revoked (OnRevoke)
}

// New loads the grants kept in o.Dir.
func New(o Options) (*Server, error) {
	if o.Approve == nil {
		return nil, errors.New("authserver: Approve is required")
	}
	if o.ResourcePath == "" {
		o.ResourcePath = "/mcp"
	}
	if o.Scopes == nil {
		o.Scopes = func() []string { return nil }
	}
	if o.AccessTTL <= 0 {
		o.AccessTTL = DefaultAccessTTL
	}
	if o.RefreshTTL <= 0 {
		o.RefreshTTL = DefaultRefreshTTL
	}
	if o.CodeTTL <= 0 {
		o.CodeTTL = DefaultCodeTTL
	}
	if o.ApprovalTimeout <= 0 {
		o.ApprovalTimeout = DefaultApprovalTimeout
	}
	if o.WaitStep <= 0 {
		o.WaitStep = 20 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.HTTP == nil {
		o.HTTP = MetadataClient(nil)
	}
	path := filepath.Join(o.Dir, "grants.json")
	st, err := loadState(path)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{opts: o, path: path, ctx: ctx, cancel: cancel, st: st,
		byAccess: map[string]string{}, byRefresh: map[string]string{},
		codes: map[string]*authCode{}, pending: map[string]*pendingAuth{}, cimd: map[string]*Client{}}
	for id, g := range st.Grants {
		s.indexLocked(id, g)
	}
	return s, nil
}

// Close withdraws the authorizations waiting for the user and waits for their goroutines.
func (s *Server) Close() {
	s.cancel()
	s.wg.Wait()
}

func (s *Server) indexLocked(id string, g *grant) {
	for _, a := range g.Access {
		s.byAccess[a.Hash] = id
	}
	if g.Refresh.Hash != "" {
		s.byRefresh[g.Refresh.Hash] = id
	}
	for _, h := range g.UsedRefresh {
		s.byRefresh[h] = id
	}
}

func (s *Server) unindexLocked(g *grant) {
	for _, a := range g.Access {
		delete(s.byAccess, a.Hash)
	}
	delete(s.byRefresh, g.Refresh.Hash)
	for _, h := range g.UsedRefresh {
		delete(s.byRefresh, h)
	}
}

// saveLocked persists the state; a failure is logged (the grants in memory stay in force).
func (s *Server) saveLocked() {
	if err := s.st.save(s.path); err != nil {
		s.opts.Logger.Error("oauth: grants not saved", "err", err)
	}
}

// Grants lists the live grants, newest first.
func (s *Server) Grants() []GrantInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]GrantInfo, 0, len(s.st.Grants))
	for _, g := range s.st.Grants {
		out = append(out, GrantInfo{ID: g.ID, ClientID: g.ClientID, ClientName: g.ClientName, Device: g.Device,
			Scopes: slices.Clone(g.Scopes), CreatedAt: g.CreatedAt, LastUsed: g.LastUsed})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt.After(out[j].CreatedAt) })
	return out
}

// ErrUnknownGrant is Revoke's error for an id that is not a live grant.
var ErrUnknownGrant = errors.New("no such grant (already revoked?); Settings lists the live ones")

// Revoke ends a grant at once: its tokens are refused from the next request on.
func (s *Server) Revoke(id string) error {
	s.mu.Lock()
	g, ok := s.st.Grants[id]
	if !ok {
		s.mu.Unlock()
		return fmt.Errorf("grant %q: %w", id, ErrUnknownGrant)
	}
	s.revokeLocked(g)
	s.mu.Unlock()
	s.opts.Logger.Info("oauth: grant revoked", "grant", id, "client", g.ClientName, "device", g.Device)
	return nil
}

func (s *Server) revokeLocked(g *grant) {
	s.unindexLocked(g)
	delete(s.st.Grants, g.ID)
	s.saveLocked()
	s.revoked.Notify(g.ID)
}

// OnRevoke calls f with the id of each grant revoked from now on, whatever revoked it (the user,
// a replayed code, a refresh token presented twice), until cancel is called: the MCP endpoint
// closes the streams the grant's client has open. f runs with the server's lock held, so it
// must not call the Server; it should only signal.
func (s *Server) OnRevoke(f func(grant string)) (cancel func()) { return s.revoked.Add(f) }

// Identity is what a verified access token stands for.
type Identity struct {
	Grant      string
	ClientID   string
	ClientName string
	Device     string
	Scopes     []string
	Expires    time.Time
}

// ErrInvalidToken is Verify's error for a token that is not (or no longer) good here.
var ErrInvalidToken = errors.New("invalid, expired or revoked access token")

// Verify maps an access token presented to resource (the MCP endpoint's URL as the request
// addressed it) to the grant it belongs to.
func (s *Server) Verify(token, resource string) (Identity, error) {
	h := hashToken(token)
	now := s.opts.Now()
	s.mu.Lock()
	id, ok := s.byAccess[h]
	g := s.st.Grants[id]
	if !ok || g == nil {
		s.mu.Unlock()
		return Identity{}, ErrInvalidToken
	}
	var exp time.Time
	for _, a := range g.Access {
		if a.Hash == h {
			exp = a.Expires
		}
	}
	if !now.Before(exp) {
		s.mu.Unlock()
		return Identity{}, fmt.Errorf("%w: expired; refresh it", ErrInvalidToken)
	}
	if !sameResource(g.Resource, resource) {
		s.mu.Unlock()
		return Identity{}, fmt.Errorf("%w: issued for another resource (RFC 8707)", ErrInvalidToken)
	}
	g.LastUsed = now
	if now.Sub(s.savedUse) > time.Minute { // last use is kept to the minute, not written per call
		s.savedUse = now
		s.saveLocked()
	}
	ident := Identity{Grant: g.ID, ClientID: g.ClientID, ClientName: g.ClientName, Device: g.Device,
		Scopes: slices.Clone(g.Scopes), Expires: exp}
	s.mu.Unlock()
	return ident, nil
}

// sameResource compares two resource URLs after normalising case and default ports.
func sameResource(a, b string) bool { return canonicalResource(a) == canonicalResource(b) }

func canonicalResource(u string) string {
	u = strings.TrimSuffix(u, "/")
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok {
		return u
	}
	host, path, _ := strings.Cut(rest, "/")
	host = strings.ToLower(host)
	scheme = strings.ToLower(scheme)
	switch {
	case scheme == "https" && strings.HasSuffix(host, ":443"):
		host = strings.TrimSuffix(host, ":443")
	case scheme == "http" && strings.HasSuffix(host, ":80"):
		host = strings.TrimSuffix(host, ":80")
	}
	if path != "" {
		return scheme + "://" + host + "/" + path
	}
	return scheme + "://" + host
}

// Origin is the scheme and host a request addressed: the issuer, and the resource's prefix.
func Origin(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// Resource is the MCP endpoint's URL as r addressed it.
func (s *Server) Resource(r *http.Request) string { return Origin(r) + s.opts.ResourcePath }

// ResourceMetadataURL is where the protected resource's metadata is, for WWW-Authenticate.
func (s *Server) ResourceMetadataURL(r *http.Request) string {
	return Origin(r) + PathResourceMetadata + s.opts.ResourcePath
}

// scopesSupported is what the authorization server's metadata lists: the toolsets, readonly and
// offline_access. The resource's metadata lists the toolsets only: clients ask for what it lists,
// and readonly is the user's (or a deliberate client's) choice, not a default.
func (s *Server) scopesSupported() []string {
	return append(slices.Clone(s.opts.Scopes()), ScopeReadOnly, ScopeOfflineAccess)
}
