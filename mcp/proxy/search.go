package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/rag"
	"github.com/switchboard-hub/switchboard/mcp/tool"
)

// Tool search for large catalogues (server_tools = "search"): instead of every upstream tool's
// schema, clients see servers_search (ranked with the RAG engine's hybrid ranking) and
// servers_call. A servers_call is rewritten into a call of the tool it names before the audit
// and policy layers see it, so rules, approvals and the audit log apply to the real tool exactly
// as when a client calls it by name (which still works: the tools are hidden, not removed).

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
	docs := make([]rag.RankDoc, len(tools))
	for i, t := range tools {
		docs[i] = rag.RankDoc{Name: t.Name, Title: strings.ReplaceAll(t.Name, "_", " ") + " " + t.Title, Text: t.Description + "\n" + argumentsText(t)}
	}
	hits, err := rag.Rank(ctx, in.Query, docs, limit)
	if err != nil {
		return ServersSearchOutput{}, err
	}
	out := ServersSearchOutput{Total: len(tools), Tools: []FoundTool{}}
	for _, h := range hits {
		t := tools[h.Index]
		schema, _ := json.Marshal(t.InputSchema)
		server := ""
		if m, ok := t.Meta[UpstreamMetaKey].(map[string]string); ok {
			server = m["server"]
		}
		out.Tools = append(out.Tools, FoundTool{Name: t.Name, Server: server, Description: t.Description,
			ReadOnly: t.Annotations != nil && t.Annotations.ReadOnlyHint, Arguments: argumentsText(t), InputSchema: string(schema)})
	}
	return out, nil
}

// argumentsText describes a tool's arguments in words for a model reading search results.
func argumentsText(t *sdk.Tool) string {
	b, err := json.Marshal(t.InputSchema)
	if err != nil {
		return ""
	}
	var sch struct {
		Properties map[string]struct {
			Type        any    `json:"type"`
			Description string `json:"description"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if json.Unmarshal(b, &sch) != nil || len(sch.Properties) == 0 {
		return "no arguments"
	}
	names := make([]string, 0, len(sch.Properties))
	for n := range sch.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names))
	for _, n := range names {
		p := sch.Properties[n]
		desc := fmt.Sprintf("%s (%v", n, p.Type)
		if slices.Contains(sch.Required, n) {
			desc += ", required"
		}
		desc += ")"
		if p.Description != "" {
			desc += ": " + p.Description
		}
		parts = append(parts, desc)
	}
	return strings.Join(parts, "; ")
}

// ToolSearchMiddleware hides upstream tools from tools/list and turns a servers_call into a call
// of the tool it names. It goes outside audit and policy, so both see the real tool.
func (u *Upstreams) ToolSearchMiddleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		switch method {
		case "tools/call":
			p, ok := req.GetParams().(*sdk.CallToolParamsRaw)
			if !ok || p == nil || p.Name != ToolServersCall {
				break
			}
			var in struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			}
			if err := json.Unmarshal(p.Arguments, &in); err != nil {
				return tool.ErrorText(fmt.Sprintf("arguments: must be {\"name\": \"server__tool\", \"arguments\": {…}} (%v)", err)), nil
			}
			if !u.toolsets.ServesUpstream(in.Name) {
				if why, ok := u.whyNotOffered(in.Name); ok {
					return tool.ErrorText("name: " + why), nil
				}
				return tool.ErrorText(fmt.Sprintf("name: %q is not a tool of a connected server; find one with %s", in.Name, ToolServersSearch)), nil
			}
			p.Name = in.Name
			p.Arguments = in.Arguments
			if len(p.Arguments) == 0 || string(p.Arguments) == "null" {
				p.Arguments = json.RawMessage("{}")
			}
		case "tools/list":
			res, err := next(ctx, method, req)
			if lr, ok := res.(*sdk.ListToolsResult); ok && err == nil {
				lr.Tools = slices.DeleteFunc(lr.Tools, func(t *sdk.Tool) bool {
					_, up := t.Meta[UpstreamMetaKey]
					return up
				})
			}
			return res, err
		}
		return next(ctx, method, req)
	}
}
