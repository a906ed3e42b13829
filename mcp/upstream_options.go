package mcp

import (
	"context"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/audit"
	"github.com/switchboard-hub/switchboard/internal/upstream"
	"github.com/switchboard-hub/switchboard/mcp/proxy"
	mcptransport "github.com/switchboard-hub/switchboard/mcp/transport"
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

// WithUpstreamHoldTimeout sets how long an upstream call that asked a question of a 2026-era
// client (answered input_required) waits for the client's retry before it is ended (default
// proxy.DefaultHoldTimeout).
func WithUpstreamHoldTimeout(d time.Duration) Option {
	return func(s *Service) error { s.opts.holdTimeout = d; return nil }
}

// auditBridgedRound writes one audit line for each question an upstream server put to a
// client through the hub (elicitation, sampling): the question is the server's, shown to the
// user by the client, and the trail says which server asked whom.
func (s *Service) auditBridgedRound(ss *sdk.ServerSession, c proxy.Caller, tool, server, method, bridge string) {
	s.audit.Record(context.Background(), audit.Entry{
		Time: time.Now().UTC(), Tool: tool, Session: c.ID, Client: mcptransport.ClientName(ss), Transport: c.Transport,
		Outcome: "asked", Args: method + " from server " + server + " (" + bridge + ")",
	}, false)
}
