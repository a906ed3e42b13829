// Package tools is the hub's own tool groups: one file per group (files, git, search, patch,
// metrics, notes, processes, RAG, web, browser, WebSocket, ML, code intelligence), each its tools declared as
// values (a tool.Group that needs no hub) and the type its handlers are methods of, built by a
// constructor from only what the group uses. The hub (package mcp) binds each configured group
// to its dependencies; what a group needs of the hub itself — the caller's workspace, the
// caller's session — comes through the Workspaces and Sessions interfaces, so a handler cannot
// reach past them into the hub's policy or transports.
//
// A handler is thin: it validates its input, calls a domain package under internal/, and maps
// the result to the tool's documented output struct (docs/tools.md).
package tools

import (
	"context"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/workspace"
)

// Workspaces is what a tool group needs of the hub's workspace handling: the workspace a call's
// paths resolve against — the client's root, its relay directory or the hub's, decided and
// consented to before the handler runs — and what a walk must leave out.
type Workspaces interface {
	// WorkspaceFor is the call's workspace, for a tool that declares workspace paths.
	WorkspaceFor(ctx context.Context, req *sdk.CallToolRequest) (*workspace.Root, error)
	// ResolveWorkspace with strict false never fails on an unapproved root: the hub's
	// workspace stands in (for listings that only show paths).
	ResolveWorkspace(ctx context.Context, req *sdk.CallToolRequest, strict bool) (*workspace.Root, error)
	// WalkSkip is what a walking tool leaves out (the hub's state, paths the policy denies).
	WalkSkip(req *sdk.CallToolRequest, ws *workspace.Root) func(rel string, isDir bool) bool
	// PolicyFile names the file holding the policy, for error messages.
	PolicyFile() string
	// HubDir is the hub's own workspace directory ("" while it has none), what listings show
	// paths against by default.
	HubDir() string
}

// Sessions is what a tool group needs of the hub's record of client sessions.
type Sessions interface {
	// SessionID is the dashboard's id of the calling session and its transport.
	SessionID(ctx context.Context, req sdk.Request) (id, transport string)
	// LogTo sends a log message to one client session (when it asked for logs).
	LogTo(ss *sdk.ServerSession, level sdk.LoggingLevel, format string, args ...any)
	// OwnProcess records that the session started process id.
	OwnProcess(id string, ss *sdk.ServerSession)
}
