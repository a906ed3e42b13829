package mcp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// DrainTimeout bounds how long shutdown waits for in-flight calls before closing connections.
const DrainTimeout = 10 * time.Second

// ServeStdio serves one client over stdin/stdout until the client closes stdin or ctx ends.
func (s *Service) ServeStdio(ctx context.Context) error {
	return s.ServeStream(ctx, "stdio", "stdin/stdout", pollableStdin(), os.Stdout, nil)
}

// ServeStream serves one client over a newline-delimited JSON stream. It returns when the client
// disconnects; when ctx ends it stops reading, lets in-flight calls finish (up to DrainTimeout)
// and closes the session.
func (s *Service) ServeStream(ctx context.Context, transport, peer string, r io.ReadCloser, w io.Writer, closeFn func() error) error {
	return s.serveStream(ctx, transport, peer, r, w, closeFn, lineOptions{})
}

func (s *Service) serveStream(ctx context.Context, transport, peer string, r io.ReadCloser, w io.Writer, closeFn func() error, o lineOptions) error {
	ci := &connInfo{transport: transport, peer: peer}
	ci.id = s.sessions.Add(transport, peer)
	defer s.sessions.Remove(ci.id)
	lt := &lineTransport{r: r, w: w, closeFn: closeFn, opts: o}
	ss, err := s.server.Connect(withConnInfo(ctx, ci), lt, nil)
	if err != nil {
		return fmt.Errorf("%s session: %w", transport, err)
	}
	stop := context.AfterFunc(ctx, func() {
		lt.conn.Drain()
		t := time.AfterFunc(DrainTimeout, func() { _ = ss.Close() })
		go func() { _ = ss.Wait(); t.Stop() }()
	})
	defer stop()
	err = ss.Wait()
	if lt.conn.SawBigReplies() {
		releaseMemory()
	}
	if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

var lastRelease atomic.Int64

// releaseMemory returns freed heap to the OS after a connection that moved large replies has
// closed (at most every 5 s). Without it the runtime keeps the pages of a heap goal set while
// that connection's replies were live, and the hub's RSS stays high long after the client left.
func releaseMemory() {
	now := time.Now().UnixNano()
	last := lastRelease.Load()
	if now-last < int64(5*time.Second) || !lastRelease.CompareAndSwap(last, now) {
		return
	}
	go debug.FreeOSMemory() // a full collection: off the caller's path
}

// ServeOptions tune a listener's connections.
type ServeOptions struct {
	// Token, when set, must be presented by each connection's first message (see AuthMethod).
	Token string
}

// Serve accepts connections on ln until ctx ends, one MCP session per connection. It closes ln
// and returns once every connection has finished.
func (s *Service) Serve(ctx context.Context, ln net.Listener, transport string) error {
	return s.ServeListener(ctx, ln, transport, ServeOptions{})
}

// ServeListener is Serve with options. A connection whose first line is not a JSON-RPC message
// (say, an HTTP request a web page sent to the TCP port) is closed unread. Accept errors — out of
// descriptors (EMFILE, ENFILE), a connection aborted before it was accepted, anything else — are
// retried with backoff: only ctx (shutdown, the user's toggle) or closing ln ends the listener.
func (s *Service) ServeListener(ctx context.Context, ln net.Listener, transport string, so ServeOptions) error {
	var wg sync.WaitGroup
	stop := context.AfterFunc(ctx, func() { _ = ln.Close() })
	defer stop()
	var backoff time.Duration
	for {
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				break
			}
			// Only shutdown or the user's toggle (which close ln) end a listener. Temporary errors
			// (out of descriptors, an aborted connection) pass; anything else is retried too,
			// more slowly, and logged as an error.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			if temporaryAcceptError(err) {
				s.logger.Warn("accept failed; retrying", "transport", transport, "error", err, "retry_in", backoff)
			} else {
				backoff = time.Second
				s.logger.Error("accept failed; retrying", "transport", transport, "error", err, "retry_in", backoff)
			}
			select {
			case <-time.After(backoff):
			case <-ctx.Done():
			}
			continue
		}
		backoff = 0
		peer := peerOf(conn)
		o := lineOptions{socket: true, token: so.Token, reject: func(reason string) {
			s.logger.Warn("closed a connection unserved", "transport", transport, "peer", peer, "reason", reason)
		}}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer conn.Close()
			if err := s.serveStream(ctx, transport, peer, conn, conn, conn.Close, o); err != nil {
				s.logger.Debug("connection ended", "transport", transport, "error", err)
			}
		}()
	}
	_ = ln.Close()
	wg.Wait()
	return nil
}

// temporaryAcceptError reports accept errors that pass: descriptor or buffer exhaustion and
// connections reset before they were accepted.
func temporaryAcceptError(err error) bool {
	for _, e := range []error{syscall.EMFILE, syscall.ENFILE, syscall.ECONNABORTED, syscall.ENOBUFS, syscall.ENOMEM, syscall.EINTR, syscall.EAGAIN, syscall.EPROTO, syscall.ECONNRESET} {
		if errors.Is(err, e) {
			return true
		}
	}
	var te interface{ Temporary() bool }
	return errors.As(err, &te) && te.Temporary()
}

// ListenUnix creates the hub's Unix socket: parent directory 0700, socket 0600. A stale socket
// file (nobody answering) is replaced; a live one belongs to another running hub and is never
// stolen. The socket file is removed when the listener closes.
func ListenUnix(path string) (net.Listener, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("unix socket dir: %w", err)
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("unix socket %s: a non-socket file is in the way; remove it or pass --unix with another path", path)
		}
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return nil, fmt.Errorf("unix socket %s: another Switchboard hub is listening there; connect to it with `switchboard connect --socket %s` or pass --unix with another path", path, path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("remove stale socket %s: %w", path, err)
		}
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listen unix %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("chmod socket %s: %w", path, err)
	}
	return ln, nil
}

// ListenTCP listens on addr and warns loudly when the address is reachable from other machines.
// authenticated says whether connections will have to present a token.
func ListenTCP(addr string, logger *slog.Logger, authenticated bool) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen tcp %s: %w", addr, err)
	}
	if !isLoopback(ln.Addr()) {
		msg := fmt.Sprintf("WARNING: MCP over TCP is listening on %s, reachable from other machines, WITHOUT authentication. Anyone who can reach it can read and write your workspace and run processes. Bind 127.0.0.1 unless you mean it.", ln.Addr())
		if authenticated {
			msg = fmt.Sprintf("WARNING: MCP over TCP is listening on %s, reachable from other machines. Connections must present the token, but the traffic (token included) is not encrypted: use it only on networks you trust, or tunnel it (ssh -L).", ln.Addr())
		}
		fmt.Fprintln(os.Stderr, msg)
		logger.Warn(msg)
	}
	return ln, nil
}

func isLoopback(a net.Addr) bool {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP.IsLoopback()
	}
	return true
}

// HTTPOptions configure the Streamable HTTP endpoint.
type HTTPOptions struct {
	Token string // required bearer token
	// AllowedOrigins are browser origins (e.g. "http://localhost:6274", the MCP Inspector) allowed
	// besides the endpoint's own loopback origins; their CORS preflights are answered.
	AllowedOrigins []string
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

// httpReadTimeout is HTTPReadTimeout; tests shorten it.
var httpReadTimeout = HTTPReadTimeout

// NewHTTPServer returns an http.Server with the hub's timeouts and header cap.
func NewHTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: min(HTTPHeaderTimeout, httpReadTimeout),
		ReadTimeout:       httpReadTimeout,
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
func (s *Service) HTTPHandler(o HTTPOptions) http.Handler {
	stream := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.server }, &sdk.StreamableHTTPOptions{
		SessionTimeout: 30 * time.Minute,
		Logger:         s.logger,
	})
	calls := newHTTPCalls()
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
				http.Error(w, fmt.Sprintf("reading the request body: %v (limit %d MiB, within %s)", err, MaxMessageSize>>20, httpReadTimeout), code)
				return
			}
			if r.Header.Get("Mcp-Session-Id") == "" && isDiscover(body) {
				writeDiscoverUnsupported(w, body, r.Header.Get("Mcp-Protocol-Version"))
				return
			}
			// Alias ids go-sdk cannot carry, and keep the replies to cancelled calls off the
			// wire (mcp/httpcancel.go).
			prepared, repl, inflight, release := calls.prepare(r.Header.Get("Mcp-Session-Id"), body)
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
		r = r.WithContext(withConnInfo(r.Context(), &connInfo{transport: "http", peer: r.RemoteAddr}))
		stream.ServeHTTP(w, r)
	})
	return mux
}

var httpAliases atomic.Int64

// needsAlias reports whether a request id cannot pass through go-sdk unchanged.
func needsAlias(id json.RawMessage) bool {
	id = bytes.TrimSpace(id)
	switch {
	case len(id) == 0 || string(id) == "null":
		return false
	case id[0] == '"':
		var s string
		return json.Unmarshal(id, &s) == nil && strings.HasPrefix(s, aliasPrefix)
	case id[0] == '-' || (id[0] >= '0' && id[0] <= '9'):
		n, err := strconv.ParseInt(string(id), 10, 64)
		return err != nil || !intLiteral.Match(id) || string(id) == "-0" || n < -1<<53 || n > 1<<53
	}
	return false
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

// writeDiscoverUnsupported answers a server/discover that arrives without a session.
//
// The endpoint is go-sdk's stateful StreamableHTTPHandler, which serves the session-based
// protocol revisions (up to 2025-11-25) but rejects the sessionless 2026-07-28 revision with
// 400 "unsupported protocol version" — except server/discover, which go-sdk v1.8.0 exempts from
// that rejection and answers successfully, listing only the legacy versions. go-sdk's own client
// reads that list and falls back to initialize; mark3labs/mcp-go v1.2 takes any successful
// discover as agreement to 2026-07-28, and every later request fails. So we answer discover the
// way go-sdk answers every other 2026-07-28 request here: error -32022 (unsupported protocol
// version) naming the versions this endpoint serves, on which every client falls back to the
// initialize handshake.
func writeDiscoverUnsupported(w http.ResponseWriter, body []byte, requested string) {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	_ = json.Unmarshal(body, &m)
	if len(m.ID) == 0 {
		m.ID = json.RawMessage("null")
	}
	var legacy []string
	for _, v := range sdk.SupportedProtocolVersions() {
		if v < "2026-07-28" {
			legacy = append(legacy, v)
		}
	}
	data, _ := json.Marshal(sdk.UnsupportedProtocolVersionData{Supported: legacy, Requested: requested})
	reply := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", m.ID, jsonrpc.Error{Code: sdk.CodeUnsupportedProtocolVersion, Message: "this endpoint serves session-based protocol versions; use initialize", Data: data}}
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
func (s *Service) ServeHTTP(ctx context.Context, ln net.Listener, o HTTPOptions) error {
	srv := NewHTTPServer(s.HTTPHandler(o))
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
