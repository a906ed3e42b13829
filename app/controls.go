package app

import (
	"github.com/switchboard-hub/switchboard/internal/dashcontrol"
	"github.com/switchboard-hub/switchboard/internal/upstream"
)

// dashboardControls is every control the dashboard has, declared once: its name (the Wails
// binding App.<Name> and the TypeScript method <name>), its HTTP route, its arguments in the
// order the methods take them (and where each travels over HTTP), the label of its errors and
// the Controller call. From this table
//   - the headless dashboard serves /api (app/dashboard: Server.Handler, through the same token
//     and Origin checks and the same APIError answers as before);
//   - `go run ./build/gencontrols` (also run by `make types`) writes the Wails bindings
//     (app/desktop/bindings_gen.go) and the TypeScript client (frontend/src/lib/generated/control.ts);
//     a test in build/gencontrols fails when they are stale.
//
// Adding a control is one entry here and its Controller method; then `make types`.
//
// Written by hand, and why:
//   - Bootstrap, on both sides: over HTTP the hub's URL is rewritten to this server's own /ws (same
//     origin, one port to open), which needs the request's Host; in the window its first call
//     marks the first paint.
//   - PickProject's binding: only the window has the native folder picker (App.pickFolder); over
//     HTTP it is served from the table and refuses, a browser has no picker.
//
// Nothing here streams or answers with another status than 200 or 400: live data goes over the
// WebSocket hub.
var dashboardControls = dashcontrol.NewTable(
	dashcontrol.Control[*Controller]{
		Name: "Bootstrap", Route: "GET /api/bootstrap", Action: "bootstrap",
		Doc:        "returns where the WebSocket hub is and its token.",
		BindByHand: true, ServeByHand: true,
		Call: dashcontrol.Call0((*Controller).Bootstrap),
	},

	// Overview: transports and toolsets.
	dashcontrol.Control[*Controller]{
		Name: "Transports", Route: "GET /api/transports", Action: "list transports",
		Doc:  "lists the four switchable transports.",
		Call: dashcontrol.Call0(dashcontrol.NoError((*Controller).Transports)),
	},
	dashcontrol.Control[*Controller]{
		Name: "SetTransport", Route: "POST /api/transports/{name}", Action: "{enabled?enable:disable} {name}",
		Doc: "switches one transport on or off and returns the new list.",
		Call: dashcontrol.Call2(dashcontrol.Path[string]("name"), dashcontrol.BodyField[bool]("enabled").Required(),
			(*Controller).SetTransport),
	},
	dashcontrol.Control[*Controller]{
		Name: "Toolsets", Route: "GET /api/toolsets", Action: "list toolsets",
		Doc:  "lists every toolset and whether it is served.",
		Call: dashcontrol.Call0(dashcontrol.NoError((*Controller).Toolsets)),
	},
	dashcontrol.Control[*Controller]{
		Name: "SetToolset", Route: "POST /api/toolsets/{name}", Action: "{enabled?enable:disable} toolset {name}",
		Doc: "switches one toolset on or off and returns the new list.",
		Call: dashcontrol.Call2(dashcontrol.Path[string]("name"), dashcontrol.BodyField[bool]("enabled").Required(),
			(*Controller).SetToolset),
	},

	// Processes.
	dashcontrol.Control[*Controller]{
		Name: "StartProcess", Route: "POST /api/processes", Action: "start {command}",
		Doc: "starts a command in the workspace.",
		Call: dashcontrol.Call2(dashcontrol.BodyField[string]("command"), dashcontrol.BodyField[[]string]("args"),
			(*Controller).StartProcess),
	},
	dashcontrol.Control[*Controller]{
		Name: "StopProcess", Route: "POST /api/processes/{id}/stop", Action: "stop {id}",
		Doc:  "stops a process (SIGTERM, then SIGKILL after the grace period).",
		Call: dashcontrol.Call1(dashcontrol.Path[string]("id"), (*Controller).StopProcess),
	},
	dashcontrol.Control[*Controller]{
		Name: "KillProcess", Route: "POST /api/processes/{id}/kill", Action: "kill {id}",
		Doc:  "kills a process group at once.",
		Call: dashcontrol.Call1(dashcontrol.Path[string]("id"), (*Controller).KillProcess),
	},
	dashcontrol.Control[*Controller]{
		Name: "SendInput", Route: "POST /api/processes/{id}/input", Action: "send input to {id}",
		Doc: "writes to a process's stdin.",
		Call: dashcontrol.Call2(dashcontrol.Path[string]("id"), dashcontrol.BodyField[string]("input"),
			func(c *Controller, id, input string) (InputResult, error) {
				if err := c.SendInput(id, input); err != nil {
					return InputResult{}, err
				}
				return InputResult{Success: true}, nil
			}),
	},

	// Tasks: long calls handed back to their clients (the Activity view's Tasks list).
	dashcontrol.Control[*Controller]{
		Name: "CancelTask", Route: "POST /api/tasks/{id}/cancel", Action: "cancel task {id}",
		Doc:  "stops a task's call, whichever client started it (an exec's process group is killed).",
		Call: dashcontrol.Call1(dashcontrol.Path[string]("id"), (*Controller).CancelTask),
	},

	// IDE bridge.
	dashcontrol.Control[*Controller]{
		Name: "CreateIDESession", Route: "POST /api/ide/sessions", Action: "create session",
		Doc:  "asks the agentic backend for a new session.",
		Call: dashcontrol.Call1(dashcontrol.BodyField[string]("name"), (*Controller).CreateIDESession),
	},
	dashcontrol.Control[*Controller]{
		Name: "SendChat", Route: "POST /api/ide/chat", Action: "send chat",
		Doc: "sends a chat message to an agent session.",
		Call: dashcontrol.Call2(dashcontrol.BodyField[string]("sessionId"), dashcontrol.BodyField[string]("message"),
			(*Controller).SendChat),
	},
	dashcontrol.Control[*Controller]{
		Name: "ClientConfig", Route: "GET /api/clientconfig", Action: "client configuration",
		Doc:  "returns ready-to-paste client configuration for the running transports.",
		Call: dashcontrol.Call0(dashcontrol.NoError((*Controller).ClientConfig)),
	},

	// Approvals and sessions' workspaces.
	dashcontrol.Control[*Controller]{
		Name: "Approvals", Route: "GET /api/approvals", Action: "list approvals",
		Doc:  "lists the tool calls and roots waiting for the user's answer.",
		Call: dashcontrol.Call0(dashcontrol.NoError((*Controller).Approvals)),
	},
	dashcontrol.Control[*Controller]{
		Name: "DecideApproval", Route: "POST /api/approvals/{id}", Action: "{decision} {id}",
		Doc: "answers one with allow or deny; for a client asking to use the hub (OAuth), scopes are the toolsets granted (empty: those asked for).",
		Call: dashcontrol.Call3(dashcontrol.Path[string]("id"), dashcontrol.BodyField[string]("decision").OneOf("allow", "deny"),
			dashcontrol.BodyField[[]string]("scopes"), (*Controller).DecideApproval),
	},
	dashcontrol.Control[*Controller]{
		Name: "GrantWorkspace", Route: "POST /api/sessions/{sessionId}/workspace", Action: "{allow?grant:revoke} {dir}",
		Doc: "grants (allow) or revokes, for one MCP client session, one of its roots or its relay directory.",
		Call: dashcontrol.Call3(dashcontrol.Path[string]("sessionId"), dashcontrol.BodyField[string]("dir"),
			dashcontrol.BodyField[bool]("allow").Required(), (*Controller).GrantWorkspace),
	},

	// Knowledge (RAG).
	dashcontrol.Control[*Controller]{
		Name: "RAGCollections", Route: "GET /api/rag/collections", Action: "list collections",
		Doc:  "lists the RAG collections with their counts, backend and embedder.",
		Call: dashcontrol.Call0((*Controller).RAGCollections),
	},
	dashcontrol.Control[*Controller]{
		Name: "RAGQuery", Route: "POST /api/rag/query", Action: "query",
		Doc: "searches a RAG collection (the Knowledge view's query box).",
		Call: dashcontrol.Call3(dashcontrol.BodyField[string]("collection"), dashcontrol.BodyField[string]("question"),
			dashcontrol.BodyField[int]("topK"), (*Controller).RAGQuery),
	},

	// Clients: preview and apply share POST /api/clients/{name}, told apart by "dryRun".
	dashcontrol.Control[*Controller]{
		Name: "ListClients", Route: "GET /api/clients", Action: "list clients",
		Doc:  "lists every known MCP client with its state in each scope (the Clients view).",
		Call: dashcontrol.Call0((*Controller).ListClients),
	},
	dashcontrol.Control[*Controller]{
		Name: "PreviewClient", Route: "POST /api/clients/{name}", Action: "preview {action} {name} ({scope})",
		Doc:   "shows, as a unified diff and without writing, the edit that connects or disconnects a client.",
		Fixed: map[string]any{"dryRun": true},
		Call:  dashcontrol.Call4(clientName, clientScope, clientAction, clientToolsMode, (*Controller).PreviewClient),
	},
	dashcontrol.Control[*Controller]{
		Name: "ApplyClient", Route: "POST /api/clients/{name}", Action: "{action} {name} ({scope})",
		Doc:   "writes that edit (computed again from the file as it is), keeping a backup.",
		Fixed: map[string]any{"dryRun": false},
		Call:  dashcontrol.Call4(clientName, clientScope, clientAction, clientToolsMode, (*Controller).ApplyClient),
	},

	// Upstream servers.
	dashcontrol.Control[*Controller]{
		Name: "ListServers", Route: "GET /api/servers", Action: "list servers",
		Doc:  "lists the upstream servers ([[servers]]) with their state and tools (the Servers view).",
		Call: dashcontrol.Call0((*Controller).ListServers),
	},
	dashcontrol.Control[*Controller]{
		Name: "ServerLogs", Route: "GET /api/servers/{name}/log", Action: "log of {name}",
		Doc: "returns a server's last lines of stderr and supervisor events, oldest first (lines <= 0: all kept; over HTTP 500 when absent).",
		Call: dashcontrol.Call2(dashcontrol.Path[string]("name"), dashcontrol.QueryParam[int]("lines").Default(500),
			(*Controller).ServerLogs),
	},
	dashcontrol.Control[*Controller]{
		Name: "ApproveServer", Route: "POST /api/servers/{name}/approve", Action: "approve {name}{tools? tools :}{tools}",
		Doc: "takes a server out of quarantine and pins all its tools (tools empty), or pins only the named held tools.",
		Call: dashcontrol.Call2(dashcontrol.Path[string]("name"), dashcontrol.BodyField[[]string]("tools"),
			(*Controller).ApproveServer),
	},
	dashcontrol.Control[*Controller]{
		Name: "ApproveServerCommand", Route: "POST /api/servers/{name}/approve-command", Action: "approve the command of {name}",
		Doc: "approves a server's command as shown (hash: its status's command_hash), so the server may run; a command changed since is refused.",
		Call: dashcontrol.Call2(dashcontrol.Path[string]("name"), dashcontrol.BodyField[string]("hash").Required(),
			(*Controller).ApproveServerCommand),
	},
	dashcontrol.Control[*Controller]{
		Name: "RestartServer", Route: "POST /api/servers/{name}/restart", Action: "restart {name}",
		Doc:  "stops and starts a server now.",
		Call: dashcontrol.Call1(dashcontrol.Path[string]("name"), (*Controller).RestartServer),
	},
	dashcontrol.Control[*Controller]{
		Name: "LoginServer", Route: "POST /api/servers/{name}/login", Action: "sign in to {name}",
		Doc:  "starts signing the hub in to a remote server (OAuth) and returns the page to sign in on (opened: the hub opened it in the browser); the server's state leaves signin once the user consented.",
		Call: dashcontrol.Call1(dashcontrol.Path[string]("name"), (*Controller).LoginServer),
	},
	dashcontrol.Control[*Controller]{
		Name: "LogoutServer", Route: "POST /api/servers/{name}/logout", Action: "sign out of {name}",
		Doc:  "forgets the hub's grant for a remote server (revoked where the server allows) and restarts it: it waits for a sign-in.",
		Call: dashcontrol.Call1(dashcontrol.Path[string]("name"), (*Controller).LogoutServer),
	},
	dashcontrol.Control[*Controller]{
		Name: "SetServerEnabled", Route: "POST /api/servers/{name}/enabled", Action: "{enabled?enable:disable} {name}",
		Doc: "switches a server on or off in the config file.",
		Call: dashcontrol.Call2(dashcontrol.Path[string]("name"), dashcontrol.BodyField[bool]("enabled").Required(),
			(*Controller).SetServerEnabled),
	},
	dashcontrol.Control[*Controller]{
		Name: "AddServer", Route: "POST /api/servers", Action: "add server {spec.name}",
		Doc:  "adds a [[servers]] entry to the config file, approves the command it shows and starts it, its tools quarantined until approved.",
		Call: dashcontrol.Call1(dashcontrol.Body[upstream.Spec]("spec"), (*Controller).AddServer),
	},
	dashcontrol.Control[*Controller]{
		Name: "RemoveServer", Route: "DELETE /api/servers/{name}", Action: "remove {name}",
		Doc:  "removes a server from the config file and stops it.",
		Call: dashcontrol.Call1(dashcontrol.Path[string]("name"), (*Controller).RemoveServer),
	},

	// Settings.
	dashcontrol.Control[*Controller]{
		Name: "Settings", Route: "GET /api/settings", Action: "read settings",
		Doc:  "reads the config file's settings and the running hub's state (the Settings view).",
		Call: dashcontrol.Call0((*Controller).Settings),
	},
	dashcontrol.Control[*Controller]{
		Name: "PreviewSettings", Route: "POST /api/settings/preview", Action: "review the changes",
		Doc:  "answers, per section given, the config file's diff its save would make or why it would be refused; nothing is written or applied.",
		Call: dashcontrol.Call1(dashcontrol.Body[SettingsInput]("settings"), (*Controller).PreviewSettings),
	},
	dashcontrol.Control[*Controller]{
		Name: "SaveTransports", Route: "POST /api/settings/transports", Action: "save transports",
		Doc:  "saves which transports start and where they listen, and switches them now.",
		Call: dashcontrol.Call1(dashcontrol.BodyField[[]TransportInput]("transports"), (*Controller).SaveTransports),
	},
	dashcontrol.Control[*Controller]{
		Name: "SaveToolsets", Route: "POST /api/settings/toolsets", Action: "save toolsets",
		Doc:  "saves the served toolsets and switches them now.",
		Call: dashcontrol.Call1(dashcontrol.BodyField[[]string]("toolsets"), (*Controller).SaveToolsets),
	},
	dashcontrol.Control[*Controller]{
		Name: "SaveWorkspace", Route: "POST /api/settings/workspace", Action: "save workspace",
		Doc:  `saves the workspace ("" for the directory switchboard starts in); the running hub moves there too unless --workspace or SWITCHBOARD_WORKSPACE chose this run's folder.`,
		Call: dashcontrol.Call1(dashcontrol.BodyField[string]("workspace").Required(), (*Controller).SaveWorkspace),
	},
	dashcontrol.Control[*Controller]{
		Name: "SavePolicy", Route: "POST /api/settings/policy", Action: "save policy",
		Doc:  "saves the policy rules and [roots] allow, in force at once.",
		Call: dashcontrol.Call1(dashcontrol.Body[PolicyInput]("policy"), (*Controller).SavePolicy),
	},
	dashcontrol.Control[*Controller]{
		Name: "TestPolicy", Route: "POST /api/settings/policy/test", Action: "test a call",
		Doc:  "decides a call against a policy being edited, as `switchboard policy check` does; it saves nothing.",
		Call: dashcontrol.Call1(dashcontrol.Body[PolicyTest]("test"), (*Controller).TestPolicy),
	},
	dashcontrol.Control[*Controller]{
		Name: "SaveML", Route: "POST /api/settings/ml", Action: "save inference backends",
		Doc:  "saves the inference backends and puts them in force in the running hub.",
		Call: dashcontrol.Call1(dashcontrol.Body[MLInput]("ml"), (*Controller).SaveML),
	},
	dashcontrol.Control[*Controller]{
		Name: "SaveRAG", Route: "POST /api/settings/rag", Action: "save RAG",
		Doc:  "switches the running hub to the RAG backend and embedder, then saves them (refused: nothing saved).",
		Call: dashcontrol.Call1(dashcontrol.Body[RAGSettings]("rag"), (*Controller).SaveRAG),
	},
	dashcontrol.Control[*Controller]{
		Name: "SaveSecurity", Route: "POST /api/settings/security", Action: "save security",
		Doc:  "saves TCP's require_token and HTTP's allowed origins, in force now (TCP and HTTP reopen).",
		Call: dashcontrol.Call1(dashcontrol.Body[SecurityInput]("security"), (*Controller).SaveSecurity),
	},
	dashcontrol.Control[*Controller]{
		Name: "RegenerateToken", Route: "POST /api/settings/token", Action: "regenerate the {token} token",
		Doc:  `replaces a token ("client", "tcp", "http") where it is kept and puts it in force; the answer never holds it.`,
		Call: dashcontrol.Call1(dashcontrol.BodyField[string]("token").Required(), (*Controller).RegenerateToken),
	},
	dashcontrol.Control[*Controller]{
		Name: "ClientTokens", Route: "GET /api/settings/client-tokens", Action: "list client tokens",
		Doc:  "lists each MCP client's own HTTP token: client, created, last used (never the token).",
		Call: dashcontrol.Call0((*Controller).ListClientTokens),
	},
	dashcontrol.Control[*Controller]{
		Name: "IssueClientToken", Route: "POST /api/settings/client-tokens", Action: "issue a token for {client}",
		Doc:  "makes a new HTTP token for a client (replacing its old one) and returns it, the only time it is shown.",
		Call: dashcontrol.Call1(dashcontrol.BodyField[string]("client").Required(), (*Controller).IssueClientToken),
	},
	dashcontrol.Control[*Controller]{
		Name: "RevokeClientToken", Route: "DELETE /api/settings/client-tokens/{client}", Action: "revoke the token of {client}",
		Doc:  "revokes a client's HTTP token: refused from its next request on.",
		Call: dashcontrol.Call1(dashcontrol.Path[string]("client"), (*Controller).RevokeClientToken),
	},
	dashcontrol.Control[*Controller]{
		Name: "SaveWeb", Route: "POST /api/settings/web", Action: "save web",
		Doc:  "saves web_fetch's allow-list and timeout, in force now.",
		Call: dashcontrol.Call1(dashcontrol.Body[WebInput]("web"), (*Controller).SaveWeb),
	},
	dashcontrol.Control[*Controller]{
		Name: "SaveCode", Route: "POST /api/settings/code", Action: "save code intelligence",
		Doc:  "saves [code] idle and the language servers' commands, in force in the running pool now (a command from its server's next start).",
		Call: dashcontrol.Call1(dashcontrol.Body[CodeInput]("code"), (*Controller).SaveCode),
	},
	dashcontrol.Control[*Controller]{
		Name: "SaveTasks", Route: "POST /api/settings/tasks", Action: "save tasks",
		Doc:  "saves task_after (a duration such as \"45s\", \"off\" or \"\" for the default) and puts it in force from the next call.",
		Call: dashcontrol.Call1(dashcontrol.Body[TaskAfterInput]("tasks"), (*Controller).SaveTasks),
	},
	dashcontrol.Control[*Controller]{
		Name: "SetRAGAPIKey", Route: "POST /api/settings/rag/apikey", Action: "save the RAG key",
		Doc:  "changes how the config refers to the RAG backend's API key (a reference, or a new key for the keyring, or none); checked against the backend and in force at once.",
		Call: dashcontrol.Call1(dashcontrol.Body[RAGAPIKeyInput]("key"), (*Controller).SetRAGAPIKey),
	},
	dashcontrol.Control[*Controller]{
		Name: "Grants", Route: "GET /api/grants", Action: "list grants",
		Doc:  `lists the OAuth clients allowed to use this hub ([http] auth = "oauth"): client, device, scopes, last use, and the TLS certificate's fingerprint.`,
		Call: dashcontrol.Call0(dashcontrol.NoError((*Controller).Grants)),
	},
	dashcontrol.Control[*Controller]{
		Name: "RevokeGrant", Route: "POST /api/grants/{id}/revoke", Action: "revoke grant {id}",
		Doc:  "revokes an OAuth client's grant at once: its next request is refused.",
		Call: dashcontrol.Call1(dashcontrol.Path[string]("id"), (*Controller).RevokeGrant),
	},
	dashcontrol.Control[*Controller]{
		Name: "SetAutostart", Route: "POST /api/settings/autostart", Action: "{enabled?enable:disable} start at login",
		Doc:  `switches "Start at login", as the tray's item does.`,
		Call: dashcontrol.Call1(dashcontrol.BodyField[bool]("enabled").Required(), (*Controller).SetAutostart),
	},

	// Logs.
	dashcontrol.Control[*Controller]{
		Name: "Audit", Route: "GET /api/audit", Action: "read the audit log",
		Doc:  "reads one page of the audit trail from its files (the Logs view); only the filters set travel.",
		Call: dashcontrol.Call1(dashcontrol.Query[AuditQuery]("q"), (*Controller).Audit),
	},
	dashcontrol.Control[*Controller]{
		Name: "HubLog", Route: "GET /api/hublog", Action: "read the hub log",
		Doc: "returns the hub's own log: the newest limit records at level or above, oldest first.",
		Call: dashcontrol.Call2(dashcontrol.QueryParam[string]("level"), dashcontrol.QueryParam[int]("limit"),
			(*Controller).HubLog),
	},

	// Project folder.
	dashcontrol.Control[*Controller]{
		Name: "Project", Route: "GET /api/project", Action: "read the project folder",
		Doc:  `returns the hub's project folder (dir "" while none is chosen).`,
		Call: dashcontrol.Call0(dashcontrol.NoError((*Controller).Project)),
	},
	dashcontrol.Control[*Controller]{
		Name: "SetProject", Route: "POST /api/project", Action: "choose the project folder",
		Doc:  "makes dir (absolute, or ~/…) the project folder now and remembers it for the next launch; the hub refuses the home itself and /.",
		Call: dashcontrol.Call1(dashcontrol.BodyField[string]("dir").Required(), (*Controller).SetProject),
	},
	dashcontrol.Control[*Controller]{
		Name: "PickProject", Route: "POST /api/project/pick", Action: "choose the project folder",
		Doc:        "opens the desktop's native folder picker and makes the folder chosen the project folder (the window only: a browser has no picker).",
		BindByHand: true,
		Call: dashcontrol.Call0(func(c *Controller) (ProjectChange, error) {
			return c.PickProject(nil) // over HTTP: refused, naming the fix (type the path)
		}),
	},
)

// The Clients view's preview and apply take the same arguments.
var (
	clientName   = dashcontrol.Path[string]("name")
	clientScope  = dashcontrol.BodyField[string]("scope").OneOf("user", "project")
	clientAction = dashcontrol.BodyField[string]("action").OneOf("connect", "disconnect")
	// The client's own tools mode for a connect ("" for the hub's: full, search or script).
	clientToolsMode = dashcontrol.BodyField[string]("toolsMode")
)

// ControlSpecs returns the declarations of the dashboard's controls, in order, for
// build/gencontrols (which writes the Wails bindings and the TypeScript client from them).
func ControlSpecs() []dashcontrol.Spec { return dashboardControls.Specs() }

// Controls is the control table: the dashboard server serves its routes, the desktop's bindings
// invoke its controls.
func Controls() *dashcontrol.Table[*Controller] { return dashboardControls }

// InputResult is SendInput's answer.
type InputResult struct {
	Success bool `json:"success"`
}

// ValidateControls checks the control table's declarations (build/gencontrols refuses a table
// that does not pass; so does a test).
func ValidateControls() error { return dashboardControls.Validate() }
