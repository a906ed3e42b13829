// Streamable HTTP: the /mcp endpoint behind the bearer token, Host and Origin checks, exact id
// echo, cancellation without a reply, and the HTTP server's timeouts.

package transport

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPOptions configure the Streamable HTTP endpoint.
type HTTPOptions struct {
	Token string // required bearer token
	// AllowedOrigins are browser origins (e.g. "http://localhost:6274", the MCP Inspector) allowed
	// besides the endpoint's own loopback origins; their CORS preflights are answered.
	AllowedOrigins []string
	// ReadTimeout bounds reading a whole request (0: HTTPReadTimeout).
	ReadTimeout time.Duration
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

// corsAllowHeaders are the request headers a browser client of Streamable HTTP sends.
const corsAllowHeaders = "Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-Id, Mcp-Method, Mcp-Name"

// HTTPHandler serves MCP (Streamable HTTP) at /mcp behind three checks: a bearer token (401),
// a Host header naming this machine (403, against DNS rebinding) and, when a browser sends one,
// an allowed Origin (403). The token is checked before a byte of the body is read, and a 401
// closes the connection. Request bodies are capped at MaxMessageSize and must arrive within
// HTTPReadTimeout. CORS preflights from AllowedOrigins are answered.
func (c *Server) HTTPHandler(o HTTPOptions) http.Handler {
	stream := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return c.server }, &sdk.StreamableHTTPOptions{
		SessionTimeout: 30 * time.Minute,
		Logger:         c.logger,
	})
	calls := newClientCalls("http-")
	mux := http.NewServeMux()
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
		if !validBearer(r, o.Token) {
			// Close rather than drain: a client without the token may not trickle a body at us.
			w.Header().Set("Connection", "close")
			w.Header().Set("WWW-Authenticate", `Bearer realm="switchboard"`)
			http.Error(w, "missing or wrong bearer token: send Authorization: Bearer <token> (`switchboard token` prints it; or set --token / SWITCHBOARD_TOKEN)", http.StatusUnauthorized)
			return
		}
		if !localHost(r.Host) {
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
		rc := http.NewResponseController(w)
		if r.Method == http.MethodPost {
			// Read the body here, within the server's ReadTimeout, then lift the deadline: the
			// reply may be an SSE stream that outlives it.
			body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxMessageSize))
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
			if r.Header.Get("Mcp-Session-Id") == "" && isDiscover(body) {
				writeDiscoverUnsupported(w, body, r.Header.Get("Mcp-Protocol-Version"))
				return
			}
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
		r = r.WithContext(withConnInfo(r.Context(), &Conn{transport: "http", peer: r.RemoteAddr, toolsMode: r.URL.Query().Get(ToolsModeParam)}))
		stream.ServeHTTP(w, r)
	})
	return mux
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

// isDiscover reports whether a POST body is a single server/discover call.
func isDiscover(body []byte) bool {
	var m struct {
		Method string `json:"method"`
	}
	return json.Unmarshal(body, &m) == nil && m.Method == "server/discover"
}

// writeDiscoverUnsupported answers a server/discover that arrives without a session with -32601
// (method not found): the one answer on which every client SDK we test falls back to the
// initialize handshake.
//
// The endpoint is go-sdk's stateful StreamableHTTPHandler, which serves the session-based
// protocol revisions (up to 2025-11-25). go-sdk v1.8.0 answers a sessionless discover
// successfully, listing only those versions; mark3labs/mcp-go v1.2 takes any successful discover
// as agreement to 2026-07-28, and every later request fails. Answered with -32022 (unsupported
// protocol version), the Vercel AI SDK treats the error as final and never connects. -32601 is
// what a server from before 2026-07-28 answers, and the AI SDK, go-sdk and mcp-go all fall back
// from it (test/clients/clients_test.go drives the AI SDK, mcp/http_hardening_test.go).
//
// A stateless 2026-07-28 endpoint (go-sdk's Stateless mode) would make every request its own
// session: no Sessions-view entry that lasts, no per-session workspace, approvals or
// subscriptions — the things this hub is for — so the session-based revisions stay.
func writeDiscoverUnsupported(w http.ResponseWriter, body []byte, _ string) {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	_ = json.Unmarshal(body, &m)
	if len(m.ID) == 0 {
		m.ID = json.RawMessage("null")
	}
	reply := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", m.ID, jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "server/discover is not served on this endpoint: it serves the session-based protocol versions; use initialize"}}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(reply)
}

func validBearer(r *http.Request, token string) bool {
	if token == "" {
		return false
	}
	got, ok := bearerToken(r.Header.Get("Authorization"))
	if !ok {
		return false
	}
	a, b := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(token))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

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
	srv := newHTTPServer(c.HTTPHandler(o), o.readTimeout())
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
