package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/mcp/tool"
)

// Tool search over the upstream servers' tools alone (server_tools = "search", which the hub maps
// onto the search tools mode: mcp/modes.go): servers_search (ranked with the RAG engine's hybrid
// ranking) and servers_call. A servers_call is rewritten into a call of the tool it names before
// the audit and policy layers see it (by the hub's modes layer, like tools_call), so rules,
// approvals and the audit log apply to the real tool exactly as when a client calls it by name
// (which still works: the tools are hidden, not removed). tools_search and tools_call
// (mcp/tools/catalog.go) do the same over every tool.

// Names of the tool-search tools.
const (
	ToolServersSearch = "servers_search"
	ToolServersCall   = "servers_call"
)

// ServersSearchInput is servers_search's input.
type ServersSearchInput struct {
	Query string `json:"query" jsonschema:"what the tool should do, in words (e.g. 'open an issue on github')"`
	Limit int    `json:"limit,omitempty" jsonschema:"how many tools to return (default 10, at most 50)"`
}

// ServersSearchOutput is servers_search's output.
type ServersSearchOutput struct {
	Tools []FoundTool `json:"tools"`
	// Total is how many upstream tools there are to search.
	Total int `json:"total"`
}

// FoundTool is one upstream tool servers_search found.
type FoundTool struct {
	Name        string `json:"name" jsonschema:"the name to pass to servers_call"`
	Server      string `json:"server"`
	Description string `json:"description"`
	ReadOnly    bool   `json:"read_only"`
	// Arguments describes the input in words: "name (string, required): Who to greet; …".
	Arguments string `json:"arguments"`
	// InputSchema is the tool's input JSON Schema, as JSON text.
	InputSchema string `json:"input_schema"`
}

// ServersCallInput is servers_call's input.
type ServersCallInput struct {
	Name      string         `json:"name" jsonschema:"the tool's name as servers_search gives it (server__tool)"`
	Arguments map[string]any `json:"arguments,omitempty" jsonschema:"the tool's arguments, as its input_schema describes"`
}

// ToolSearch is what servers_search and servers_call are bound to: the toolsets, for the tools
// served now.
type ToolSearch struct{ toolsets Toolsets }

// NewToolSearch is the tool search over the tools toolsets serve.
func NewToolSearch(toolsets Toolsets) *ToolSearch { return &ToolSearch{toolsets: toolsets} }

// ToolSearchGroup declares servers_search and servers_call (in no toolset: with server_tools =
// "search" they stand for every server's tools) as values that need no hub.
func ToolSearchGroup() tool.Group {
	return tool.NewGroup("",
		tool.Func(sdk.Tool{
			Name:        ToolServersSearch,
			Description: "Search the tools of the user's other MCP servers (connected through Switchboard) by what they do; returns each match's name, description and arguments. Call one with servers_call.",
			Annotations: tool.ReadOnly("Search server tools"),
		}, (*ToolSearch).search),
		tool.Func(sdk.Tool{
			Name:        ToolServersCall,
			Description: "Call a tool of the user's other MCP servers by the name servers_search gave, with its arguments. The call is checked and audited as that tool.",
			Annotations: tool.OpenWorld(tool.Write("Call a server tool", true, false)),
		}, (*ToolSearch).call),
	)
}

func (g *ToolSearch) search(ctx context.Context, req *sdk.CallToolRequest, in ServersSearchInput) (*sdk.CallToolResult, ServersSearchOutput, error) {
	out, err := searchUpstreamTools(ctx, g.toolsets.ActiveTools(), in)
	return nil, out, err
}

func (g *ToolSearch) call(ctx context.Context, req *sdk.CallToolRequest, in ServersCallInput) (*sdk.CallToolResult, struct{}, error) {
	// toolSearchMiddleware rewrites every servers_call before it gets here.
	return nil, struct{}{}, fmt.Errorf("name: %q is not a server tool; find one with %s", in.Name, ToolServersSearch)
}

// searchUpstreamTools ranks the upstream tools among active (the tools served now).
func searchUpstreamTools(ctx context.Context, active []*sdk.Tool, in ServersSearchInput) (ServersSearchOutput, error) {
	if strings.TrimSpace(in.Query) == "" {
		return ServersSearchOutput{}, fmt.Errorf("query: required; describe what the tool should do")
	}
	limit := in.Limit
	switch {
	case limit == 0:
		limit = 10
	case limit < 0 || limit > 50:
		return ServersSearchOutput{}, fmt.Errorf("limit: %d is out of range; use 1 to 50", limit)
	}
	var tools []*sdk.Tool
	for _, t := range active {
		if _, ok := t.Meta[UpstreamMetaKey]; ok {
			tools = append(tools, t)
		}
	}
	ranked, err := tool.Rank(ctx, in.Query, tools, limit)
	if err != nil {
		return ServersSearchOutput{}, err
	}
	out := ServersSearchOutput{Total: len(tools), Tools: []FoundTool{}}
	for _, t := range ranked {
		schema, _ := json.Marshal(t.InputSchema)
		server := ""
		if m, ok := t.Meta[UpstreamMetaKey].(map[string]string); ok {
			server = m["server"]
		}
		out.Tools = append(out.Tools, FoundTool{Name: t.Name, Server: server, Description: t.Description,
			ReadOnly: t.Annotations != nil && t.Annotations.ReadOnlyHint, Arguments: tool.ArgumentsText(t.InputSchema), InputSchema: string(schema)})
	}
	return out, nil
}
