// Package channel names the WebSocket hub channels the MCP hub publishes on for the dashboard
// (and for agents with a hub token): one place both the hub's composition (mcp) and its tool
// groups (mcp/tools) take them from. The payloads are documented with their types: mcp's
// channels.go for the hub's own, mcp/tools for the tool groups' feeds; the IDE bridge's
// channels are in internal/agentic.
package channel

// Hub channel names.
const (
	Sessions      = "sessions"
	Activity      = "activity"
	Processes     = "processes"
	ProcessPrefix = "process:" // + process id: one process's output and status
	Transports    = "transports"
	Toolsets      = "toolsets"
	Approvals     = "approvals"
	Todos         = "todos"
	ML            = "ml"
	Browser       = "browser"
	RAG           = "rag"
	Code          = "code"    // language servers, their diagnostics, project_run results (tools.CodeFeed)
	Servers       = "servers" // every upstream server's status
	Tasks         = "tasks"   // long calls handed back as tasks (mcp.TasksSnapshot, tasks.Change)
)
