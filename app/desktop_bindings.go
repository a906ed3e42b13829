package app

import (
	"sync"

	"github.com/switchboard-hub/switchboard/internal/process"
	"github.com/switchboard-hub/switchboard/internal/upstream"
	"github.com/switchboard-hub/switchboard/mcp"
	"github.com/switchboard-hub/switchboard/mcp/ide"
)

// App is what the desktop window's JavaScript sees as window.go.app.App: Wails binds every
// exported method of the struct, under the package name (app) and the type name (App). The
// methods mirror Controller one for one (frontend/src/lib/control.ts, interface WailsApp), so
// the dashboard has the same controls in the window as over the headless HTTP API. It carries
// no build tag: the bindings are plain Go and are tested without GTK.
type App struct {
	ctl *Controller

	// firstBootstrap runs once, on the dashboard's first call: the page has loaded and its
	// script runs, which is the desktop's "first paint" mark.
	firstBootstrap func()
	once           sync.Once

	// pickFolder opens the desktop's native folder picker ("" when dismissed); nil without one.
	pickFolder func(title, start string) (string, error)
}

// newApp wraps a controller; onFirstBootstrap may be nil.
func newApp(ctl *Controller, onFirstBootstrap func()) *App {
	return &App{ctl: ctl, firstBootstrap: onFirstBootstrap}
}

// Bootstrap returns where the WebSocket hub is and its token.
func (a *App) Bootstrap() (Bootstrap, error) {
	if a.firstBootstrap != nil {
		a.once.Do(a.firstBootstrap)
	}
	return a.ctl.Bootstrap()
}

// Transports lists the four switchable transports.
func (a *App) Transports() TransportList { return a.ctl.Transports() }

// SetTransport switches one transport on or off and returns the new list.
func (a *App) SetTransport(name string, enabled bool) (TransportList, error) {
	return a.ctl.SetTransport(name, enabled)
}

// Toolsets lists every toolset and whether it is served.
func (a *App) Toolsets() ToolsetList { return a.ctl.Toolsets() }

// SetToolset switches one toolset on or off and returns the new list.
func (a *App) SetToolset(name string, enabled bool) (ToolsetList, error) {
	return a.ctl.SetToolset(name, enabled)
}

// StartProcess starts a command in the workspace.
func (a *App) StartProcess(command string, args []string) (process.Info, error) {
	return a.ctl.StartProcess(command, args)
}

// StopProcess stops a process (SIGTERM, then SIGKILL after the grace period).
func (a *App) StopProcess(id string) (process.Info, error) { return a.ctl.StopProcess(id) }

// KillProcess kills a process group at once.
func (a *App) KillProcess(id string) (process.Info, error) { return a.ctl.KillProcess(id) }

// InputResult is SendInput's answer, the same JSON as the headless API's.
type InputResult struct {
	Success bool `json:"success"`
}

// SendInput writes to a process's stdin.
func (a *App) SendInput(id, input string) (InputResult, error) {
	if err := a.ctl.SendInput(id, input); err != nil {
		return InputResult{}, err
	}
	return InputResult{Success: true}, nil
}

// CreateIDESession asks the agentic backend for a new session.
func (a *App) CreateIDESession(name string) (ide.Session, error) {
	return a.ctl.CreateIDESession(name)
}

// SendChat sends a chat message to an agent session.
func (a *App) SendChat(sessionID, message string) (ide.ChatSendOutput, error) {
	return a.ctl.SendChat(sessionID, message)
}

// ClientConfig returns ready-to-paste client configuration for the running transports.
func (a *App) ClientConfig() ClientConfig { return a.ctl.ClientConfig() }

// Approvals lists the tool calls and roots waiting for the user's answer.
func (a *App) Approvals() ApprovalList { return a.ctl.Approvals() }

// DecideApproval answers one with "allow" or "deny".
func (a *App) DecideApproval(id, decision string) (DecisionResult, error) {
	return a.ctl.DecideApproval(id, decision)
}

// GrantWorkspace grants (allow) or revokes one session's root or relay directory.
func (a *App) GrantWorkspace(sessionID, dir string, allow bool) (WorkspaceGrant, error) {
	return a.ctl.GrantWorkspace(sessionID, dir, allow)
}

// ListClients lists every known MCP client with its state in each scope (the Clients view).
func (a *App) ListClients() (ClientList, error) { return a.ctl.ListClients() }

// PreviewClient shows, without writing, the edit that connects or disconnects a client.
func (a *App) PreviewClient(name, scope, action string) (ClientChange, error) {
	return a.ctl.PreviewClient(name, scope, action)
}

// ApplyClient writes that edit, keeping a backup.
func (a *App) ApplyClient(name, scope, action string) (ClientChange, error) {
	return a.ctl.ApplyClient(name, scope, action)
}

// ListServers lists the upstream servers ([[servers]]) with their state and tools (the Servers view).
func (a *App) ListServers() (ServerList, error) { return a.ctl.ListServers() }

// ServerLogs returns a server's last lines of stderr and supervisor events (lines <= 0: all kept).
func (a *App) ServerLogs(name string, lines int) (ServerLog, error) {
	return a.ctl.ServerLogs(name, lines)
}

// ApproveServer takes a server out of quarantine and pins its tools, or pins only the named held tools.
func (a *App) ApproveServer(name string, tools []string) (upstream.Status, error) {
	return a.ctl.ApproveServer(name, tools)
}

// RestartServer stops and starts a server now.
func (a *App) RestartServer(name string) (upstream.Status, error) { return a.ctl.RestartServer(name) }

// SetServerEnabled switches a server on or off in the config file.
func (a *App) SetServerEnabled(name string, enabled bool) (ServerChange, error) {
	return a.ctl.SetServerEnabled(name, enabled)
}

// AddServer adds a server to the config file and starts it, quarantined until approved.
func (a *App) AddServer(spec upstream.Spec) (ServerChange, error) { return a.ctl.AddServer(spec) }

// RemoveServer removes a server from the config file and stops it.
func (a *App) RemoveServer(name string) (ServerChange, error) { return a.ctl.RemoveServer(name) }

// RAGCollections lists the RAG collections with their counts, backend and embedder.
func (a *App) RAGCollections() (mcp.RAGCollectionsOutput, error) { return a.ctl.RAGCollections() }

// RAGQuery searches a RAG collection (the Knowledge view's query box).
func (a *App) RAGQuery(collection, question string, topK int) (mcp.RAGQueryOutput, error) {
	return a.ctl.RAGQuery(collection, question, topK)
}

// Settings reads the config file's settings and the running hub's state (the Settings view).
func (a *App) Settings() (Settings, error) { return a.ctl.Settings() }

// SaveTransports saves which transports start and where they listen, and switches them now.
func (a *App) SaveTransports(transports []TransportInput) (SettingsChange, error) {
	return a.ctl.SaveTransports(transports)
}

// SaveToolsets saves the served toolsets and switches them now.
func (a *App) SaveToolsets(toolsets []string) (SettingsChange, error) {
	return a.ctl.SaveToolsets(toolsets)
}

// SaveWorkspace saves the workspace, used from the next start.
func (a *App) SaveWorkspace(dir string) (SettingsChange, error) { return a.ctl.SaveWorkspace(dir) }

// SavePolicy saves the policy rules and [roots] allow, in force at once.
func (a *App) SavePolicy(p PolicyInput) (SettingsChange, error) { return a.ctl.SavePolicy(p) }

// TestPolicy decides a call against a policy being edited, as `switchboard policy check` does.
func (a *App) TestPolicy(t PolicyTest) (PolicyDecision, error) { return a.ctl.TestPolicy(t) }

// SaveML saves the inference backends, used from the next start.
func (a *App) SaveML(m MLInput) (SettingsChange, error) { return a.ctl.SaveML(m) }

// SaveRAG saves the RAG backend and embedder, used from the next start.
func (a *App) SaveRAG(r RAGSettings) (SettingsChange, error) { return a.ctl.SaveRAG(r) }

// SaveSecurity saves TCP's require_token and HTTP's allowed origins, in force now.
func (a *App) SaveSecurity(in SecurityInput) (SettingsChange, error) { return a.ctl.SaveSecurity(in) }

// RegenerateToken replaces a token where it is kept and puts it in force; it never returns it.
func (a *App) RegenerateToken(name string) (TokenRegenerated, error) {
	return a.ctl.RegenerateToken(name)
}

// SaveWeb saves web_fetch's allow-list and timeout, in force now.
func (a *App) SaveWeb(in WebInput) (SettingsChange, error) { return a.ctl.SaveWeb(in) }

// SetRAGAPIKey changes how the config refers to the RAG backend's API key (keyring, environment).
func (a *App) SetRAGAPIKey(in RAGAPIKeyInput) (SettingsChange, error) { return a.ctl.SetRAGAPIKey(in) }

// SetAutostart switches "Start at login", as the tray does.
func (a *App) SetAutostart(enabled bool) (SettingsChange, error) { return a.ctl.SetAutostart(enabled) }

// Audit reads one page of the audit trail from its files (the Logs view).
func (a *App) Audit(q AuditQuery) (AuditPage, error) { return a.ctl.Audit(q) }

// HubLog returns the hub's own log: the newest limit records at level or above, oldest first.
func (a *App) HubLog(level string, limit int) (HubLogList, error) { return a.ctl.HubLog(level, limit) }

// Project returns the hub's project folder.
func (a *App) Project() Project { return a.ctl.Project() }

// SetProject makes dir the project folder now and remembers it for the next launch.
func (a *App) SetProject(dir string) (ProjectChange, error) { return a.ctl.SetProject(dir) }

// PickProject opens the native folder picker and makes the folder chosen the project folder.
func (a *App) PickProject() (ProjectChange, error) { return a.ctl.PickProject(a.pickFolder) }
