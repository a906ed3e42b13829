package wshub

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gorilla/websocket"
)

// ErrShutdown is returned by Start after Shutdown.
var ErrShutdown = errors.New("hub: shut down")

// ServeHTTP is the /ws endpoint. It can be mounted in any mux; the hub's
// own listener (Start) mounts it at /ws.
func (h *Hub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.serve(w, r, false)
}

func (h *Hub) serve(w http.ResponseWriter, r *http.Request, viaOwnServer bool) {
	// Origin first: a foreign web page is refused whatever it sends.
	if !h.originAllowed(r) {
		w.Header().Set("Connection", "close")
		http.Error(w, fmt.Sprintf("origin: %q is not allowed to use this hub; add it to the hub's allowed origins", r.Header.Get("Origin")), http.StatusForbidden)
		return
	}
	scope, ok := h.tokenScope(r)
	if !ok {
		w.Header().Set("Connection", "close") // never wait for the body of a stranger
		w.Header().Set("WWW-Authenticate", `Bearer realm="switchboard-hub"`)
		http.Error(w, "token: missing or wrong; pass ?token=<hub token> or the header Authorization: Bearer <hub token>", http.StatusUnauthorized)
		return
	}
	h.mu.RLock()
	closed := h.closed
	h.mu.RUnlock()
	if closed {
		http.Error(w, "hub: shutting down; reconnect to the new instance", http.StatusServiceUnavailable)
		return
	}
	capture := &hijackCapture{ResponseWriter: w}
	conn, err := h.upgrader.Upgrade(capture, r, nil)
	if err != nil {
		// Upgrade has already written the HTTP error response.
		h.log.Debug("hub: websocket upgrade failed", "remote", r.RemoteAddr, "err", err)
		return
	}
	batch := capture.conn
	if h.unbatched {
		batch = nil
	}
	c := newClient(h, conn, batch, r.RemoteAddr, viaOwnServer)
	c.scope = scope
	if !h.register(c) {
		_ = conn.WriteControl(websocket.CloseMessage,
			websocket.FormatCloseMessage(websocket.CloseGoingAway, "hub shutting down"), time.Now().Add(closeWait))
		_ = conn.Close()
		return
	}
	defer h.sessions.Done()
	h.log.Debug("hub: client connected", "client", c.id, "remote", c.remote)

	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		c.writeLoop()
	}()
	c.readLoop()
	h.unregister(c)
	<-writerDone
	h.log.Debug("hub: client disconnected", "client", c.id, "remote", c.remote)
}

// tokenScope checks r's token: the hub token allows every channel (scope nil), a scoped token
// (ScopedToken) the channels its scope allows. Digests are compared in constant time, so
// neither a token's content nor its length leaks through timing.
func (h *Hub) tokenScope(r *http.Request) (scope *Scope, ok bool) {
	got := r.URL.Query().Get("token")
	if auth := r.Header.Get("Authorization"); got == "" && auth != "" {
		const prefix = "bearer "
		if len(auth) > len(prefix) && strings.EqualFold(auth[:len(prefix)], prefix) {
			got = strings.TrimSpace(auth[len(prefix):])
		}
	}
	if got == "" {
		return nil, false
	}
	sum := sha256.Sum256([]byte(got))
	if subtle.ConstantTimeCompare(sum[:], h.tokenHash[:]) == 1 {
		return nil, true
	}
	h.scopesMu.Lock()
	defer h.scopesMu.Unlock()
	for d, sc := range h.scopes {
		if subtle.ConstantTimeCompare(sum[:], d[:]) == 1 {
			return sc, true
		}
	}
	return nil, false
}

// Scope limits what a scoped token may subscribe to.
type Scope struct {
	// Allow says whether a channel may be subscribed to.
	Allow func(channel string) bool
	// Refusal explains a refused channel to the client (what the token is for, how to get more).
	Refusal string
}

// ScopedToken returns a new token that connects like the hub token but subscribes only to the
// channels sc allows: what the hub hands an MCP client (ws_start), so one agent cannot watch
// other sessions' calls. revoke invalidates it (connections already open keep their scope).
func (h *Hub) ScopedToken(sc Scope) (token string, revoke func()) {
	token = randomToken()
	d := sha256.Sum256([]byte(token))
	h.scopesMu.Lock()
	if h.scopes == nil {
		h.scopes = map[[32]byte]*Scope{}
	}
	h.scopes[d] = &sc
	h.scopesMu.Unlock()
	return token, func() {
		h.scopesMu.Lock()
		delete(h.scopes, d)
		h.scopesMu.Unlock()
	}
}

func (h *Hub) originAllowed(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true // not a browser; the token still applies
	}
	norm := normalizeOrigin(origin)
	if _, ok := h.allowed[norm]; ok {
		return true
	}
	if addr := h.Addr(); addr != "" && norm == "http://"+strings.ToLower(addr) {
		return true
	}
	// Same origin on a loopback host: a page served by the very server this
	// handler is mounted in (the headless dashboard). Requiring a loopback
	// Host keeps DNS-rebinding pages (evil.example resolving to 127.0.0.1)
	// out, since their Host is their own name.
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return strings.EqualFold(u.Host, r.Host) && isLoopbackHost(r.Host)
}

func isLoopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Start serves /ws on its own listener at addr (e.g. "127.0.0.1:0"). If the
// listener is already running it returns its address with already=true.
func (h *Hub) Start(addr string) (bound string, already bool, err error) {
	bound, already, err = h.startListener(addr)
	if err == nil && !already {
		h.notifyChange() // outside srvMu: listeners may call Addr or Running
	}
	return bound, already, err
}

func (h *Hub) startListener(addr string) (bound string, already bool, err error) {
	h.srvMu.Lock()
	defer h.srvMu.Unlock()
	h.mu.RLock()
	closed := h.closed
	h.mu.RUnlock()
	if closed {
		return "", false, ErrShutdown
	}
	if h.ln != nil {
		return h.addr, true, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", false, fmt.Errorf("hub: listen on %q: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) { h.serve(w, r, true) })
	// The WebSocket connection is hijacked (gorilla clears the deadlines), so ReadTimeout bounds
	// only the upgrade request itself.
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10}
	done := make(chan struct{})
	h.srv, h.ln, h.addr, h.serveDone = srv, ln, ln.Addr().String(), done
	// Owned by the hub; ends when Stop or Shutdown shuts srv down.
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			h.log.Error("hub: serve ended", "addr", ln.Addr().String(), "err", err)
		}
	}()
	h.log.Info("hub: listening", "url", "ws://"+h.addr+"/ws")
	return h.addr, false, nil
}

// Stop closes the listener opened by Start and disconnects the clients that
// came through it; clients of a mux the hub is mounted in stay. A stopped
// hub can Start again.
func (h *Hub) Stop(ctx context.Context) error {
	stopped, err := h.stopListener(ctx)
	if stopped {
		h.notifyChange()
	}
	return err
}

func (h *Hub) stopListener(ctx context.Context) (stopped bool, err error) {
	h.srvMu.Lock()
	defer h.srvMu.Unlock()
	if h.ln == nil {
		return false, nil
	}
	srv, done := h.srv, h.serveDone
	h.srv, h.ln, h.addr, h.serveDone = nil, nil, "", nil
	// Shutdown closes the listener; upgraded connections are hijacked, so
	// the server does not track them and we close them ourselves.
	err = srv.Shutdown(ctx)
	<-done
	h.mu.RLock()
	for c := range h.clients {
		if c.viaOwnServer {
			c.requestClose(websocket.CloseGoingAway, "hub listener stopped")
		}
	}
	h.mu.RUnlock()
	if err != nil {
		return true, fmt.Errorf("hub: stop listener: %w", err)
	}
	return true, nil
}

// Addr is the own listener's address, or "" when not started.
func (h *Hub) Addr() string {
	h.srvMu.Lock()
	defer h.srvMu.Unlock()
	return h.addr
}

// URL is ws://ADDR/ws for the own listener, or "" when not started. A
// wildcard bind is reported with 127.0.0.1 so the URL is dialable locally.
func (h *Hub) URL() string {
	addr := h.Addr()
	if addr == "" {
		return ""
	}
	return "ws://" + dialable(addr) + "/ws"
}

func dialable(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		if ip != nil && ip.To4() == nil {
			return net.JoinHostPort("::1", port)
		}
		return net.JoinHostPort("127.0.0.1", port)
	}
	return addr
}

// Running reports whether the own listener is up.
func (h *Hub) Running() bool { return h.Addr() != "" }

// Shutdown stops the listener, sends every client a close frame (1001) and
// waits for their goroutines, or for ctx; after ctx expires it closes the
// remaining connections outright and returns ctx's error. Idempotent; the
// hub accepts no clients afterwards.
func (h *Hub) Shutdown(ctx context.Context) error {
	stopErr := h.Stop(ctx)

	h.mu.Lock()
	h.closed = true
	clients := make([]*client, 0, len(h.clients))
	for c := range h.clients {
		clients = append(clients, c)
	}
	h.mu.Unlock()
	for _, c := range clients {
		c.requestClose(websocket.CloseGoingAway, "hub shutting down")
	}

	done := make(chan struct{})
	// Ends once every session ends; the force-close below guarantees that.
	go func() {
		h.sessions.Wait()
		close(done)
	}()
	select {
	case <-done:
		return stopErr
	case <-ctx.Done():
		for _, c := range clients {
			_ = c.conn.Close()
		}
		<-done
		return fmt.Errorf("hub: shutdown: clients did not close in time: %w", ctx.Err())
	}
}
