package ide

import (
	"crypto/tls"
	"log/slog"
	"time"

	"github.com/switchboard-hub/switchboard/internal/agentic"
)

// Option adjusts the subsystem's bridge configuration (agentic.Config).
type Option func(*agentic.Config)

// WithBackendURL sets the backend's WebSocket URL.
func WithBackendURL(url string) Option { return func(c *agentic.Config) { c.BackendURL = url } }

// WithToken sets the bearer token sent to the backend.
func WithToken(token string) Option { return func(c *agentic.Config) { c.Token = token } }

// WithWorkspaceRoot sets the workspace root announced to the backend.
func WithWorkspaceRoot(root string) Option { return func(c *agentic.Config) { c.WorkspaceRoot = root } }

// WithReconnectInterval sets the first backoff delay.
func WithReconnectInterval(d time.Duration) Option {
	return func(c *agentic.Config) { c.ReconnectInterval = d }
}

// WithMaxReconnectInterval caps the backoff delay.
func WithMaxReconnectInterval(d time.Duration) Option {
	return func(c *agentic.Config) { c.MaxReconnectInterval = d }
}

// WithResponseWait sets how long tools wait for the backend's answer.
func WithResponseWait(d time.Duration) Option { return func(c *agentic.Config) { c.ResponseWait = d } }

// WithTLSConfig sets the TLS configuration for wss:// backends (e.g. a private CA).
func WithTLSConfig(tc *tls.Config) Option { return func(c *agentic.Config) { c.TLSConfig = tc } }

// WithLogger sets the logger for connection state changes.
func WithLogger(l *slog.Logger) Option { return func(c *agentic.Config) { c.Logger = l } }

// withRetryHook observes scheduled reconnect delays (tests only).
func withRetryHook(fn func(time.Duration)) Option {
	return func(c *agentic.Config) { c.RetryHook = fn }
}
