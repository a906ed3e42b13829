package agentic

import (
	"crypto/tls"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"time"
)

// Environment variables that configure the bridge (read by internal/config; named in errors).
const (
	EnvURL   = "SWITCHBOARD_IDE_URL"
	EnvToken = "SWITCHBOARD_IDE_TOKEN"
)

// Defaults, as in the reference design (plus ResponseWait).
const (
	DefaultBackendURL           = "ws://localhost:9876/ws"
	DefaultReconnectInterval    = 2 * time.Second
	DefaultMaxReconnectInterval = 30 * time.Second
	DefaultResponseWait         = 1500 * time.Millisecond
)

// Config configures the IDE subsystem and its bridge to the agentic backend.
type Config struct {
	// BackendURL is the backend's WebSocket endpoint.
	BackendURL string
	// Token, when set, is sent as "Authorization: Bearer <token>".
	Token string
	// WorkspaceRoot is announced to the backend in the hello frame so it can
	// relate sessions and builds to the local checkout.
	WorkspaceRoot string
	// ReconnectInterval is the first backoff delay; it doubles per failed
	// dial up to MaxReconnectInterval and resets after a successful connection.
	ReconnectInterval    time.Duration
	MaxReconnectInterval time.Duration
	// ResponseWait bounds how long a tool waits for the backend's answer
	// before it answers from the local state store.
	ResponseWait time.Duration
	// Logger receives connection state changes; nil means slog.Default().
	Logger *slog.Logger
	// TLSConfig is used for wss:// URLs; nil means the system's roots.
	TLSConfig *tls.Config

	// RetryHook, when set, observes every scheduled reconnect delay. Tests use
	// it to check the backoff schedule without timing assertions.
	RetryHook func(delay time.Duration)
}

// DefaultConfig returns the reference defaults.
func DefaultConfig() Config {
	return Config{
		BackendURL:           DefaultBackendURL,
		ReconnectInterval:    DefaultReconnectInterval,
		MaxReconnectInterval: DefaultMaxReconnectInterval,
		ResponseWait:         DefaultResponseWait,
	}
}

// PlaintextTokenWarning returns a warning when token would be sent in clear text: a ws:// URL
// whose host is not loopback. On loopback the token never leaves the machine; use wss:// for
// any other host. "" means nothing to warn about.
func PlaintextTokenWarning(rawURL, token string) string {
	if token == "" {
		return ""
	}
	u, err := url.Parse(rawURL)
	if err != nil || !strings.EqualFold(u.Scheme, "ws") {
		return ""
	}
	host := u.Hostname()
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return ""
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return ""
	}
	return "the IDE bridge token is sent in clear text over ws:// to " + u.Host + ", which is not this machine: anyone on the network path can read it; use wss:// (TLS) for a remote agentic backend"
}

// Normalized fills zero fields with defaults so a partly set Config works.
func (c Config) Normalized() Config {
	if c.BackendURL == "" {
		c.BackendURL = DefaultBackendURL
	}
	if c.ReconnectInterval <= 0 {
		c.ReconnectInterval = DefaultReconnectInterval
	}
	if c.MaxReconnectInterval <= 0 {
		c.MaxReconnectInterval = DefaultMaxReconnectInterval
	}
	if c.MaxReconnectInterval < c.ReconnectInterval {
		c.MaxReconnectInterval = c.ReconnectInterval
	}
	if c.ResponseWait <= 0 {
		c.ResponseWait = DefaultResponseWait
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}
