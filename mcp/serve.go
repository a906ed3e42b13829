package mcp

import (
	"context"
	"io"
	"net"
	"net/http"

	mcptransport "github.com/switchboard-hub/switchboard/mcp/transport"
)

// The hub's connections are served by mcp/transport; these are the front ends' entry points.

// ServeStdio serves one client over stdin/stdout until the client closes stdin or ctx ends.
func (s *Service) ServeStdio(ctx context.Context) error { return s.conns.ServeStdio(ctx) }

// ServeStream serves one client over a newline-delimited JSON stream (transport.Server.ServeStream).
func (s *Service) ServeStream(ctx context.Context, transport, peer string, r io.ReadCloser, w io.Writer, closeFn func() error) error {
	return s.conns.ServeStream(ctx, transport, peer, r, w, closeFn)
}

// Serve accepts connections on ln until ctx ends, one MCP session per connection.
func (s *Service) Serve(ctx context.Context, ln net.Listener, transport string) error {
	return s.conns.Serve(ctx, ln, transport)
}

// ServeListener is Serve with options (transport.Server.ServeListener).
func (s *Service) ServeListener(ctx context.Context, ln net.Listener, transport string, so mcptransport.ServeOptions) error {
	return s.conns.ServeListener(ctx, ln, transport, so)
}

// HTTPHandler serves MCP over Streamable HTTP at /mcp (transport.Server.HTTPHandler).
func (s *Service) HTTPHandler(o mcptransport.HTTPOptions) http.Handler { return s.conns.HTTPHandler(o) }

// ServeHTTP runs the HTTP endpoint on ln until ctx ends, then shuts down gracefully.
func (s *Service) ServeHTTP(ctx context.Context, ln net.Listener, o mcptransport.HTTPOptions) error {
	return s.conns.ServeHTTP(ctx, ln, o)
}

// NewTransports returns a manager of the switchable transports with everything off.
func (s *Service) NewTransports(cfg TransportConfig) *Transports {
	// The control function is looked up per request: SetControl may come after the socket opens.
	return newTransports(s.conns, s.hub, s.controlLate, cfg)
}
