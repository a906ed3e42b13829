package mcp

import sdk "github.com/modelcontextprotocol/go-sdk/mcp"

// registerWSTools is a placeholder; its owner replaces the body.
func (s *Service) registerWSTools(server *sdk.Server) {}
