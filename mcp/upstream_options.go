package mcp

import (
	"github.com/switchboard-hub/switchboard/internal/upstream"
)

// The user's other MCP servers are proxied by mcp/proxy; these options bring them into a hub.

// WithUpstreams serves the approved tools, resources and prompts of the servers m runs.
func WithUpstreams(m *upstream.Manager) Option {
	return func(s *Service) error { s.opts.upstreams = m; return nil }
}

// WithUpstreamToolSearch hides the upstream servers' tools from tools/list and offers
// servers_search and servers_call instead.
func WithUpstreamToolSearch(on bool) Option {
	return func(s *Service) error { s.opts.toolSearch = on; return nil }
}

// Upstreams returns the upstream-server manager, or nil.
func (s *Service) Upstreams() *upstream.Manager {
	if s.up == nil {
		return nil
	}
	return s.up.Manager()
}
