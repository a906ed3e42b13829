// Streamable HTTP: the /mcp endpoint behind the bearer token, Host and Origin checks, exact id
// echo, cancellation without a reply, and the HTTP server's timeouts.

package transport

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPOptions configure the Streamable HTTP endpoint.
type HTTPOptions struct {
	Token string // the hub's shared bearer token (required)
	// ClientTokens, when set, also lets in each client's own token (clienttokens.Store), which
	// names the client: the identity of a stateless client.
	ClientTokens ClientTokens
	// AllowedOrigins are browser origins (e.g. "http://localhost:6274", the MCP Inspector) allowed
	// besides the endpoint's own loopback origins; their CORS preflights are answered.
	AllowedOrigins []string
	// ReadTimeout bounds reading a whole request (0: HTTPReadTimeout).
	ReadTimeout time.Duration
	// OAuth, when set, serves the hub's authorization server beside /mcp and lets in the bearer
	// tokens it issued, besides Token, from any Host (the token is the proof): the request's
	// TokenInfo (go-sdk's auth) carries who the client is and its scopes to the middleware.
	OAuth OAuthResource
}

func (o HTTPOptions) readTimeout() time.Duration {
	if o.ReadTimeout > 0 {
		return o.ReadTimeout
	}
	return HTTPReadTimeout
}

// Timeouts of the HTTP servers (MCP, dashboard, WebSocket hub).
const (
	// HTTPHeaderTimeout bounds reading a request's headers.
	HTTPHeaderTimeout = 10 * time.Second
	// HTTPReadTimeout bounds reading a whole request, body included. Long-lived responses (SSE
	// streams) clear it once the request is read, so it never cuts a stream.
	HTTPReadTimeout = 30 * time.Second
	// HTTPIdleTimeout closes keep-alive connections that stay idle.
	HTTPIdleTimeout = 2 * time.Minute
	// HTTPMaxHeaderBytes caps a request's headers.
	HTTPMaxHeaderBytes = 64 << 10
)

// NewHTTPServer returns an http.Server with the hub's timeouts and header cap.
func NewHTTPServer(h http.Handler) *http.Server { return newHTTPServer(h, HTTPReadTimeout) }

func newHTTPServer(h http.Handler, readTimeout time.Duration) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: min(HTTPHeaderTimeout, readTimeout),
		ReadTimeout:       readTimeout,
		IdleTimeout:       HTTPIdleTimeout,
		MaxHeaderBytes:    HTTPMaxHeaderBytes,
	}
}

// ClientTokens maps a client's own bearer token to the client it was issued to.
type ClientTokens interface {
	Verify(token string) (client string, ok bool)
}

// revokeNotifier is a ClientTokens or OAuthResource that says when a client's credential is
// revoked (client: the Credential.Client it proved), so that client's stateless Sessions entry
// goes and its open requests end at once.
type revokeNotifier interface {
	OnRevoke(f func(client string)) (cancel func())
}

// streamCuts holds a cancel for every request in flight under a client's own credential, by
// client, so a revocation ends them (SSE streams above all, which would otherwise outlive it).
type streamCuts struct {
	mu   sync.Mutex
	seq  uint64
	open map[string]map[uint64]context.CancelFunc
}

func newStreamCuts() *streamCuts {
	return &streamCuts{open: map[string]map[uint64]context.CancelFunc{}}
}

// track returns ctx cancelled when client's credential is revoked; done forgets it (the request
// ended on its own).
func (s *streamCuts) track(ctx context.Context, client string) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	s.mu.Lock()
	s.seq++
	id := s.seq
	if s.open[client] == nil {
		s.open[client] = map[uint64]context.CancelFunc{}
	}
	s.open[client][id] = cancel
	s.mu.Unlock()
	return ctx, func() {
		s.mu.Lock()
		delete(s.open[client], id)
		if len(s.open[client]) == 0 {
			delete(s.open, client)
		}
		s.mu.Unlock()
		cancel()
	}
}

// cut ends every request client has in flight.
func (s *streamCuts) cut(client string) {
	s.mu.Lock()
	open := s.open[client]
	delete(s.open, client)
	s.mu.Unlock()
	for _, cancel := range open {
		cancel()
	}
}

// Credential is who a request's bearer token proved to be.
type Credential struct {
	// Client is the client a per-client token was issued to; "" for the hub's shared token.
	Client string
}

// bearerAuth maps a request's bearer token to a Credential: the one place the endpoint decides
// who is calling. Another kind of credential (an OAuth grant) is one more case here.
type bearerAuth struct {
	shared  [sha256.Size]byte
	hasKey  bool
	clients ClientTokens
}

func newBearerAuth(o HTTPOptions) bearerAuth {
	return bearerAuth{shared: sha256.Sum256([]byte(o.Token)), hasKey: o.Token != "", clients: o.ClientTokens}
}

// authenticate returns the request's Credential, or ok=false when its token is missing, wrong
// or revoked.
func (a bearerAuth) authenticate(r *http.Request) (Credential, bool) {
	got, ok := bearerToken(r.Header.Get("Authorization"))
	if !ok {
		return Credential{}, false
	}
	d := sha256.Sum256([]byte(got))
	if a.hasKey && subtle.ConstantTimeCompare(d[:], a.shared[:]) == 1 {
		return Credential{}, true
	}
	if a.clients != nil {
		if client, ok := a.clients.Verify(got); ok {
			return Credential{Client: client}, true
		}
	}
	return Credential{}, false
}

// corsAllowHeaders are the request headers a browser client of Streamable HTTP sends.
const corsAllowHeaders = "Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-Id, Mcp-Method, Mcp-Name"

// HTTPHandler serves MCP (Streamable HTTP) at /mcp, both protocol eras on the one URL: requests
// that name a session or initialize one go to go-sdk's stateful handler, sessionless 2026-07-28
// requests to its stateless one, served per client identity (stateless.go). Three checks come
// first: a bearer token, the shared one or a client's own (401),
// a Host header naming this machine (403, against DNS rebinding) and, when a browser sends one,
// an allowed Origin (403). The token is checked before a byte of the body is read, and a 401
// closes the connection. Request bodies are capped at MaxMessageSize and must arrive within
// HTTPReadTimeout. CORS preflights from AllowedOrigins are answered.
func (c *Server) HTTPHandler(o HTTPOptions) http.Handler {
	h, _ := c.httpHandler(o)
	return h
}

// httpHandler is HTTPHandler and the function that releases what it keeps beyond a request: the
// stateless clients' Sessions entries and the subscription to token revocations.
func (c *Server) httpHandler(o HTTPOptions) (http.Handler, func()) {
	stream := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return c.server }, &sdk.StreamableHTTPOptions{
		SessionTimeout:      30 * time.Minute,
		Logger:              c.logger,
		MaxRequestBodyBytes: MaxMessageSize,
	})
	// The same server, sessionless: 2026-07-28 requests (stateless.go). go-sdk checks their
	// Mcp-Protocol-Version, Mcp-Method and Mcp-Name headers against the body (400 on a mismatch),
	// answers GET and DELETE 405, and keeps subscriptions/listen open as an SSE stream. A client
	// that goes away cancels its calls (PropagateRequestCancellation): on this protocol the POST
	// is the whole life of a request.
	stateless := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return c.server }, &sdk.StreamableHTTPOptions{
		Stateless:                    true,
		Logger:                       c.logger,
		MaxRequestBodyBytes:          MaxMessageSize,
		PropagateRequestCancellation: true,
	})
	bearer := newBearerAuth(o)
	clients := newStatelessClients(c.sessions)
	cuts := newStreamCuts()
	var unsubscribe []func()
	// A revoked credential (a client's own token, an OAuth grant) is refused at its next request;
	// what it has open now (a GET stream, subscriptions/listen, a long call's SSE reply) is cut
	// at once, so nothing more reaches a client the user has just shut out.
	for _, n := range []any{o.ClientTokens, o.OAuth} {
		if rn, ok := n.(revokeNotifier); ok {
			unsubscribe = append(unsubscribe, rn.OnRevoke(func(client string) { clients.forget(client); cuts.cut(client) }))
		}
	}
	release := func() {
		for _, u := range unsubscribe {
			u()
		}
		clients.closeAll()
	}
	calls := newClientCalls("http-")
	mux := http.NewServeMux()
	o.mountOAuth(mux) // http_oauth.go
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin != "" && originAllowed(origin, r.Host, o.AllowedOrigins) && localHost(r.Host) {
			h := w.Header()
			h.Set("Access-Control-Allow-Origin", origin)
			h.Add("Vary", "Origin")
			h.Set("Access-Control-Expose-Headers", "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate")
			if r.Method == http.MethodOptions { // CORS preflight: browsers send it without credentials
				h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS")
				h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
				h.Set("Access-Control-Max-Age", "600")
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		if r.Method == http.MethodOptions {
			http.Error(w, fmt.Sprintf("Origin %q is not allowed; add it to [http] allowed_origins to let that page in", origin), http.StatusForbidden)
			return
		}
		var grant *auth.TokenInfo // an OAuth client's identity (http_oauth.go); nil with a static token
		cred, authed := bearer.authenticate(r)
		if !authed {
			if grant = o.oauthGrant(r); grant == nil {
				// Close rather than drain: a client without the token may not trickle a body at us.
				w.Header().Set("Connection", "close")
				if o.OAuth != nil {
					o.oauthChallenge(w, r)
					return
				}
				w.Header().Set("WWW-Authenticate", `Bearer realm="switchboard"`)
				http.Error(w, "missing or wrong bearer token: send Authorization: Bearer <token> (`switchboard token` prints it; or set --token / SWITCHBOARD_TOKEN)", http.StatusUnauthorized)
				return
			}
			// A stateless client is known by its grant: its own Sessions entry, todos and answers.
			cred = Credential{Client: grant.UserID}
		}
		if grant == nil && !localHost(r.Host) {
			http.Error(w, fmt.Sprintf("Host %q is not this machine; connect to 127.0.0.1 or localhost", r.Host), http.StatusForbidden)
			return
		}
		if origin != "" && !originAllowed(origin, r.Host, o.AllowedOrigins) {
			http.Error(w, fmt.Sprintf("Origin %q is not allowed; add it to [http] allowed_origins to let that page in", origin), http.StatusForbidden)
			return
		}
		if r.ContentLength > MaxMessageSize {
			w.Header().Set("Connection", "close")
			http.Error(w, fmt.Sprintf("request body of %d bytes exceeds the %d MiB limit", r.ContentLength, MaxMessageSize>>20), http.StatusRequestEntityTooLarge)
			return
		}
		if cred.Client != "" { // the client's own credential: its requests end when it is revoked
			ctx, done := cuts.track(r.Context(), cred.Client)
			defer done()
			r = r.WithContext(ctx)
		}
		rc := http.NewResponseController(w)
		var peek peeked
		var body []byte
		if r.Method == http.MethodPost {
			// Read the body here, within the server's ReadTimeout, then lift the deadline: the
			// reply may be an SSE stream that outlives it.
			var err error
			body, err = io.ReadAll(http.MaxBytesReader(w, r.Body, MaxMessageSize))
			if err != nil {
				w.Header().Set("Connection", "close")
				code := http.StatusBadRequest
				var mbe *http.MaxBytesError
				if errors.As(err, &mbe) {
					code = http.StatusRequestEntityTooLarge
				}
				http.Error(w, fmt.Sprintf("reading the request body: %v (limit %d MiB, within %s)", err, MaxMessageSize>>20, o.readTimeout()), code)
				return
			}
			peek = peekBody(body)
			// Alias ids go-sdk cannot carry, and keep the replies to cancelled calls off the
			// wire (mcp/transport/httpcancel.go).
			prepared, repl, inflight, release := prepareBody(calls, r.Header.Get("Mcp-Session-Id"), body)
			defer release()
			if inflight != nil {
				w = &cancelFilter{ResponseWriter: w, calls: inflight}
			}
			if repl != nil {
				w = &idRestorer{ResponseWriter: w, repl: repl}
			}
			r.Body = io.NopCloser(bytes.NewReader(prepared))
		}
		_ = rc.SetReadDeadline(time.Time{}) // GET opens a long-lived SSE stream
		mode := r.URL.Query().Get(ToolsModeParam)
		if statelessRequest(r, peek) {
			ci, done := clients.enter(cred.Client, peek.clientName, r.RemoteAddr)
			defer done()
			// A stateless client states its mode with every request (the URL it was given); one
			// without the parameter is in the hub's. The grant rides on the request in both eras:
			// its limits (toolsets, read-only) apply to a stateless call as to one on a session.
			rctx := context.WithValue(withConnInfo(r.Context(), ci), requestModeKey{}, mode)
			if peek.method == "subscriptions/listen" {
				// A listen that follows tasks: the hub writes their notifications (listentap.go).
				if tap := newListenTap(body, w); tap != nil {
					w = &tapWriter{ResponseWriter: w, tap: tap}
					rctx = context.WithValue(rctx, listenTapKey{}, tap)
				}
			}
			withGrant(stateless, grant).ServeHTTP(w, r.WithContext(rctx))
			return
		}
		r = r.WithContext(withConnInfo(r.Context(), &Conn{transport: "http", peer: r.RemoteAddr, identity: cred.Client, toolsMode: mode}))
		withGrant(stream, grant).ServeHTTP(w, r)
	})
	return mux, release
}

// idRestorer puts the client's original ids back into a response (JSON or SSE events).
type idRestorer struct {
	http.ResponseWriter
	repl *strings.Replacer
}

func (w *idRestorer) Write(p []byte) (int, error) {
	if _, err := w.ResponseWriter.Write([]byte(w.repl.Replace(string(p)))); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (w *idRestorer) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *idRestorer) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// bearerToken extracts the credentials of an Authorization header whose scheme is Bearer; the
// scheme is case-insensitive (RFC 9110 §11.1).
func bearerToken(h string) (string, bool) {
	scheme, cred, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	cred = strings.TrimSpace(cred)
	return cred, cred != ""
}

func localHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func originAllowed(origin, host string, extra []string) bool {
	for _, o := range extra {
		if origin == o {
			return true
		}
	}
	for _, scheme := range []string{"http://", "https://"} {
		if origin == scheme+host {
			return true
		}
	}
	return false
}

// ServeHTTP runs the HTTP endpoint on ln until ctx ends, then shuts down gracefully.
func (c *Server) ServeHTTP(ctx context.Context, ln net.Listener, o HTTPOptions) error {
	h, release := c.httpHandler(o)
	defer release()
	srv := newHTTPServer(h, o.readTimeout())
	drained := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(drained)
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), DrainTimeout)
		defer cancel()
		_ = srv.Shutdown(sctx) // waits for in-flight requests, up to DrainTimeout
		_ = srv.Close()        // then cuts long-lived streams
	})
	err := srv.Serve(ln)
	if stop() { // ctx never ended: Serve failed on its own
		_ = srv.Close()
	} else {
		<-drained
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("http: %w", err)
	}
	return nil
}
