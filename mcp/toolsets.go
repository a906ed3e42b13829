package mcp

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/listeners"
	"github.com/switchboard-hub/switchboard/internal/wshub"
	"github.com/switchboard-hub/switchboard/mcp/channel"
	"github.com/switchboard-hub/switchboard/mcp/proxy"
	"github.com/switchboard-hub/switchboard/mcp/tool"
)

// Toolsets group tools, so clients with a tool limit (Cursor shows ~40) can be given only what
// they need. A tool's toolset is declared with its group (tool.NewGroup) and travels in the
// tool's _meta (tool.ToolsetMetaKey); this table only names and describes the sets.
var toolsets = []struct {
	name, title string
}{
	{"files", "files, directories and languages"},
	{"process", "processes and commands"},
	{"ws", "the WebSocket hub"},
	{"metrics", "usage metrics"},
	{"rag", "retrieval (RAG) collections"},
	{"ml", "model inference"},
	{"browser", "browser automation"},
	{"ide", "the IDE bridge to the agentic backend"},
	{"git", "git repositories"},
	{"web", "web fetch"},
	{"memory", "memory notes and todos"},
	{"code", "code intelligence (language servers)"},
}

// ToolsetNames lists every toolset name, in a fixed order.
func ToolsetNames() []string {
	out := make([]string, len(toolsets))
	for i, ts := range toolsets {
		out[i] = ts.name
	}
	return out
}

// ToolsetOf returns the toolset a tool declares, or "" for a tool outside every set (such a
// tool is always served).
func ToolsetOf(t *sdk.Tool) string { return tool.ToolsetOf(t) }

// DefaultToolsets is every toolset except ide, which only makes sense with a configured backend.
func DefaultToolsets(ideConfigured bool) []string {
	out := ToolsetNames()
	if !ideConfigured {
		out = slices.DeleteFunc(out, func(n string) bool { return n == "ide" })
	}
	return out
}

// ParseToolsets validates toolset names: the hub's own sets, "all" (every set and every server),
// and the names of the configured upstream servers in servers, each a toolset of its own (commas
// split entries). An unknown name is an error that lists the valid ones.
func ParseToolsets(names []string, servers ...string) ([]string, error) {
	sets, all, err := parseToolsets(names, func(n string) bool { return slices.Contains(servers, n) }, servers)
	if err != nil {
		return nil, err
	}
	if all {
		sets = append(sets, servers...)
	}
	slices.Sort(sets)
	return slices.Compact(sets), nil
}

// parseToolsets is ParseToolsets for the Service, which may not know its servers' names yet (they
// are synced after it is built): isServer says whether a name that is not one of the hub's sets
// may be a server's; servers is what the error lists as such. all reports "all", which covers
// servers configured later too.
func parseToolsets(names []string, isServer func(string) bool, servers []string) (sets []string, all bool, err error) {
	for _, entry := range names {
		for _, n := range strings.Split(entry, ",") {
			n = strings.TrimSpace(n)
			if ToolsetIndex(strings.ToLower(n)) >= 0 || strings.EqualFold(n, "all") {
				n = strings.ToLower(n) // the hub's names are case-insensitive; a server's is not
			}
			switch {
			case n == "":
			case n == "all":
				all = true
				sets = append(sets, ToolsetNames()...)
			case ToolsetIndex(n) >= 0 || isServer(n):
				sets = append(sets, n)
			default:
				valid := "all, " + strings.Join(ToolsetNames(), ", ")
				if len(servers) > 0 {
					valid += ", or a configured server: " + strings.Join(servers, ", ")
				} else {
					valid += " (or the name of a configured server: none is configured)"
				}
				return nil, false, fmt.Errorf("toolsets: unknown toolset %q; valid: %s", n, valid)
			}
		}
	}
	return sets, all, nil
}

// ToolsetIndex returns the position of a toolset name, or -1.
func ToolsetIndex(name string) int {
	for i, ts := range toolsets {
		if ts.name == name {
			return i
		}
	}
	return -1
}

// WithDefaultToolsets serves the default toolsets: DefaultToolsets(ideConfigured) and every
// upstream server, including servers configured later (what "all" serves, but for ide).
func WithDefaultToolsets(ideConfigured bool) Option {
	return func(s *Service) error {
		s.opts.toolsetsChosen, s.opts.toolsets, s.opts.toolsetsEveryServer = true, DefaultToolsets(ideConfigured), true
		return nil
	}
}

// WithToolsets serves only the tools of the named toolsets (default: all): the hub's own sets and
// upstream servers by name ("all": every set and every server). Unknown names are an error naming
// the valid ones; with WithUpstreams any other name is taken for a server's (the servers are
// known only once synced: the caller checks the names against its configuration, ParseToolsets).
func WithToolsets(names ...string) Option {
	return func(s *Service) error {
		s.opts.toolsetsChosen, s.opts.toolsets, s.opts.toolsetsEveryServer = true, slices.Clone(names), false
		return nil
	}
}

// ToolsetStatus describes one toolset for the dashboard and `doctor`.
type ToolsetStatus struct {
	Name    string   `json:"name"`
	Title   string   `json:"title"`
	Enabled bool     `json:"enabled"`
	Tools   []string `json:"tools"` // registered tools of the set (none: not in this build/config)
	// Upstream: the set is an upstream server's tools ([[servers]]).
	Upstream bool `json:"upstream,omitempty"`
}

// toolsetState is which of the inventory's tools the hub serves: the inventory (after read-only
// mode and the disabled list), the toolsets switched on, and which tools are on the go-sdk
// server now. Upstream servers' tools join and leave the inventory as their catalogues change
// (mirrorServer); each server is a toolset of its own.
type toolsetState struct {
	server *sdk.Server
	inv    *tool.Inventory
	// servers names the configured upstream servers (nil without any): each is a toolset.
	servers func() []string
	// allServers: a server the chosen toolsets do not name is on (no WithToolsets, or "all"
	// among them); otherwise only the servers named are, whenever their tools arrive.
	allServers bool

	mu       sync.Mutex      // guards the inventory's membership against serving changes
	security map[string]bool // hub tools logged at audit.LevelSecurity (not read-only); set once by applyToolPolicy
	chosen   bool            // WithToolsets named the sets; otherwise all are on
	active   map[string]bool // toolsets switched on
	serving  map[string]bool // registered tools currently on the server
	onChange listeners.Set[[]ToolsetStatus]
}

// newToolsetState serves the toolsets named in names when chosen (WithToolsets), else all of
// them (init), servers included; everyServer (WithDefaultToolsets) adds every server to the sets
// named. servers is nil for a hub without upstream servers; with it, a name that is not one of
// the hub's sets names a server.
func newToolsetState(server *sdk.Server, inv *tool.Inventory, chosen bool, names []string, everyServer bool, servers func() []string) (*toolsetState, error) {
	ts := &toolsetState{server: server, inv: inv, servers: servers, chosen: chosen, allServers: !chosen}
	if chosen {
		sets, all, err := parseToolsets(names, func(string) bool { return servers != nil }, nil)
		if err != nil {
			return nil, err
		}
		ts.allServers = all || everyServer
		ts.active = map[string]bool{}
		for _, n := range sets {
			ts.active[n] = true
		}
	}
	return ts, nil
}

// serverNames names the configured upstream servers.
func (ts *toolsetState) serverNames() []string {
	if ts.servers == nil {
		return nil
	}
	return ts.servers()
}

// applyToolPolicy removes from the inventory what read-only mode or the disabled list excludes,
// and remembers annotations for audit levels. The hub's own tools are kept in name order, as
// clients list them.
func (ts *toolsetState) applyToolPolicy(readOnly bool, disabled []string) error {
	ts.inv.SortByName()
	tools := ts.inv.Tools()
	known := map[string]bool{}
	for _, t := range tools {
		known[t.Def.Name] = true
	}
	var unknown []string
	for _, name := range disabled {
		if !known[name] {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return fmt.Errorf("disabled_tools: unknown tool(s) %v; run `switchboard tools` for the list", unknown)
	}
	ts.security = map[string]bool{}
	ts.inv.Retain(func(t tool.Tool) bool {
		if slices.Contains(disabled, t.Def.Name) || (readOnly && !t.ReadOnly()) {
			return false
		}
		ts.security[t.Def.Name] = !t.ReadOnly()
		return true
	})
	return nil
}

// isSecurity reports whether a hub tool is audited before the fact. The map is written once,
// before the hub serves anyone, so the audit path reads it without the lock.
func (ts *toolsetState) isSecurity(name string) bool { return ts.security[name] }

// registered returns the inventory's tools' definitions, as clients list them.
func (ts *toolsetState) registered() []*sdk.Tool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.inv.Defs()
}

// status reports every toolset: whether it is on and which registered tools it holds.
func (ts *toolsetState) status() []ToolsetStatus {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.statusLocked()
}

func (ts *toolsetState) statusLocked() []ToolsetStatus {
	out := make([]ToolsetStatus, len(toolsets))
	for i, set := range toolsets {
		out[i] = ToolsetStatus{Name: set.name, Title: set.title, Enabled: ts.active[set.name], Tools: []string{}}
	}
	// Each upstream server is a toolset of its own, after the hub's.
	for _, name := range ts.serverNames() {
		on, ok := ts.active[name]
		out = append(out, ToolsetStatus{Name: name, Title: "server " + name, Enabled: on || (!ok && ts.allServers), Tools: []string{}, Upstream: true})
	}
	index := make(map[string]int, len(out))
	for i, st := range out {
		index[st.Name] = i
	}
	for _, t := range ts.inv.Tools() {
		if i, ok := index[t.Toolset]; ok {
			out[i].Tools = append(out[i].Tools, t.Def.Name)
		}
	}
	return out
}

// isUpstreamToolset reports whether name is a configured upstream server's toolset.
func (ts *toolsetState) isUpstreamToolset(name string) bool {
	return slices.Contains(ts.serverNames(), name)
}

// setAll is Service.SetToolsets.
func (ts *toolsetState) setAll(names []string) ([]ToolsetStatus, error) {
	var own, servers []string
	for _, entry := range names {
		for _, n := range strings.Split(entry, ",") {
			if n = strings.TrimSpace(n); ts.isUpstreamToolset(n) {
				servers = append(servers, n)
			} else {
				own = append(own, n)
			}
		}
	}
	sets, err := ParseToolsets(own)
	if err != nil {
		return ts.status(), err
	}
	ts.mu.Lock()
	prev := ts.active
	ts.active = map[string]bool{}
	for _, n := range sets {
		ts.active[n] = true
	}
	for _, n := range ts.serverNames() {
		if on, ok := prev[n]; ok {
			ts.active[n] = on
		}
	}
	for _, n := range servers {
		ts.active[n] = true
	}
	changed := ts.applyLocked()
	out := ts.statusLocked()
	ts.mu.Unlock()
	if changed {
		ts.onChange.Notify(out)
	}
	return out, nil
}

// set is Service.SetToolset.
func (ts *toolsetState) set(name string, enabled bool) ([]ToolsetStatus, error) {
	if ToolsetIndex(name) < 0 && !ts.isUpstreamToolset(name) {
		return ts.status(), fmt.Errorf("toolset: unknown toolset %q; valid: %s", name, strings.Join(ToolsetNames(), ", "))
	}
	ts.mu.Lock()
	ts.active[name] = enabled
	changed := ts.applyLocked()
	out := ts.statusLocked()
	ts.mu.Unlock()
	if changed {
		ts.onChange.Notify(out)
	}
	return out, nil
}

// served reports whether a tool is in an active toolset. Tools outside every set are always
// served.
func (ts *toolsetState) served(t tool.Tool) bool {
	return t.Toolset == "" || ts.active[t.Toolset]
}

// applyLocked brings the server's tools in line with the active toolsets and reports whether
// anything changed.
func (ts *toolsetState) applyLocked() bool {
	var remove []string
	var add []tool.Tool
	for _, t := range ts.inv.Tools() {
		want := ts.served(t)
		if want == ts.serving[t.Def.Name] {
			continue
		}
		ts.serving[t.Def.Name] = want
		if want {
			add = append(add, t)
		} else {
			remove = append(remove, t.Def.Name)
		}
	}
	if len(remove) > 0 {
		ts.server.RemoveTools(remove...)
	}
	for _, t := range add {
		ts.server.AddTool(servedDef(t.Def), t.Handler)
	}
	return len(remove) > 0 || len(add) > 0
}

// ActiveTools returns the tools clients are served now (the registered tools of active
// toolsets), in registration order.
func (ts *toolsetState) ActiveTools() []*sdk.Tool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	var out []*sdk.Tool
	for _, t := range ts.inv.Tools() {
		if ts.serving[t.Def.Name] {
			out = append(out, t.Def)
		}
	}
	return out
}

// activeToolsets names the toolsets that serve at least one tool now.
func (ts *toolsetState) activeToolsets() []string {
	var out []string
	for _, st := range ts.status() {
		if st.Enabled && len(st.Tools) > 0 {
			out = append(out, st.Name)
		}
	}
	return out
}

// ServesUpstream reports whether name is an upstream tool clients are served now.
func (ts *toolsetState) ServesUpstream(name string) bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if !ts.serving[name] {
		return false
	}
	t, ok := ts.inv.Lookup(name)
	if !ok {
		return false
	}
	_, up := t.Def.Meta[proxy.UpstreamMetaKey]
	return up
}

// init marks every registered tool as served, then applies the toolsets chosen by WithToolsets
// (default: all).
func (ts *toolsetState) init() {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if !ts.chosen {
		ts.active = map[string]bool{}
		for _, n := range ToolsetNames() {
			ts.active[n] = true
		}
	}
	ts.serving = map[string]bool{} // nothing is on the server yet: applyLocked adds what is served
	ts.applyLocked()
}

// MirrorServer brings upstream server name's tools in line with its catalogue (proxy.Toolsets):
// the tools named in gone leave, those in regs join or replace their earlier definition.
// whileLocked runs first under the toolset lock (the upstream side's audit levels, so they
// change together with the tools served). With notify, the toolsets' listeners hear of it.
func (ts *toolsetState) MirrorServer(name string, gone []string, regs []tool.Tool, notify bool, whileLocked func()) {
	out := ts.mirrorServer(name, gone, regs, whileLocked)
	if notify {
		ts.onChange.Notify(out)
	}
}

func (ts *toolsetState) mirrorServer(name string, gone []string, regs []tool.Tool, whileLocked func()) []ToolsetStatus {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	whileLocked()
	if len(gone) > 0 {
		ts.inv.Remove(gone...)
		ts.server.RemoveTools(gone...)
		for _, n := range gone {
			delete(ts.serving, n)
		}
	}
	if _, ok := ts.active[name]; !ok && len(regs) > 0 {
		// A server's toolset is on until the user switches it off, unless the toolsets chosen
		// (--toolsets, the toolsets key) leave it out.
		ts.active[name] = ts.allServers
	}
	for _, r := range regs {
		// A switched-off toolset's tools are kept in the inventory for when it is switched on.
		ts.inv.Add(r)
		if ts.active[name] {
			ts.server.AddTool(servedDef(r.Def), r.Handler)
		}
		ts.serving[r.Def.Name] = ts.active[name]
	}
	return ts.statusLocked()
}

// ToolsetFeed is the payload of the dashboard's "toolsets" channel (snapshot and events).
type ToolsetFeed struct {
	Toolsets []ToolsetStatus `json:"toolsets"`
}

// wireFeed publishes the toolsets on the hub's "toolsets" channel: a snapshot for a dashboard
// that subscribes, an event on every change.
func (ts *toolsetState) wireFeed(h *wshub.Hub) {
	if h == nil {
		return
	}
	h.SetSnapshotProvider(channel.Toolsets, func(string) (any, bool) {
		return ToolsetFeed{Toolsets: ts.status()}, true
	})
	ts.onChange.Add(func(st []ToolsetStatus) { h.Publish(channel.Toolsets, wshub.TypeEvent, ToolsetFeed{Toolsets: st}) })
}

// Tools returns the registered tools, as clients list them.
func (s *Service) Tools() []*sdk.Tool { return s.toolsets.registered() }

// Toolsets reports every toolset: whether it is on and which registered tools it holds.
func (s *Service) Toolsets() []ToolsetStatus { return s.toolsets.status() }

// SetToolsets switches the served tool set. Tools leaving are removed from the server and tools
// joining are added back with their original handlers; go-sdk then sends every connected client
// notifications/tools/list_changed.
//
// Upstream servers' toolsets named in names are switched on; those not named keep their state
// (a list of the hub's own sets, from the config or an older dashboard, leaves them alone).
func (s *Service) SetToolsets(names []string) ([]ToolsetStatus, error) {
	return s.toolsets.setAll(names)
}

// SetToolset switches one toolset on or off.
func (s *Service) SetToolset(name string, enabled bool) ([]ToolsetStatus, error) {
	return s.toolsets.set(name, enabled)
}

// ActiveTools returns the tools clients are served now (the registered tools of active
// toolsets), in registration order.
func (s *Service) ActiveTools() []*sdk.Tool { return s.toolsets.ActiveTools() }

// ActiveToolsets names the toolsets that serve at least one tool now.
func (s *Service) ActiveToolsets() []string { return s.toolsets.activeToolsets() }

// OnToolsetsChange registers f to run (with the new state) after every change of the served
// toolsets, e.g. to start a subsystem's backend connection when its toolset is switched on, or
// to tell the dashboard, until cancel is called. f runs after the change, outside the
// Service's locks.
func (s *Service) OnToolsetsChange(f func([]ToolsetStatus)) (cancel func()) {
	return s.toolsets.onChange.Add(f)
}

// serves reports whether the tool named name is on the server now.
func (ts *toolsetState) serves(name string) bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.serving[name]
}

// touch tells every connected client that its tool list changed although no tool came or went
// (the tools mode did): go-sdk announces list_changed — on the session channel, or on a
// 2026-07-28 session's subscriptions/listen stream — whenever a tool is added, so one served
// tool is added again as it is.
func (ts *toolsetState) touch() {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for _, t := range ts.inv.Tools() {
		if ts.serving[t.Def.Name] {
			ts.server.AddTool(servedDef(t.Def), t.Handler)
			return
		}
	}
}

// servedDef is the definition go-sdk is given for a tool: def with its input schema encoded
// once, as JSON (json.RawMessage; go-sdk takes a schema in that form as well). On every
// stateless (2026-07-28) tools/call go-sdk looks for Mcp-Param header annotations in the called
// tool's input schema by encoding it to JSON and decoding that (extractParamHeaderAnnotations);
// encoding a *jsonschema.Schema each time was about 5% of such a call's CPU, and copying raw
// JSON costs a fraction of it. tools/list gives the same bytes either way. The hub's own copy
// (the inventory's def, which the typed handler validates against) keeps the *jsonschema.Schema.
func servedDef(def *sdk.Tool) *sdk.Tool {
	if _, raw := def.InputSchema.(json.RawMessage); raw || def.InputSchema == nil {
		return def
	}
	b, err := json.Marshal(def.InputSchema)
	if err != nil {
		return def // go-sdk reports a schema it cannot encode, as before
	}
	d := *def
	d.InputSchema = json.RawMessage(b)
	return &d
}
