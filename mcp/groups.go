package mcp

import (
	"context"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/workspace"
	"github.com/switchboard-hub/switchboard/mcp/tool"
)

// A toolGroup is one group of the hub's own tools with the dependencies they use, and nothing
// else of the hub: the tools of one file (tools_*.go), registered through tool.Add, which reads
// everything else about each tool (workspace paths, annotations, schemas) from its declaration.
// Several groups may share a toolset (file_grep and file_glob are "files" like file_read).
type toolGroup interface {
	toolset() string
	register(server *sdk.Server)
}

// hubGroups lists the hub's built-in tool groups in registration order. Each constructor takes
// what its group needs from the hub's options and returns nil when the group is not configured
// (its With… option was not given). Adding a group is one file (its tools and their test) and
// one line here. Subsystems (WithSubsystem: the IDE bridge, ML) and upstream servers' tools come
// after these.
var hubGroups = []func(*Service) toolGroup{
	newFileTools,
	newMetricsTools,
	newSearchTools,
	newPatchTools,
	newGitTools,
	newWebTools,
	newNotesTools,
	newWSTools,
	newProcessTools,
	newRAGTools,
	newWebviewTools,
}

// withToolGroups adds groups after hubGroups (tests: a fake group as a contributor would write it).
func withToolGroups(mk ...func(*Service) toolGroup) Option {
	return func(s *Service) error { s.opts.extraGroups = append(s.opts.extraGroups, mk...); return nil }
}

// registerGroups registers every configured group's tools under its toolset.
func (s *Service) registerGroups() {
	for _, mk := range append(hubGroups[:len(hubGroups):len(hubGroups)], s.opts.extraGroups...) {
		g := mk(s)
		if g == nil {
			continue
		}
		end := tool.Group(s.server, g.toolset())
		g.register(s.server)
		end()
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
