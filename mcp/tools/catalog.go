package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/handles"
	"github.com/switchboard-hub/switchboard/internal/tsdecl"
	"github.com/switchboard-hub/switchboard/mcp/tool"
)

// The catalogue tools: in the search and script tools modes a client lists only a few tools and
// finds the rest with tools_search, calls them with tools_call (the hub rewrites that call into
// the real tool's before policy and audit see it, mcp/modes.go), and reads results too large for
// its context through handles (result_read, result_search). In no toolset: the tools mode, not a
// toolset switch, decides whether they are listed.

// Names of the catalogue tools.
const (
	ToolToolsSearch  = "tools_search"
	ToolToolsCall    = "tools_call"
	ToolResultRead   = "result_read"
	ToolResultSearch = "result_search"
)

// Tools modes: how much of the catalogue a client lists.
const (
	ModeFull   = "full"   // every offered tool
	ModeSearch = "search" // the core, tools_search and tools_call
	ModeScript = "script" // the core, tools_search and script_run
)

// CatalogSearchInput is tools_search's input.
type CatalogSearchInput struct {
	Query string `json:"query" jsonschema:"what the tool should do, in words"`
	Limit int    `json:"limit,omitempty" jsonschema:"how many tools (default 8, at most 50)"`
}

// FoundTool is one tool tools_search found.
type FoundTool struct {
	Name        string `json:"name" jsonschema:"the tool's name, for tools_call (or tools.<name> in a script)"`
	Description string `json:"description"`
	// Arguments describes the input in words: "path (string, required): …; offset (integer): …".
	Arguments string `json:"arguments"`
	ReadOnly  bool   `json:"read_only"`
	// InputSchema is the tool's input JSON Schema as JSON text (search and full modes).
	InputSchema string `json:"input_schema,omitempty"`
	// Declaration is the tool as a TypeScript declaration (script mode).
	Declaration string `json:"declaration,omitempty"`
}

// CatalogSearchOutput is tools_search's output.
type CatalogSearchOutput struct {
	Tools []FoundTool `json:"tools"`
	// Total is how many tools there were to search.
	Total int `json:"total"`
}

// CatalogCallInput is tools_call's input.
type CatalogCallInput struct {
	Name      string         `json:"name" jsonschema:"the tool's name as tools_search gives it"`
	Arguments map[string]any `json:"arguments,omitempty" jsonschema:"the tool's arguments"`
}

// ResultReadInput is result_read's input.
type ResultReadInput struct {
	Handle string `json:"handle" jsonschema:"the handle a large result came back as"`
	Offset int    `json:"offset,omitempty" jsonschema:"first line to read, 1-based (default 1)"`
	Limit  int    `json:"limit,omitempty" jsonschema:"how many lines (default 200, at most 2000)"`
}

// ResultSearchInput is result_search's input.
type ResultSearchInput struct {
	Handle string `json:"handle" jsonschema:"the handle a large result came back as"`
	Query  string `json:"query" jsonschema:"words the lines should contain"`
	Limit  int    `json:"limit,omitempty" jsonschema:"how many lines (default 20, at most 200)"`
}

// ResultSearchOutput is result_search's output: the best lines first.
type ResultSearchOutput struct {
	Handle  string          `json:"handle"`
	Matches []handles.Match `json:"matches" jsonschema:"matching lines (1-based line numbers), best first"`
	// Lexical is how many of the matches share a word with the query; the rest are only
	// similar.
	Lexical int `json:"lexical"`
}

// Catalog is what the catalogue tools need of the hub.
type Catalog interface {
	// Offered is the tools the hub offers now (the toolsets switched on; held, quarantined and
	// unapproved upstream tools are not among them).
	Offered() []*sdk.Tool
	// SessionMode is the calling session's tools mode (ModeFull, ModeSearch, ModeScript).
	SessionMode(ctx context.Context, req *sdk.CallToolRequest) string
	// Results is where results kept as handles live, and ResultOwner the calling session's key
	// in it.
	Results() *handles.Store
	ResultOwner(ctx context.Context, req *sdk.CallToolRequest) string
}

// CatalogTools are the catalogue tools.
type CatalogTools struct{ c Catalog }

// NewCatalogTools is the group's dependencies.
func NewCatalogTools(c Catalog) *CatalogTools { return &CatalogTools{c: c} }

// IsCatalogTool reports whether name is one of the catalogue tools (never a search result,
// never a tools_call target).
func IsCatalogTool(name string) bool {
	switch name {
	case ToolToolsSearch, ToolToolsCall, ToolResultRead, ToolResultSearch:
		return true
	}
	return false
}

// CatalogGroup declares the catalogue tools (in no toolset) as values that need no hub;
// NewCatalogTools builds the dependencies they are bound to.
func CatalogGroup() tool.Group {
	call := tool.Func(sdk.Tool{Name: ToolToolsCall, Annotations: tool.OpenWorld(tool.Write("Call any tool", true, false)),
		Description: "Call a tool tools_search found, with its arguments; checked and audited as that tool, whose result it returns."},
		(*CatalogTools).toolsCall)
	// The result is the called tool's, whatever its shape: no output schema to hold it to.
	call.Def.OutputSchema = nil
	return tool.NewGroup("",
		tool.Func(sdk.Tool{Name: ToolToolsSearch, Annotations: tool.ReadOnly("Find tools"),
			Description: "Find tools (the hub's and the user's other MCP servers') by what they do: the best matches with their arguments."},
			(*CatalogTools).toolsSearch),
		call,
		tool.Func(sdk.Tool{Name: ToolResultRead, Annotations: tool.ReadOnly("Read a kept result"),
			Description: "Read lines of a large result kept as a handle; next_offset continues (0 at the end)."},
			(*CatalogTools).resultRead),
		tool.Func(sdk.Tool{Name: ToolResultSearch, Annotations: tool.ReadOnly("Search a kept result"),
			Description: "Find the lines of a result kept as a handle that match a query, with line numbers for result_read."},
			(*CatalogTools).resultSearch),
	)
}

func (g *CatalogTools) toolsSearch(ctx context.Context, req *sdk.CallToolRequest, in CatalogSearchInput) (*sdk.CallToolResult, CatalogSearchOutput, error) {
	if strings.TrimSpace(in.Query) == "" {
		return nil, CatalogSearchOutput{}, fmt.Errorf("query: required; describe what the tool should do")
	}
	limit := in.Limit
	switch {
	case limit == 0:
		limit = 8
	case limit < 0 || limit > 50:
		return nil, CatalogSearchOutput{}, fmt.Errorf("limit: %d is out of range; use 1 to 50", limit)
	}
	var offered []*sdk.Tool
	for _, t := range g.c.Offered() {
		if !IsCatalogTool(t.Name) && !isLegacySearchTool(t.Name) {
			offered = append(offered, t)
		}
	}
	ranked, err := tool.Rank(ctx, in.Query, offered, limit)
	if err != nil {
		return nil, CatalogSearchOutput{}, err
	}
	script := g.c.SessionMode(ctx, req) == ModeScript
	out := CatalogSearchOutput{Total: len(offered), Tools: []FoundTool{}}
	for _, t := range ranked {
		f := FoundTool{Name: t.Name, Description: t.Description, Arguments: tool.ArgumentsText(t.InputSchema),
			ReadOnly: t.Annotations != nil && t.Annotations.ReadOnlyHint}
		if script {
			f.Declaration = tsdecl.Function(t.Name, "", t.InputSchema, t.OutputSchema)
		} else {
			schema, _ := json.Marshal(t.InputSchema)
			f.InputSchema = string(schema)
		}
		out.Tools = append(out.Tools, f)
	}
	return nil, out, nil
}

// isLegacySearchTool: servers_search and servers_call (server_tools = "search") stand for tools
// tools_search finds itself.
func isLegacySearchTool(name string) bool { return name == "servers_search" || name == "servers_call" }

func (g *CatalogTools) toolsCall(ctx context.Context, req *sdk.CallToolRequest, in CatalogCallInput) (*sdk.CallToolResult, struct{}, error) {
	// The hub rewrites every tools_call into the call it names before it gets here.
	return nil, struct{}{}, fmt.Errorf("name: %q is not a tool the hub offers; find one with %s", in.Name, ToolToolsSearch)
}

func (g *CatalogTools) resultRead(ctx context.Context, req *sdk.CallToolRequest, in ResultReadInput) (*sdk.CallToolResult, handles.Window, error) {
	w, err := g.c.Results().Read(g.c.ResultOwner(ctx, req), in.Handle, in.Offset, in.Limit)
	if err != nil {
		return nil, handles.Window{}, handleError(err)
	}
	// The window's lines as they are, not escaped inside JSON: that is what the model reads.
	res := &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: w.Text}}}
	if w.NextOffset > 0 || w.Truncated {
		res.Content = append(res.Content, &sdk.TextContent{Text: fmt.Sprintf("[lines %d-%d of %d; next_offset %d]", w.Offset, w.Offset+w.Lines-1, w.TotalLines, w.NextOffset)})
	}
	return res, w, nil
}

func (g *CatalogTools) resultSearch(ctx context.Context, req *sdk.CallToolRequest, in ResultSearchInput) (*sdk.CallToolResult, ResultSearchOutput, error) {
	matches, lexical, err := g.c.Results().Search(ctx, g.c.ResultOwner(ctx, req), in.Handle, in.Query, in.Limit)
	if err != nil {
		return nil, ResultSearchOutput{}, handleError(err)
	}
	if matches == nil {
		matches = []handles.Match{}
	}
	return nil, ResultSearchOutput{Handle: strings.TrimSpace(in.Handle), Matches: matches, Lexical: lexical}, nil
}

func handleError(err error) error {
	return fmt.Errorf("handle: %w; a handle lives while its session does and the hub has room for it: run the call again for a new one", err)
}
