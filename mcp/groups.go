package mcp

import (
	"context"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/workspace"
	"github.com/switchboard-hub/switchboard/mcp/tool"
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
	{fileGroup, newFileTools},
	{metricsGroup, newMetricsTools},
	{searchGroup, newSearchTools},
	{patchGroup, newPatchTools},
	{gitGroup, newGitTools},
	{webGroup, newWebTools},
	{notesGroup, newNotesTools},
	{wsGroup, newWSTools},
	{processGroup, newProcessTools},
	{ragGroup, newRAGTools},
	{webviewGroup, newWebviewTools},
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
	return append(out, mlGroup(), toolSearchGroup())
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

// callWorkspaces is what a tool group needs of the hub's workspace handling (mcp/roots.go,
// mcp/policy.go): the workspace a call's paths resolve against — the client's root, its relay
// directory or the hub's, decided and consented to before the handler runs — and what a walk
// must leave out. *trust implements it (mcp/policy.go).
type callWorkspaces interface {
	// workspaceFor is the call's workspace, for a tool that declares workspace paths.
	workspaceFor(ctx context.Context, req *sdk.CallToolRequest) (*workspace.Root, error)
	// resolveWorkspace with strict false never fails on an unapproved root: the hub's
	// workspace stands in (for listings that only show paths).
	resolveWorkspace(ctx context.Context, req *sdk.CallToolRequest, strict bool) (*workspace.Root, error)
	// walkSkip is what a walking tool leaves out (the hub's state, paths the policy denies).
	walkSkip(req *sdk.CallToolRequest, ws *workspace.Root) func(rel string, isDir bool) bool
	// policyFile names the file holding the policy, for error messages.
	policyFile() string
	// hubDir is the hub's own workspace directory ("" while it has none), what listings show
	// paths against by default.
	hubDir() string
}

// callSessions is what a tool group needs of the hub's record of client sessions
// (mcp/middleware.go, mcp/clientlog.go). *Service implements it.
type callSessions interface {
	// sessionID is the dashboard's id of the calling session and its transport.
	sessionID(ctx context.Context, req sdk.Request) (id, transport string)
	// logTo sends a log message to one client session (when it asked for logs).
	logTo(ss *sdk.ServerSession, level sdk.LoggingLevel, format string, args ...any)
	// ownProcess records that the session started process id.
	ownProcess(id string, ss *sdk.ServerSession)
}
