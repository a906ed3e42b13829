package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	yaml "go.yaml.in/yaml/v3"

	"github.com/switchboard-hub/switchboard/internal/handles"
	"github.com/switchboard-hub/switchboard/internal/sessions"
	"github.com/switchboard-hub/switchboard/internal/upstream"
	"github.com/switchboard-hub/switchboard/mcp/proxy"
	sbtool "github.com/switchboard-hub/switchboard/mcp/tool"
	"github.com/switchboard-hub/switchboard/mcp/toolcall"
	"github.com/switchboard-hub/switchboard/mcp/tools"
	mcptransport "github.com/switchboard-hub/switchboard/mcp/transport"
)

// Tools modes decide how much of the catalogue a client lists (tools/list):
//
//   - full: every offered tool, as before modes existed;
//   - search: a small core the user picks (tools_core) plus tools_search and tools_call, which
//     reach every other offered tool — the hub's own and the upstream servers';
//   - script: the core plus tools_search and script_run (until script_run is declared,
//     tools_call stands in for it).
//
// Only the listing changes: every offered tool stays callable by name in every mode, through the
// same layers. A tools_call (or the older servers_call) is rewritten here into a call of the tool
// it names before audit and policy see it, so both apply to the real tool. In search and script
// mode a result larger than the threshold is kept by the hub as a handle (internal/handles) and
// the client gets the handle, the size and the first lines instead; result_read and
// result_search read it.
//
// The hub has one mode (the tools_mode key, serve --tools-mode); a client may ask for its own
// when it connects (`switchboard connect --tools-mode`, the HTTP URL's ?tools_mode=).

// Tools modes (tools.ModeFull, …), re-exported for the app.
const (
	ToolsModeFull   = tools.ModeFull
	ToolsModeSearch = tools.ModeSearch
	ToolsModeScript = tools.ModeScript
)

// ToolScriptRun is the script tool's name: listed in script mode once declared, and never
// callable from inside a script (CallInner).
const ToolScriptRun = tools.ToolScriptRun

// DefaultToolsCore is what search and script mode list besides the catalogue tools when the
// user picked nothing: reading, editing and running, which nearly every coding task starts with
// (file_grep, about 300 tokens of schema, is one tools_search away; the catalogue stays under
// 1,500 tokens, docs/benchmarks.md).
var DefaultToolsCore = []string{"file_read", "file_edit", "exec"}

// DefaultResultHandleBytes is the result size above which search and script mode answer with a
// handle.
const DefaultResultHandleBytes = 16 << 10

// ToolsModes lists the modes.
func ToolsModes() []string { return []string{ToolsModeFull, ToolsModeSearch, ToolsModeScript} }

// ParseToolsMode checks a mode name ("" is full).
func ParseToolsMode(mode string) (string, error) {
	m := strings.ToLower(strings.TrimSpace(mode))
	if m == "" {
		return ToolsModeFull, nil
	}
	if !slices.Contains(ToolsModes(), m) {
		return "", fmt.Errorf("tools_mode: %q is not a mode; use full, search or script", mode)
	}
	return m, nil
}

// modesConfig is the hub's tools mode and core, swapped whole on a change.
type modesConfig struct {
	mode string
	core []string
	in   map[string]bool // core entries: tool names, the hub's toolsets, servers' names
}

func newModesConfig(mode string, core []string) *modesConfig {
	c := &modesConfig{mode: mode, core: slices.Clone(core), in: map[string]bool{}}
	for _, n := range core {
		c.in[n] = true
	}
	return c
}

// WithToolsMode sets the hub's tools mode ("": full, or search with WithUpstreamToolSearch) and,
// for search and script mode, the tools always listed (nil: DefaultToolsCore): tool names,
// toolset names (files, git, …) or servers' names.
func WithToolsMode(mode string, core []string) Option {
	return func(s *Service) error {
		m, err := ParseToolsMode(mode)
		if err != nil {
			return err
		}
		if strings.TrimSpace(mode) == "" {
			m = "" // none given: server_tools may still choose one (initModes)
		}
		s.opts.toolsMode, s.opts.toolsCore, s.opts.toolsCoreSet = m, slices.Clone(core), core != nil
		return nil
	}
}

// WithResultHandles sets the size (bytes) above which a result becomes a handle in search and
// script mode (0: DefaultResultHandleBytes; negative: never) and how many bytes of results the
// hub keeps in all (0: handles.DefaultMaxBytes).
func WithResultHandles(threshold, maxBytes int) Option {
	return func(s *Service) error {
		s.opts.resultThreshold, s.opts.resultMax = threshold, maxBytes
		return nil
	}
}

// initModes puts the options' mode in force; server_tools = "search" (WithUpstreamToolSearch)
// without a mode of its own is the search mode with every hub toolset as the core, which lists
// what it listed before (the hub's tools) and finds the servers' tools with tools_search.
func (s *Service) initModes() error {
	mode, core := s.opts.toolsMode, s.opts.toolsCore
	if !s.opts.toolsCoreSet {
		core = DefaultToolsCore
	}
	if mode == "" {
		mode = ToolsModeFull
		if s.opts.toolSearch {
			mode, core = ToolsModeSearch, ToolsetNames()
			if s.opts.toolsCoreSet {
				core = s.opts.toolsCore
			}
		}
	}
	if s.opts.toolsCoreSet {
		if err := s.checkCore(core); err != nil {
			return err
		}
	}
	s.modes.Store(newModesConfig(mode, core))
	s.resultThreshold = s.opts.resultThreshold
	if s.resultThreshold == 0 {
		s.resultThreshold = DefaultResultHandleBytes
	}
	s.results = handles.New(s.opts.resultMax)
	s.sessions.Subscribe(func(c sessions.Change) {
		if c.Kind == "disconnected" {
			s.results.DropOwner(c.Session.ID)
		}
	})
	return nil
}

// checkCore refuses core entries that name nothing: not a tool Switchboard declares (this hub
// may leave it out: read-only mode, a group not configured), not a toolset, not a server (servers
// are known once synced, so with upstream servers an unknown name may be one).
func (s *Service) checkCore(core []string) error {
	declared := map[string]bool{}
	for _, g := range Catalogue() {
		for _, t := range g.Tools {
			declared[t.Def.Name] = true
		}
	}
	var unknown []string
	for _, n := range core {
		if _, ok := s.inventory.Lookup(n); ok || declared[n] || ToolsetIndex(n) >= 0 || strings.Contains(n, upstream.NameSeparator) || s.up != nil {
			continue
		}
		unknown = append(unknown, n)
	}
	if len(unknown) > 0 {
		return fmt.Errorf("tools_core: %s names no tool, toolset or server; `switchboard tools` lists the tools", strings.Join(unknown, ", "))
	}
	return nil
}

// ToolsMode is the hub's tools mode and core.
func (s *Service) ToolsMode() (mode string, core []string) {
	c := s.modes.Load()
	return c.mode, slices.Clone(c.core)
}

// SetToolsMode changes the hub's tools mode and core (nil: DefaultToolsCore) while it runs;
// connected clients are told their tool list changed (sessions that chose their own mode keep
// it).
func (s *Service) SetToolsMode(mode string, core []string) error {
	m, err := ParseToolsMode(mode)
	if err != nil {
		return err
	}
	if core == nil {
		core = DefaultToolsCore
	} else if err := s.checkCore(core); err != nil {
		return err
	}
	next := newModesConfig(m, core)
	prev := s.modes.Swap(next)
	if prev.mode != next.mode || !slices.Equal(prev.core, next.core) {
		s.logger.Info("tools mode changed", "mode", m, "core", strings.Join(core, ","))
		s.toolsets.touch()
	}
	return nil
}

// sessionMode is the tools mode of the client whose request ctx carries: its own when it asked
// for a valid one, else the hub's.
func (s *Service) sessionMode(ctx context.Context) string {
	if m := mcptransport.ToolsMode(ctx); m != "" {
		if p, err := ParseToolsMode(m); err == nil {
			return p
		}
	}
	return s.modes.Load().mode
}

// listed reports whether a tool is in the tools/list answer of a session in mode.
func (s *Service) listed(mode string, c *modesConfig, t *sdk.Tool) bool {
	switch t.Name {
	case tools.ToolToolsSearch, tools.ToolResultRead, tools.ToolResultSearch:
		return mode != ToolsModeFull
	case tools.ToolToolsCall:
		return mode == ToolsModeSearch || (mode == ToolsModeScript && !s.toolsets.serves(ToolScriptRun))
	case ToolScriptRun:
		return mode == ToolsModeScript
	case proxy.ToolServersSearch, proxy.ToolServersCall:
		return false // server_tools = "search" is the search mode now; the old names stay callable
	}
	if mode == ToolsModeFull {
		return true
	}
	return c.in[t.Name] || c.in[sbtool.ToolsetOf(t)]
}

// modesMiddleware lists each session the tools of its mode, turns a tools_call (or servers_call)
// into a call of the tool it names, and keeps a large result as a handle in search and script
// mode. It goes outside audit and policy, so both see the real tool.
func (s *Service) modesMiddleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		switch method {
		case "tools/list":
			res, err := next(ctx, method, req)
			if lr, ok := res.(*sdk.ListToolsResult); ok && err == nil {
				mode, c := s.sessionMode(ctx), s.modes.Load()
				lr.Tools = slices.DeleteFunc(lr.Tools, func(t *sdk.Tool) bool { return !s.listed(mode, c, t) })
			}
			return res, err
		case "tools/call":
			p, ok := req.GetParams().(*sdk.CallToolParamsRaw)
			if !ok || p == nil {
				break
			}
			via := p.Name
			if p.Name == tools.ToolToolsCall || p.Name == proxy.ToolServersCall {
				if refused := s.rewriteCall(p); refused != nil {
					return refused, nil
				}
			}
			res, err := next(ctx, method, req)
			if _, inner := toolcall.InnerOf(ctx); inner || err != nil {
				return res, err // a script gets its results whole; its own result is kept, if large
			}
			return s.keepLarge(ctx, req, p.Name, via != p.Name, res), nil
		}
		return next(ctx, method, req)
	}
}

// rewriteCall turns a tools_call or servers_call in p into the call it names, or answers why it
// cannot (not audited: the call never named a tool that runs).
func (s *Service) rewriteCall(p *sdk.CallToolParamsRaw) *sdk.CallToolResult {
	via := p.Name
	var in struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(p.Arguments, &in); err != nil {
		return sbtool.ErrorText(fmt.Sprintf("arguments: must be {\"name\": \"tool\", \"arguments\": {…}} (%v)", err))
	}
	search := tools.ToolToolsSearch
	if via == proxy.ToolServersCall {
		search = proxy.ToolServersSearch
	}
	switch {
	case strings.TrimSpace(in.Name) == "":
		return sbtool.ErrorText(fmt.Sprintf("name: required; find a tool with %s", search))
	case in.Name == tools.ToolToolsCall || in.Name == proxy.ToolServersCall:
		return sbtool.ErrorText(fmt.Sprintf("name: %s calls another tool; name that tool", in.Name))
	case via == proxy.ToolServersCall && !s.toolsets.ServesUpstream(in.Name),
		via == tools.ToolToolsCall && !s.toolsets.serves(in.Name):
		if why, ok := s.up.WhyNotOffered(in.Name); ok {
			return sbtool.ErrorText("name: " + why)
		}
		what := "a tool the hub offers"
		if via == proxy.ToolServersCall {
			what = "a tool of a connected server"
		}
		return sbtool.ErrorText(fmt.Sprintf("name: %q is not %s; find one with %s", in.Name, what, search))
	}
	p.Name = in.Name
	p.Arguments = in.Arguments
	if len(p.Arguments) == 0 || string(p.Arguments) == "null" {
		p.Arguments = json.RawMessage("{}")
	}
	return nil
}

// HandleResult is the structured content of a result kept as a handle.
type HandleResult struct {
	handles.Info
	// Kept says what happened, for a model that reads only the structured content.
	Kept string `json:"kept"`
}

// keepLarge answers a large result of a session in search or script mode with a handle. A tool
// the session lists with an output schema keeps its result whole: the client holds the result
// to that schema. A call made through tools_call is held to none.
func (s *Service) keepLarge(ctx context.Context, req sdk.Request, name string, viaCall bool, res sdk.Result) sdk.Result {
	r, ok := res.(*sdk.CallToolResult)
	if !ok || r == nil || r.NeedsInput() || s.resultThreshold < 0 || tools.IsCatalogTool(name) {
		return res
	}
	mode := s.sessionMode(ctx)
	if mode == ToolsModeFull || resultSize(r) <= s.resultThreshold {
		return res
	}
	if !viaCall {
		if t, ok := s.inventory.Lookup(name); ok && t.Def.OutputSchema != nil && s.listed(mode, s.modes.Load(), t.Def) {
			return res
		}
	}
	creq, _ := req.(*sdk.CallToolRequest)
	info, err := s.results.Put(s.resultOwner(ctx, creq), name, resultText(r))
	if err != nil {
		s.logger.Warn("result not kept as a handle; sent whole", "tool", name, "error", err)
		return res
	}
	kept := fmt.Sprintf("%s returned %d bytes (%d lines), more than this session's %d-byte limit for results; the hub kept the result as handle %s. Read it with result_read {\"handle\": %q, \"offset\": 1, \"limit\": 200} or find lines with result_search {\"handle\": %q, \"query\": \"…\"}.",
		name, info.Bytes, info.Lines, s.resultThreshold, info.Handle, info.Handle, info.Handle)
	out := &sdk.CallToolResult{IsError: r.IsError, Meta: r.Meta, StructuredContent: HandleResult{Info: info, Kept: kept},
		Content: []sdk.Content{&sdk.TextContent{Text: kept + "\nFirst lines:\n" + info.Head}}}
	for _, c := range r.Content {
		if _, text := c.(*sdk.TextContent); !text {
			out.Content = append(out.Content, c) // images and resources pass as they are
		}
	}
	return out
}

// resultOwner is the key of a session's handles: its registry id, or the session itself for a
// connection without one (an in-process client).
func (s *Service) resultOwner(ctx context.Context, req *sdk.CallToolRequest) string {
	var r sdk.Request = req
	if req == nil {
		r = &sdk.CallToolRequest{}
	}
	if id, _ := s.sessionID(ctx, r); id != "" {
		return id
	}
	if req != nil && req.Session != nil {
		return fmt.Sprintf("session-%p", req.Session)
	}
	return ""
}

// resultSize is how many bytes of text a result carries to the client.
func resultSize(r *sdk.CallToolResult) int {
	n := 0
	for _, c := range r.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			n += len(t.Text)
		}
	}
	if n == 0 && r.StructuredContent != nil {
		if b, err := json.Marshal(r.StructuredContent); err == nil {
			n = len(b)
		}
	}
	return n
}

// resultText is a result as lines a model reads in windows: structured content as YAML (a
// string with newlines, a file's content, stays a block of lines, not one escaped JSON line),
// otherwise the text contents.
func resultText(r *sdk.CallToolResult) string {
	if r.StructuredContent != nil {
		if b, err := json.Marshal(r.StructuredContent); err == nil {
			if y, ok := yamlText(b); ok {
				return y
			}
			var out bytes.Buffer
			if json.Indent(&out, b, "", "  ") == nil {
				return out.String()
			}
		}
	}
	var parts []string
	for _, c := range r.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// yamlText renders JSON as block YAML, keeping the members' order.
func yamlText(js []byte) (string, bool) {
	var n yaml.Node
	if yaml.Unmarshal(js, &n) != nil {
		return "", false
	}
	var plain func(*yaml.Node)
	plain = func(n *yaml.Node) {
		n.Style = 0
		for _, c := range n.Content {
			plain(c)
		}
	}
	plain(&n)
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if enc.Encode(&n) != nil || enc.Close() != nil {
		return "", false
	}
	return b.String(), true
}

// hubCatalog is the hub as the catalogue tools see it.
type hubCatalog struct{ s *Service }

func (h hubCatalog) Offered() []*sdk.Tool { return h.s.toolsets.ActiveTools() }
func (h hubCatalog) SessionMode(ctx context.Context, _ *sdk.CallToolRequest) string {
	return h.s.sessionMode(ctx)
}
func (h hubCatalog) Results() *handles.Store { return h.s.results }
func (h hubCatalog) ResultOwner(ctx context.Context, req *sdk.CallToolRequest) string {
	return h.s.resultOwner(ctx, req)
}

// scriptHost is what script_run needs of the hub: the offered tools and the inner-call path.
type scriptHost struct{ hubCatalog }

func (h scriptHost) CallInner(ctx context.Context, parent *sdk.CallToolRequest, name string, args json.RawMessage) (*sdk.CallToolResult, error) {
	return h.s.CallInner(ctx, parent, name, args)
}

// modesInstructions is what initialize's instructions add for a session in mode.
func (s *Service) modesInstructions(mode string) string {
	switch mode {
	case ToolsModeSearch:
		call := "with tools_call"
		if !s.toolsets.serves(tools.ToolToolsCall) {
			call = "by name" // read-only mode serves no tools_call; the tools found are callable
		}
		return fmt.Sprintf(" Few tools are listed: find the others with tools_search, call them %s. A result over %d bytes comes back as a handle for result_read and result_search.", call, s.resultThreshold)
	case ToolsModeScript:
		run := "script_run"
		if !s.toolsets.serves(ToolScriptRun) {
			run = "tools_call"
			if !s.toolsets.serves(tools.ToolToolsCall) {
				run = "their names"
			}
		}
		return fmt.Sprintf(" Few tools are listed: find the others with tools_search (TypeScript declarations) and use them through %s. A result over %d bytes comes back as a handle for result_read and result_search.", run, s.resultThreshold)
	}
	return ""
}
