package mcp

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/switchboard-hub/switchboard/internal/listeners"
	"github.com/switchboard-hub/switchboard/internal/wshub"
	"github.com/switchboard-hub/switchboard/mcp/channel"
	mcptransport "github.com/switchboard-hub/switchboard/mcp/transport"
)

// Transport names, as the dashboard, tray and config use them.
const (
	TransportUnix = "unix"
	TransportTCP  = "tcp"
	TransportHTTP = "http"
	TransportWS   = "ws"
)

// TransportConfig holds where each switchable transport listens.
type TransportConfig struct {
	UnixPath  string
	TCPAddr   string
	HTTPAddr  string
	HTTPToken string
	HubAddr   string
	// TCPToken is the token TCP connections present (transport.AuthMethod). It is required when
	// TCP binds beyond loopback, and on loopback too when TCPRequireToken is set.
	TCPToken        string
	TCPRequireToken bool
	// HTTPAllowedOrigins are browser origins allowed on the HTTP endpoint besides its own.
	HTTPAllowedOrigins []string
	// HTTPReadTimeout bounds reading one HTTP request, body included (0: 30 s,
	// transport.HTTPReadTimeout).
	HTTPReadTimeout time.Duration
	// HTTPClientTokens lets in each client's own bearer token besides HTTPToken and names the
	// client (clienttokens.Store): the identity of a stateless 2026-07-28 client. The Unix socket
	// and TCP check the token a connect relay presents in its hello against it too. nil: none.
	HTTPClientTokens mcptransport.ClientTokens `json:"-"`
	// HTTPOAuth is the hub's authorization server ([http] auth = "oauth"; nil: static token
	// only). HTTP listens beyond loopback only with it and with HTTPTLS.
	HTTPOAuth mcptransport.OAuthResource
	// HTTPTLS serves HTTP over TLS beyond loopback, and on loopback too with HTTPTLSOnLoopback
	// (the user's own certificate); nil: plain HTTP, loopback only.
	HTTPTLS           *tls.Config
	HTTPTLSOnLoopback bool
}

// TransportStatus is one transport as the dashboard shows it.
type TransportStatus struct {
	Name    string `json:"name"`
	Running bool   `json:"running"`
	Addr    string `json:"addr"`
	URL     string `json:"url,omitempty"`
	// Auth says how clients authenticate, for the dashboard.
	Auth  string `json:"auth,omitempty"`
	Error string `json:"error,omitempty"`
}

// Transports switches the listening transports on and off at run time, so the tray and the
// dashboard can open and close ports without restarting the hub.
type Transports struct {
	conns   *mcptransport.Server
	hub     *wshub.Hub               // the WebSocket hub, the "ws" transport; nil without one
	control mcptransport.ControlFunc // answers ControlMethod on the Unix socket
	cfg     TransportConfig

	mu        sync.Mutex
	running   map[string]*runningTransport
	lastErr   map[string]string
	listeners listeners.Set[[]TransportStatus]
}

type runningTransport struct {
	scheme string // http or https, for TransportHTTP's URL
	addr   string
	auth   string
	cancel context.CancelFunc
	done   chan struct{}
}

func newTransports(conns *mcptransport.Server, h *wshub.Hub, control mcptransport.ControlFunc, cfg TransportConfig) *Transports {
	t := &Transports{conns: conns, hub: h, control: control, cfg: cfg, running: map[string]*runningTransport{}, lastErr: map[string]string{}}
	if h != nil {
		h.SetSnapshotProvider(channel.Transports, func(string) (any, bool) {
			return TransportsFeed{Transports: t.Status()}, true
		})
		t.OnChange(func(st []TransportStatus) {
			h.Publish(channel.Transports, wshub.TypeEvent, TransportsFeed{Transports: st})
		})
		// ws_start can open the hub's listener without going through Transports; the hub tells us.
		h.OnChange(func(wshub.Stats) { t.notify() })
	}
	return t
}

// loopbackAddr reports whether a listen address names a loopback host ("" and 0.0.0.0 do not).
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Set switches one transport on or off.
func (t *Transports) Set(ctx context.Context, name string, enabled bool) error {
	if enabled {
		return t.Start(name)
	}
	return t.Stop(ctx, name)
}

// Start opens a transport; starting a running one is a no-op.
func (t *Transports) Start(name string) error { return t.startOn(name, "") }

// startOn is Start listening on addr instead of the configured address when addr is not empty
// (a restart keeps the port a ":0" address was given).
func (t *Transports) startOn(name, addr string) error {
	t.mu.Lock()
	if _, ok := t.running[name]; ok {
		t.mu.Unlock()
		return nil
	}
	t.mu.Unlock()
	err := t.start(name, addr)
	t.mu.Lock()
	if err != nil {
		t.lastErr[name] = err.Error()
	} else {
		delete(t.lastErr, name)
	}
	t.mu.Unlock()
	t.notify()
	return err
}

func (t *Transports) start(name, addr string) error {
	c := t.conns
	t.mu.Lock()
	cfg := t.cfg // SetAddr and SetSecurity may change it meanwhile
	t.mu.Unlock()
	if addr != "" {
		switch name {
		case TransportTCP:
			cfg.TCPAddr = addr
		case TransportHTTP:
			cfg.HTTPAddr = addr
		}
	}
	if name == TransportWS {
		// The hub owns its listener (ws_start can open it too), so its state is read from it.
		if t.hub == nil {
			return errors.New("ws: no WebSocket hub configured")
		}
		_, _, err := t.hub.Start(cfg.HubAddr)
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	rt := &runningTransport{cancel: cancel, done: make(chan struct{})}
	var serve func() error
	switch name {
	case TransportUnix:
		ln, err := mcptransport.ListenUnix(cfg.UnixPath)
		if err != nil {
			cancel()
			return err
		}
		rt.addr, rt.auth = cfg.UnixPath, "socket mode 0600 (this user only)"
		serve = func() error {
			return c.ServeListener(ctx, ln, TransportUnix, mcptransport.ServeOptions{Control: t.control, ClientTokens: cfg.HTTPClientTokens})
		}
	case TransportTCP:
		needToken := cfg.TCPRequireToken || !loopbackAddr(cfg.TCPAddr)
		if needToken && cfg.TCPToken == "" {
			cancel()
			return fmt.Errorf("tcp: %s is reachable beyond loopback and no token is configured; set [tcp] token (or SWITCHBOARD_TCP_TOKEN), or bind 127.0.0.1", cfg.TCPAddr)
		}
		ln, err := mcptransport.ListenTCP(cfg.TCPAddr, c.Logger(), needToken)
		if err != nil {
			cancel()
			return err
		}
		so := mcptransport.ServeOptions{ClientTokens: cfg.HTTPClientTokens}
		if needToken || !mcptransport.IsLoopback(ln.Addr()) {
			if cfg.TCPToken == "" {
				ln.Close()
				cancel()
				return fmt.Errorf("tcp: %s is reachable beyond loopback and no token is configured; set [tcp] token (or SWITCHBOARD_TCP_TOKEN), or bind 127.0.0.1", ln.Addr())
			}
			so.Token = cfg.TCPToken
		}
		rt.auth = "loopback only, no token (first line must be JSON-RPC)"
		if so.Token != "" {
			rt.auth = "token required (switchboard/auth handshake; `switchboard token`)"
		}
		rt.addr = ln.Addr().String()
		serve = func() error { return c.ServeListener(ctx, ln, TransportTCP, so) }
	case TransportHTTP:
		if cfg.HTTPToken == "" {
			cancel()
			return errors.New("http: no bearer token configured; set --token or SWITCHBOARD_TOKEN")
		}
		if !loopbackAddr(cfg.HTTPAddr) && (cfg.HTTPOAuth == nil || cfg.HTTPTLS == nil) {
			cancel()
			return fmt.Errorf(`http: %s is reachable beyond loopback; set [http] auth = "oauth" (each client is then approved on this dashboard, over TLS), or bind 127.0.0.1`, cfg.HTTPAddr)
		}
		ln, err := net.Listen("tcp", cfg.HTTPAddr)
		if err != nil {
			cancel()
			return fmt.Errorf("listen http %s: %w", cfg.HTTPAddr, err)
		}
		rt.addr, rt.scheme = ln.Addr().String(), "http"
		rt.auth = "bearer token (`switchboard token`) or a client's own (Settings › Client tokens), loopback Host only; sessions (initialize) and stateless 2026-07-28 on one URL"
		if cfg.HTTPOAuth != nil {
			rt.auth = "bearer token or a client's own on loopback; OAuth (clients approved on the dashboard) from any address; sessions and stateless 2026-07-28 on one URL"
		}
		if cfg.HTTPTLS != nil && (cfg.HTTPTLSOnLoopback || !mcptransport.IsLoopback(ln.Addr())) {
			ln, rt.scheme = tls.NewListener(ln, cfg.HTTPTLS), "https"
		}
		serve = func() error {
			return c.ServeHTTP(ctx, ln, mcptransport.HTTPOptions{Token: cfg.HTTPToken, ClientTokens: cfg.HTTPClientTokens, AllowedOrigins: cfg.HTTPAllowedOrigins,
				ReadTimeout: cfg.HTTPReadTimeout, OAuth: cfg.HTTPOAuth})
		}
	default:
		cancel()
		return fmt.Errorf("transport %q: unknown; use unix, tcp, http or ws", name)
	}
	t.mu.Lock()
	t.running[name] = rt
	t.mu.Unlock()
	go func() { // owned by rt: ends when rt.cancel is called (Stop/StopAll)
		defer close(rt.done)
		if err := serve(); err != nil {
			c.Logger().Error("transport stopped", "transport", name, "error", err)
			t.mu.Lock()
			t.lastErr[name] = err.Error()
			t.mu.Unlock()
		}
		t.mu.Lock()
		if t.running[name] == rt {
			delete(t.running, name)
		}
		t.mu.Unlock()
		t.notify()
	}()
	return nil
}

// SetAddr changes where a transport listens (the Unix socket's path for unix). A running
// transport is closed and opened again on the new address; when that fails, it goes back to the
// old one (still running) and the error says why the new one was refused.
func (t *Transports) SetAddr(ctx context.Context, name, addr string) error {
	t.mu.Lock()
	var field *string
	switch name {
	case TransportUnix:
		field = &t.cfg.UnixPath
	case TransportTCP:
		field = &t.cfg.TCPAddr
	case TransportHTTP:
		field = &t.cfg.HTTPAddr
	default:
		t.mu.Unlock()
		return fmt.Errorf("transport %q: its address cannot be changed while the hub runs; use unix, tcp or http", name)
	}
	old := *field
	_, running := t.running[name]
	*field = addr
	t.mu.Unlock()
	if old == addr {
		return nil
	}
	if !running {
		t.notify()
		return nil
	}
	if err := t.Stop(ctx, name); err != nil {
		return err
	}
	err := t.Start(name)
	if err == nil {
		return nil
	}
	t.mu.Lock()
	*field = old
	t.mu.Unlock()
	if back := t.Start(name); back != nil {
		return fmt.Errorf("%w (and it did not start again on %s: %v)", err, old, back)
	}
	return err
}

// TransportSecurity is how TCP and HTTP clients are let in: the tokens they present, whether TCP
// asks for its token on loopback too, and the browser origins HTTP accepts besides its own.
type TransportSecurity struct {
	TCPToken           string
	TCPRequireToken    bool
	HTTPToken          string
	HTTPAllowedOrigins []string
}

// Security returns the transports' security settings as they are now.
func (t *Transports) Security() TransportSecurity {
	t.mu.Lock()
	defer t.mu.Unlock()
	return TransportSecurity{TCPToken: t.cfg.TCPToken, TCPRequireToken: t.cfg.TCPRequireToken,
		HTTPToken: t.cfg.HTTPToken, HTTPAllowedOrigins: slices.Clone(t.cfg.HTTPAllowedOrigins)}
}

// SetSecurity changes the tokens, TCP's require_token and HTTP's allowed origins. A running TCP
// or HTTP transport whose settings changed is closed and opened again on the address it had, so
// no connection outlives the rules it was let in under (clients reconnect with the new token).
// When a transport does not open again (e.g. require_token without a token), everything goes
// back to the previous settings, running as before, and the error says why.
func (t *Transports) SetSecurity(ctx context.Context, sec TransportSecurity) error {
	t.mu.Lock()
	old := TransportSecurity{TCPToken: t.cfg.TCPToken, TCPRequireToken: t.cfg.TCPRequireToken,
		HTTPToken: t.cfg.HTTPToken, HTTPAllowedOrigins: t.cfg.HTTPAllowedOrigins}
	apply := func(s TransportSecurity) {
		t.cfg.TCPToken, t.cfg.TCPRequireToken = s.TCPToken, s.TCPRequireToken
		t.cfg.HTTPToken, t.cfg.HTTPAllowedOrigins = s.HTTPToken, slices.Clone(s.HTTPAllowedOrigins)
	}
	apply(sec)
	t.mu.Unlock()
	changed := map[string]bool{
		TransportTCP:  old.TCPToken != sec.TCPToken || old.TCPRequireToken != sec.TCPRequireToken,
		TransportHTTP: old.HTTPToken != sec.HTTPToken || !slices.Equal(old.HTTPAllowedOrigins, sec.HTTPAllowedOrigins),
	}
	var restarted []string
	for _, name := range []string{TransportTCP, TransportHTTP} {
		if !changed[name] {
			continue
		}
		was, err := t.restart(ctx, name)
		if err == nil {
			if was != "" {
				restarted = append(restarted, name)
			}
			continue
		}
		// Back to the old settings: the transports restarted so far, and this one.
		t.mu.Lock()
		apply(old)
		t.mu.Unlock()
		var errs []error
		for _, n := range append(restarted, name) {
			if _, back := t.restart(ctx, n); back != nil {
				errs = append(errs, fmt.Errorf("%s did not open again with its previous settings: %w", n, back))
			}
			if n == name && was != "" {
				if back := t.startOn(n, was); back != nil {
					errs = append(errs, fmt.Errorf("%s did not open again with its previous settings: %w", n, back))
				}
			}
		}
		return errors.Join(append([]error{err}, errs...)...)
	}
	t.notify()
	return nil
}

// restart closes a running transport and opens it again on the address it was bound to; was is
// that address ("" when it was not running, and then nothing happens).
func (t *Transports) restart(ctx context.Context, name string) (was string, err error) {
	t.mu.Lock()
	rt, ok := t.running[name]
	t.mu.Unlock()
	if !ok {
		return "", nil
	}
	if err := t.Stop(ctx, name); err != nil {
		return rt.addr, err
	}
	return rt.addr, t.startOn(name, rt.addr)
}

// Stop closes a transport, letting in-flight calls finish (bounded by transport.DrainTimeout).
func (t *Transports) Stop(ctx context.Context, name string) error {
	if name == TransportWS {
		if t.hub == nil {
			return nil
		}
		err := t.hub.Stop(ctx)
		t.notify()
		return err
	}
	t.mu.Lock()
	rt, ok := t.running[name]
	t.mu.Unlock()
	if !ok {
		return nil
	}
	rt.cancel()
	select {
	case <-rt.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("stop %s: %w", name, ctx.Err())
	}
}

// StopAll closes every transport.
func (t *Transports) StopAll(ctx context.Context) error {
	var errs []error
	for _, name := range []string{TransportTCP, TransportHTTP, TransportUnix, TransportWS} {
		errs = append(errs, t.Stop(ctx, name))
	}
	return errors.Join(errs...)
}

// Status lists all four transports, running or not.
func (t *Transports) Status() []TransportStatus {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]TransportStatus, 0, 4)
	for _, name := range []string{TransportUnix, TransportTCP, TransportHTTP, TransportWS} {
		st := TransportStatus{Name: name, Error: t.lastErr[name]}
		scheme := "http"
		switch name {
		case TransportUnix:
			st.Addr = t.cfg.UnixPath
		case TransportTCP:
			st.Addr = t.cfg.TCPAddr
		case TransportHTTP:
			st.Addr = t.cfg.HTTPAddr
		case TransportWS:
			st.Addr = t.cfg.HubAddr
		}
		if rt, ok := t.running[name]; ok {
			st.Running, st.Addr, st.Auth = true, rt.addr, rt.auth
			scheme = rt.scheme
		}
		if name == TransportWS && t.hub != nil && t.hub.Running() {
			st.Running, st.Addr, st.Auth = true, t.hub.Addr(), "hub token, Origin allow-list"
		}
		if st.Running {
			switch name {
			case TransportHTTP:
				st.URL = scheme + "://" + st.Addr + "/mcp"
			case TransportWS:
				st.URL = "ws://" + st.Addr + "/ws"
			case TransportTCP:
				st.URL = "tcp://" + st.Addr
			case TransportUnix:
				st.URL = "unix://" + st.Addr
			}
		}
		out = append(out, st)
	}
	return out
}

// ConfigAddr is where a transport is set to listen (what SetAddr last set), running or not.
func (t *Transports) ConfigAddr(name string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch name {
	case TransportUnix:
		return t.cfg.UnixPath
	case TransportTCP:
		return t.cfg.TCPAddr
	case TransportHTTP:
		return t.cfg.HTTPAddr
	case TransportWS:
		return t.cfg.HubAddr
	}
	return ""
}

// Addr returns the bound address of a running transport ("" when off).
func (t *Transports) Addr(name string) string {
	if name == TransportWS && t.hub != nil {
		return t.hub.Addr()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if rt, ok := t.running[name]; ok {
		return rt.addr
	}
	return ""
}

// OnChange registers fn for status changes (called without locks held) until cancel is called.
func (t *Transports) OnChange(fn func([]TransportStatus)) (cancel func()) {
	return t.listeners.Add(fn)
}

func (t *Transports) notify() {
	t.listeners.Notify(t.Status())
}
