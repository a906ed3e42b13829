package tool

import (
	"maps"
	"slices"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tool is one tool as a value: its definition (name, description, annotations, generated
// schemas), its toolset, what its input declares about workspace paths, and — once bound — its
// handler. Declare one with Func (a method of the group's dependencies), New (a bound handler)
// or Proxied (an upstream server's tool).
type Tool struct {
	// Def is the definition clients list. Bound tools have their own copy, so a hub never
	// shares a definition with another hub or with the declaration.
	Def *sdk.Tool
	// Toolset is the toolset the tool's Group declares ("" for a tool in none, always served).
	Toolset string
	// Workspace: the tool works in the caller's workspace (a path argument or InWorkspace), so a
	// roots client is asked about its root before a call runs.
	Workspace bool
	// PathArgs are the arguments declared as workspace paths (workspace:"path"), by JSON name:
	// policy path rules match them in canonical form, and absolute ones pick a root.
	PathArgs []string
	// Handler runs a call; nil until the tool is bound (Group.Bind).
	Handler sdk.ToolHandler

	bind func(deps any) sdk.ToolHandler // Func's: builds Handler from the group's dependencies
}

// ReadOnly reports whether the tool is annotated read-only (the audit logs other tools at the
// Security level, and read-only mode serves only these).
func (t Tool) ReadOnly() bool {
	return t.Def.Annotations != nil && t.Def.Annotations.ReadOnlyHint
}

// Proxied declares a tool the hub does not implement itself (an upstream server's, whose
// arguments the upstream server checks): h receives the raw request. It carries its toolset
// like any other, so toolset switches and the policy treat it the same.
func Proxied(def *sdk.Tool, toolset string, h sdk.ToolHandler) Tool {
	t := Tool{Def: def, Handler: h}
	t.setToolset(toolset)
	return t
}

// setToolset records the toolset on the tool and in its definition's _meta, so every client
// (the CLI listing a running hub's tools included) reads it from the tool itself.
func (t *Tool) setToolset(toolset string) {
	t.Toolset = toolset
	if toolset == "" {
		return
	}
	def := *t.Def
	def.Meta = maps.Clone(def.Meta)
	if def.Meta == nil {
		def.Meta = sdk.Meta{}
	}
	def.Meta[ToolsetMetaKey] = toolset
	t.Def = &def
}

// A Group is the tools of one concern that share a toolset and one set of dependencies (a
// struct whose methods are their handlers). A group is declared without its dependencies, so
// the hub's catalogue exists before (and without) a hub; Bind makes its tools callable.
type Group struct {
	Toolset string
	Tools   []Tool
}

// NewGroup declares a group: each tool joins toolset. Several groups may share a toolset
// (file_grep and file_glob are "files" like file_read).
func NewGroup(toolset string, tools ...Tool) Group {
	for i := range tools {
		tools[i].setToolset(toolset)
	}
	return Group{Toolset: toolset, Tools: tools}
}

// Bind returns the group's tools with handlers built from deps (what the group's Func
// declarations name as D) and definitions of their own. Tools declared with New or Proxied keep
// their handler.
func (g Group) Bind(deps any) []Tool {
	out := make([]Tool, len(g.Tools))
	for i, t := range g.Tools {
		def := *t.Def
		def.Meta = maps.Clone(def.Meta)
		t.Def = &def
		if t.bind != nil {
			t.Handler = t.bind(deps)
		}
		out[i] = t
	}
	return out
}

// Defs lists the group's definitions (for listings and docs; not callable).
func (g Group) Defs() []*sdk.Tool {
	out := make([]*sdk.Tool, len(g.Tools))
	for i, t := range g.Tools {
		out[i] = t.Def
	}
	return out
}

// Inventory is the tools one hub has, in the order they joined: its groups' bound tools and the
// upstream servers' tools, which come and go with their catalogues. It is what the hub serves
// from (toolsets switch tools on and off the server by looking them up here) and what policy
// and workspace handling read declarations from. Safe for concurrent use.
type Inventory struct {
	mu    sync.Mutex
	tools []Tool
}

// Add adds tools, replacing a tool of the same name in place (an upstream tool whose
// definition changed).
func (inv *Inventory) Add(tools ...Tool) {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	for _, t := range tools {
		if i := inv.indexLocked(t.Def.Name); i >= 0 {
			inv.tools[i] = t
		} else {
			inv.tools = append(inv.tools, t)
		}
	}
}

// Remove forgets the named tools.
func (inv *Inventory) Remove(names ...string) {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	inv.tools = slices.DeleteFunc(inv.tools, func(t Tool) bool { return slices.Contains(names, t.Def.Name) })
}

// Retain keeps only the tools keep accepts (read-only mode, the disabled list).
func (inv *Inventory) Retain(keep func(Tool) bool) {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	inv.tools = slices.DeleteFunc(inv.tools, func(t Tool) bool { return !keep(t) })
}

// SortByName orders the tools by name (what go-sdk lists clients; a hub sorts its own tools
// once, before upstream tools join in the order they arrive).
func (inv *Inventory) SortByName() {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	slices.SortFunc(inv.tools, func(a, b Tool) int { return strings.Compare(a.Def.Name, b.Def.Name) })
}

// Lookup returns the tool named name.
func (inv *Inventory) Lookup(name string) (Tool, bool) {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	if i := inv.indexLocked(name); i >= 0 {
		return inv.tools[i], true
	}
	return Tool{}, false
}

// Tools returns every tool, in order.
func (inv *Inventory) Tools() []Tool {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	return slices.Clone(inv.tools)
}

// Defs returns every tool's definition, in order.
func (inv *Inventory) Defs() []*sdk.Tool {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	out := make([]*sdk.Tool, len(inv.tools))
	for i, t := range inv.tools {
		out[i] = t.Def
	}
	return out
}

func (inv *Inventory) indexLocked(name string) int {
	return slices.IndexFunc(inv.tools, func(t Tool) bool { return t.Def.Name == name })
}
