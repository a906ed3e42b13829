package mcp

import (
	"fmt"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/wshub"
	"github.com/switchboard-hub/switchboard/mcp/tool"
)

// Toolsets group tools, so clients with a tool limit (Cursor shows ~40) can be given only what
// they need. A tool's toolset is declared where its group registers (tool.Group) and travels in
// the tool's _meta (tool.ToolsetMetaKey); this table only names and describes the sets.
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

// ParseToolsets validates toolset names ("all" stands for every set; commas split entries).
// An unknown name is an error that lists the valid ones.
func ParseToolsets(names []string) ([]string, error) {
	var out []string
	for _, entry := range names {
		for _, n := range strings.Split(entry, ",") {
			n = strings.ToLower(strings.TrimSpace(n))
			switch {
			case n == "":
			case n == "all":
				out = append(out, ToolsetNames()...)
			case ToolsetIndex(n) < 0:
				return nil, fmt.Errorf("toolsets: unknown toolset %q; valid: all, %s", n, strings.Join(ToolsetNames(), ", "))
			default:
				out = append(out, n)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
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

// WithToolsets serves only the tools of the named toolsets (default: all). Unknown names are an
// error naming the valid ones.
func WithToolsets(names ...string) Option {
	return func(s *Service) error {
		sets, err := ParseToolsets(names)
		if err != nil {
			return err
		}
		s.toolsetsSet = true
		s.active = map[string]bool{}
		for _, n := range sets {
			s.active[n] = true
		}
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

// Toolsets reports every toolset: whether it is on and which registered tools it holds.
func (s *Service) Toolsets() []ToolsetStatus {
	s.toolsetMu.Lock()
	defer s.toolsetMu.Unlock()
	return s.toolsetsLocked()
}

func (s *Service) toolsetsLocked() []ToolsetStatus {
	out := make([]ToolsetStatus, len(toolsets))
	for i, ts := range toolsets {
		out[i] = ToolsetStatus{Name: ts.name, Title: ts.title, Enabled: s.active[ts.name], Tools: []string{}}
	}
	if s.up != nil {
		// Each upstream server is a toolset of its own, after the hub's.
		for _, name := range s.up.m.Names() {
			on, ok := s.active[name]
			out = append(out, ToolsetStatus{Name: name, Title: "server " + name, Enabled: on || !ok, Tools: []string{}, Upstream: true})
		}
	}
	index := make(map[string]int, len(out))
	for i, ts := range out {
		index[ts.Name] = i
	}
	for _, t := range s.tools {
		if i, ok := index[ToolsetOf(t)]; ok {
			out[i].Tools = append(out[i].Tools, t.Name)
		}
	}
	return out
}

// isUpstreamToolset reports whether name is a configured upstream server's toolset.
func (s *Service) isUpstreamToolset(name string) bool {
	return s.up != nil && slices.Contains(s.up.m.Names(), name)
}

// SetToolsets switches the served tool set. Tools leaving are removed from the server and tools
// joining are added back with their original handlers; go-sdk then sends every connected client
// notifications/tools/list_changed.
//
// Upstream servers' toolsets named in names are switched on; those not named keep their state
// (a list of the hub's own sets, from the config or an older dashboard, leaves them alone).
func (s *Service) SetToolsets(names []string) ([]ToolsetStatus, error) {
	var own, servers []string
	for _, entry := range names {
		for _, n := range strings.Split(entry, ",") {
			if n = strings.TrimSpace(n); s.isUpstreamToolset(n) {
				servers = append(servers, n)
			} else {
				own = append(own, n)
			}
		}
	}
	sets, err := ParseToolsets(own)
	if err != nil {
		return s.Toolsets(), err
	}
	s.toolsetMu.Lock()
	prev := s.active
	s.active = map[string]bool{}
	for _, n := range sets {
		s.active[n] = true
	}
	if s.up != nil {
		for _, n := range s.up.m.Names() {
			if on, ok := prev[n]; ok {
				s.active[n] = on
			}
		}
	}
	for _, n := range servers {
		s.active[n] = true
	}
	changed := s.applyToolsetsLocked()
	out := s.toolsetsLocked()
	s.toolsetMu.Unlock()
	if changed {
		s.onToolsets.Notify(out)
	}
	return out, nil
}

// SetToolset switches one toolset on or off.
func (s *Service) SetToolset(name string, enabled bool) ([]ToolsetStatus, error) {
	if ToolsetIndex(name) < 0 && !s.isUpstreamToolset(name) {
		return s.Toolsets(), fmt.Errorf("toolset: unknown toolset %q; valid: %s", name, strings.Join(ToolsetNames(), ", "))
	}
	s.toolsetMu.Lock()
	s.active[name] = enabled
	changed := s.applyToolsetsLocked()
	out := s.toolsetsLocked()
	s.toolsetMu.Unlock()
	if changed {
		s.onToolsets.Notify(out)
	}
	return out, nil
}

// served reports whether a registered tool is in an active toolset. Tools outside every set, and
// tools not registered through tool.Add (which could not be added back), are always served.
func (s *Service) served(name string) bool {
	r, ok := tool.Lookup(s.server, name)
	if !ok || r.Toolset == "" {
		return true
	}
	return s.active[r.Toolset]
}

// applyToolsetsLocked brings the server's tools in line with the active toolsets and reports
// whether anything changed.
func (s *Service) applyToolsetsLocked() bool {
	var remove []string
	var add []*sdk.Tool
	for _, t := range s.tools {
		want := s.served(t.Name)
		if want == s.serving[t.Name] {
			continue
		}
		s.serving[t.Name] = want
		if want {
			add = append(add, t)
		} else {
			remove = append(remove, t.Name)
		}
	}
	if len(remove) > 0 {
		s.server.RemoveTools(remove...)
	}
	for _, t := range add {
		if r, ok := tool.Lookup(s.server, t.Name); ok {
			s.server.AddTool(r.Tool, r.Handler)
		}
	}
	return len(remove) > 0 || len(add) > 0
}

// ActiveTools returns the tools clients are served now (the registered tools of active
// toolsets), in registration order.
func (s *Service) ActiveTools() []*sdk.Tool {
	s.toolsetMu.Lock()
	defer s.toolsetMu.Unlock()
	var out []*sdk.Tool
	for _, t := range s.tools {
		if s.serving[t.Name] {
			out = append(out, t)
		}
	}
	return out
}

// ActiveToolsets names the toolsets that serve at least one tool now.
func (s *Service) ActiveToolsets() []string {
	var out []string
	for _, ts := range s.Toolsets() {
		if ts.Enabled && len(ts.Tools) > 0 {
			out = append(out, ts.Name)
		}
	}
	return out
}

// initToolsets marks every registered tool as served, then applies the toolsets chosen by
// WithToolsets (default: all).
func (s *Service) initToolsets() {
	s.toolsetMu.Lock()
	defer s.toolsetMu.Unlock()
	if !s.toolsetsSet {
		s.active = map[string]bool{}
		for _, n := range ToolsetNames() {
			s.active[n] = true
		}
	}
	s.serving = map[string]bool{}
	for _, t := range s.tools {
		s.serving[t.Name] = true
	}
	s.applyToolsetsLocked()
}

// OnToolsetsChange registers f to run (with the new state) after every change of the served
// toolsets, e.g. to start a subsystem's backend connection when its toolset is switched on, or
// to tell the dashboard, until cancel is called. f runs after the change, outside the
// Service's locks.
func (s *Service) OnToolsetsChange(f func([]ToolsetStatus)) (cancel func()) {
	return s.onToolsets.Add(f)
}

// ToolsetFeed is the payload of the dashboard's "toolsets" channel (snapshot and events).
type ToolsetFeed struct {
	Toolsets []ToolsetStatus `json:"toolsets"`
}

// wireToolsetFeed publishes the toolsets on the hub's "toolsets" channel: a snapshot for a
// dashboard that subscribes, an event on every change.
func (s *Service) wireToolsetFeed() {
	if s.hub == nil {
		return
	}
	s.hub.SetSnapshotProvider(ChannelToolsets, func(string) (any, bool) {
		return ToolsetFeed{Toolsets: s.Toolsets()}, true
	})
	s.OnToolsetsChange(func(ts []ToolsetStatus) { s.hub.Publish(ChannelToolsets, wshub.TypeEvent, ToolsetFeed{Toolsets: ts}) })
}
