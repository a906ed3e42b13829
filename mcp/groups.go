package mcp

import (
	"github.com/switchboard-hub/switchboard/mcp/proxy"
	"github.com/switchboard-hub/switchboard/mcp/tool"
	"github.com/switchboard-hub/switchboard/mcp/tools"
)

// A groupDecl is one of the hub's built-in tool groups: its tools declared as values (declare,
// in the group's file tools_*.go) and what binds them to the hub (deps: the group's
// dependencies from the hub's parts, nil when the group is not configured because its With…
// option was not given). Several groups may share a toolset (file_grep and file_glob are "files"
// like file_read).
type groupDecl struct {
	declare func() tool.Group
	deps    func(*Service) any
}

// hubGroups lists the hub's built-in tool groups in registration order. Adding a group is one
// file (its tools, its dependencies and their test) and one line here. Subsystems (WithSubsystem:
// the IDE bridge, ML) and upstream servers' tools come after these.
var hubGroups = []groupDecl{
	{tools.FileGroup, func(s *Service) any { return tools.NewFileTools(s.trust, s.codeEdits()) }},
	{tools.MetricsGroup, func(s *Service) any { return tools.NewMetricsTools(s.metrics) }},
	{tools.SearchGroup, func(s *Service) any {
		return when(s.opts.searchOn, func() any { return tools.NewSearchTools(s.trust) })
	}},
	{tools.PatchGroup, func(s *Service) any {
		return when(s.opts.patchOn, func() any { return tools.NewPatchTools(s.trust, s.codeEdits()) })
	}},
	{tools.GitGroup, func(s *Service) any {
		return when(s.opts.gitOn, func() any { return tools.NewGitTools(s.trust) })
	}},
	{tools.WebGroup, func(s *Service) any {
		return when(s.opts.fetcher != nil, func() any { return tools.NewWebTools(s.opts.fetcher) })
	}},
	{tools.NotesGroup, func(s *Service) any {
		return when(s.notes != nil, func() any { return tools.NewNotesTools(s.trust, hubSessions{s}, s.notes) })
	}},
	{tools.WSGroup, func(s *Service) any {
		return when(s.hub != nil, func() any { return tools.NewWSTools(s.hub, &s.startedBy) })
	}},
	{tools.ProcessGroup, func(s *Service) any {
		return when(s.procs != nil, func() any { return tools.NewProcessTools(s.trust, hubSessions{s}, s.procs) })
	}},
	{tools.RAGGroup, func(s *Service) any {
		return when(s.rag != nil, func() any { return tools.NewRAGTools(s.trust, s.rag, s.ragFeed) })
	}},
	{tools.WebviewGroup, func(s *Service) any {
		return when(s.browser != nil, func() any { return tools.NewWebviewTools(s.trust, s.browser) })
	}},
	{tools.CodeGroup, func(s *Service) any {
		return when(s.code != nil, func() any {
			return tools.NewCodeTools(s.trust, hubSessions{s}, s.code, s.procs, s.execRules(), s.CallInner)
		})
	}},
	{tools.TasksGroup, func(s *Service) any {
		return when(s.tasks != nil, func() any { return tools.NewTasksTools(s, s.tasks.store) })
	}},
	{tools.CatalogGroup, func(s *Service) any { return tools.NewCatalogTools(hubCatalog{s}) }},
	{tools.ScriptGroup, func(s *Service) any { return tools.NewScriptTools(scriptHost{hubCatalog{s}}) }},
}

// when is deps() when the group is configured, else nil (the group is left out).
func when(configured bool, deps func() any) any {
	if !configured {
		return nil
	}
	return deps()
}

// Catalogue declares every tool a hub can serve, in the order the desktop and serve hubs
// register them: the built-in groups, the subsystems' groups given (app passes the IDE
// bridge's, ide.Tools), ML, and the upstream tool search. It needs no hub and no dependency:
// the tool reference (docs/tools.md) and the schema snapshots are made from it alone. Upstream
// servers' own tools are not in it: they are the user's.
func Catalogue(subsystems ...tool.Group) []tool.Group {
	out := make([]tool.Group, 0, len(hubGroups)+len(subsystems)+2)
	for _, g := range hubGroups {
		out = append(out, g.declare())
	}
	out = append(out, subsystems...)
	return append(out, tools.MLGroup(), proxy.ToolSearchGroup())
}

// withToolGroups adds groups after hubGroups (tests: a fake group as a contributor would write it).
func withToolGroups(groups ...groupDecl) Option {
	return func(s *Service) error { s.opts.extraGroups = append(s.opts.extraGroups, groups...); return nil }
}

// registerGroups binds every configured group's tools and adds them to the inventory, then the
// subsystems' (each bound to the subsystem itself).
func (s *Service) registerGroups() {
	for _, g := range append(hubGroups[:len(hubGroups):len(hubGroups)], s.opts.extraGroups...) {
		deps := g.deps(s)
		if deps == nil {
			continue
		}
		s.inventory.Add(g.declare().Bind(deps)...)
	}
	for _, sub := range s.subsystems {
		s.inventory.Add(sub.Tools().Bind(sub)...)
	}
}
