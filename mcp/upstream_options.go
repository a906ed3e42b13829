package mcp

import (
	"github.com/switchboard-hub/switchboard/internal/upstream"
)

// The user's other MCP servers are proxied by mcp/proxy; these options bring them into a hub.

// WithUpstreams serves the approved tools, resources and prompts of the servers m runs.
func WithUpstreams(m *upstream.Manager) Option {
	return func(s *Service) error { s.opts.upstreams = m; return nil }
}

// WithUpstreamToolSearch is server_tools = "search": servers_search and servers_call are served
// (callable by name), and without a mode of its own (WithToolsMode) the hub is in the search tools
// mode with every hub toolset as the core, so clients list the hub's tools and tools_search /
// tools_call instead of the servers' tools (mcp/modes.go).
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
