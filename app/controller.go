package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/switchboard-hub/switchboard/internal/authserver"
	"github.com/switchboard-hub/switchboard/internal/policy"
	"github.com/switchboard-hub/switchboard/internal/process"
	"github.com/switchboard-hub/switchboard/internal/wshub"
	"github.com/switchboard-hub/switchboard/mcp"
	"github.com/switchboard-hub/switchboard/mcp/ide"
	"github.com/switchboard-hub/switchboard/mcp/tools"
	mcptransport "github.com/switchboard-hub/switchboard/mcp/transport"
	"github.com/switchboard-hub/switchboard/mcp/trust"
)

// Controller is what the dashboard may ask of the hub. The desktop window binds it through Wails
// and the headless dashboard exposes the same methods as a small HTTP API, so the frontend has one
// set of controls in both modes. All live data flows the other way, over the WebSocket hub.
type Controller struct {
	st      *Stack
	version string
	exe     string
	// dryRun: a settings save only computes its edit of the config file (PreviewSettings).
	dryRun bool
}

// NewController returns the controls for one stack.
func NewController(st *Stack, version string) *Controller {
	exe, err := os.Executable()
	if err != nil {
		exe = "switchboard"
	}
	c := &Controller{st: st, version: version, exe: exe}
	// CLI verbs run against this hub reach the same controls (mcptransport.ControlMethod).
	st.Service.SetControl(c.control)
	return c
}

// Bootstrap tells the frontend where the WebSocket hub is.
type Bootstrap struct {
	HubURL    string `json:"hubUrl"`
	HubToken  string `json:"hubToken"`
	Version   string `json:"version"`
	Workspace string `json:"workspace"`
}

// Bootstrap returns the hub URL and token.
func (c *Controller) Bootstrap() (Bootstrap, error) {
	if c.st.WSHub == nil || !c.st.WSHub.Running() {
		return Bootstrap{}, errors.New("the WebSocket hub is not running; switch it on (transport ws)")
	}
	return Bootstrap{HubURL: c.st.WSHub.URL(), HubToken: c.st.WSHub.Token(), Version: c.version, Workspace: c.st.Service.WorkspaceDir()}, nil
}

// TransportList wraps the transport states (the same shape as the "transports" hub channel).
type TransportList = mcp.TransportsFeed

// Transports lists the four switchable transports.
func (c *Controller) Transports() TransportList {
	return TransportList{Transports: c.st.Transports.Status()}
}

// SetTransport switches one transport on or off, and saves it in the config file.
func (c *Controller) SetTransport(name string, enabled bool) (TransportList, error) {
	if name == mcp.TransportWS && !enabled {
		return c.Transports(), errors.New("ws: the dashboard itself runs on the WebSocket hub; it cannot switch it off (use the tray)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), mcptransport.DrainTimeout+2*time.Second)
	defer cancel()
	end := c.begin("transport_set", transportArgs{Name: name, Enabled: enabled})
	err := c.switchTransport(ctx, name, enabled) // saved in the config file too (controller_settings.go)
	end(err)
	return c.Transports(), err
}

// SetTransportBy switches one transport now and saves it in the config file, as SetTransport
// does, audited as transport_set by actor (the tray). Unlike the dashboard's switch it may switch
// the WebSocket hub off: the tray does not run on it.
func (c *Controller) SetTransportBy(ctx context.Context, actor, name string, enabled bool) error {
	end := c.st.Service.BeginAction(actor, "transport_set", transportArgs{Name: name, Enabled: enabled})
	err := c.switchTransport(ctx, name, enabled)
	end(err)
	return err
}

// Hub is the WebSocket hub the dashboard's live data comes from (nil in a hub built without one).
func (c *Controller) Hub() *wshub.Hub { return c.st.WSHub }

// ToolsetList wraps the toolset states (the same shape as the "toolsets" hub channel).
type ToolsetList = mcp.ToolsetFeed

// Toolsets lists every toolset, whether it is served and which registered tools it holds.
func (c *Controller) Toolsets() ToolsetList {
	return ToolsetList{Toolsets: c.st.Service.Toolsets()}
}

// SetToolset switches one toolset on or off for every client (they get tools/list_changed) and
// saves it in the config file, audited as toolset_set.
func (c *Controller) SetToolset(name string, enabled bool) (ToolsetList, error) {
	end := c.begin("toolset_set", transportArgs{Name: name, Enabled: enabled})
	sets, err := c.switchToolset(name, enabled)
	end(err)
	return ToolsetList{Toolsets: sets}, err
}

// actorDashboard marks audit entries for controls used in the dashboard (window or headless page).
const actorDashboard = "dashboard"

// begin audits a dashboard action: "started" now, the outcome when end is called.
func (c *Controller) begin(action string, args any) (end func(error)) {
	return c.st.Service.BeginAction(actorDashboard, action, args)
}

// Audit argument shapes (JSON keys as in the matching tools).
type (
	transportArgs struct {
		Name    string `json:"name"`
		Enabled bool   `json:"enabled"`
	}
	processStartArgs struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
	}
	processIDArgs struct {
		ID string `json:"id"`
	}
	processInputArgs struct {
		ID    string `json:"id"`
		Input string `json:"input"` // summarised as size and sha256, never the text
	}
)

// StartProcess starts a command in the workspace.
func (c *Controller) StartProcess(command string, args []string) (process.Info, error) {
	if command == "" {
		return process.Info{}, errors.New("command: required, e.g. \"npm\"")
	}
	end := c.begin("process_start", processStartArgs{Command: command, Args: args})
	info, err := c.startProcess(command, args)
	end(err)
	return info, err
}

func (c *Controller) startProcess(command string, args []string) (process.Info, error) {
	// Like process_start: the child starts in the directory that was opened, held by its handle.
	ws := c.st.Service.Workspace()
	if ws == nil {
		return process.Info{}, errors.New(NoProjectReason)
	}
	dir, abs, err := ws.OpenDir(".")
	if err != nil {
		return process.Info{}, err
	}
	defer dir.Close()
	return c.st.Processes.Start(context.Background(), process.StartOptions{Command: command, Args: args, Dir: abs, DirFile: dir})
}

// StopProcess stops a process (SIGTERM, then SIGKILL after the grace period).
func (c *Controller) StopProcess(id string) (process.Info, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	end := c.begin("process_stop", processIDArgs{ID: id})
	info, err := c.st.Processes.Stop(ctx, id)
	end(err)
	return info, err
}

// KillProcess kills a process group at once.
func (c *Controller) KillProcess(id string) (process.Info, error) {
	end := c.begin("process_kill", processIDArgs{ID: id})
	info, err := c.st.Processes.Kill(id)
	end(err)
	return info, err
}

// SendInput writes to a process's stdin.
func (c *Controller) SendInput(id, input string) error {
	if input == "" {
		return errors.New("input: empty; include \"\\n\" to send a line")
	}
	end := c.begin("process_input", processInputArgs{ID: id, Input: input})
	err := c.st.Processes.Input(id, []byte(input))
	end(err)
	return err
}

// CreateIDESession asks the agentic backend for a new session. When the backend has not confirmed
// in time the answer is a record with status "creating" and no id (the real one follows on the
// ide:sessions channel).
func (c *Controller) CreateIDESession(name string) (ide.Session, error) {
	if name == "" {
		return ide.Session{}, errors.New("name: required")
	}
	end := c.begin("ide_session_create", struct {
		Name string `json:"name"`
	}{name})
	res, err := c.st.IDE.CreateSession(context.Background(), name)
	end(err)
	return res, err
}

// SendChat sends a chat message to an agent session.
func (c *Controller) SendChat(sessionID, message string) (ide.ChatSendOutput, error) {
	if sessionID == "" || message == "" {
		return ide.ChatSendOutput{}, errors.New("sessionId and message: both required")
	}
	end := c.begin("ide_chat_send", struct {
		SessionID string `json:"sessionId"`
		Message   string `json:"message"` // size and sha256 only
	}{sessionID, message})
	res, err := c.st.IDE.SendChat(context.Background(), sessionID, message)
	end(err)
	return res, err
}

// ClientConfig is one ready-to-paste MCP client configuration per running transport (stdio is
// always there; the others only while their transport runs).
type ClientConfig struct {
	Stdio ClientSnippet  `json:"stdio"`
	Unix  *ClientSnippet `json:"unix,omitempty"`
	TCP   *ClientSnippet `json:"tcp,omitempty"`
	HTTP  *ClientSnippet `json:"http,omitempty"`
}

// ClientSnippet is the {"mcpServers": {"switchboard": {...}}} block clients read.
type ClientSnippet struct {
	MCPServers ClientServers `json:"mcpServers"`
}

// ClientServers holds the one server entry Switchboard contributes.
type ClientServers struct {
	Switchboard ClientServer `json:"switchboard"`
}

// ClientServer is how a client starts (command, args) or reaches (type "http", url, headers)
// Switchboard.
type ClientServer struct {
	Command string         `json:"command,omitempty"`
	Args    []string       `json:"args,omitempty"`
	Type    string         `json:"type,omitempty"`
	URL     string         `json:"url,omitempty"`
	Headers *ClientHeaders `json:"headers,omitempty"`
}

// ClientHeaders are the HTTP headers an HTTP client sends.
type ClientHeaders struct {
	Authorization string `json:"Authorization"`
}

// stdioServeArgs starts a separate hub in the project folder; with none chosen, in the directory
// the client starts it in.
func stdioServeArgs(project string) []string {
	if project == "" {
		return []string{"serve", "--stdio"}
	}
	return []string{"serve", "--stdio", "--workspace", project}
}

func snippet(srv ClientServer) *ClientSnippet {
	return &ClientSnippet{MCPServers: ClientServers{Switchboard: srv}}
}

// ClientConfig returns ready-to-paste client configuration for the running transports.
func (c *Controller) ClientConfig() ClientConfig {
	out := ClientConfig{Stdio: *snippet(ClientServer{
		Command: c.exe, Args: stdioServeArgs(c.st.Service.WorkspaceDir())})}
	if addr := c.st.Transports.Addr(mcp.TransportUnix); addr != "" {
		out.Unix = snippet(ClientServer{Command: c.exe, Args: []string{"connect", "--socket", addr}})
	}
	if addr := c.st.Transports.Addr(mcp.TransportTCP); addr != "" {
		// connect --tcp sends the TCP token handshake for any stdio client.
		out.TCP = snippet(ClientServer{Command: c.exe, Args: []string{"connect", "--tcp", addr}})
	}
	if addr := c.st.Transports.Addr(mcp.TransportHTTP); addr != "" {
		scheme := "http"
		if c.httpServesTLS() {
			scheme = "https"
		}
		out.HTTP = snippet(ClientServer{Type: "http", URL: fmt.Sprintf("%s://%s/mcp", scheme, addr),
			Headers: &ClientHeaders{Authorization: "Bearer " + c.st.Transports.Security().HTTPToken}})
	}
	return out
}

// ApprovalList is the pending approvals and the policy's state (GET /api/approvals), the same
// shape as the "approvals" hub channel's snapshot.
type ApprovalList = trust.ApprovalsSnapshot

// Approvals lists the questions waiting for the user.
func (c *Controller) Approvals() ApprovalList {
	return ApprovalList{Approvals: c.st.Service.Approvals().Pending(), Policy: c.st.Service.Policy().Status()}
}

// DecisionResult is DecideApproval's answer.
type DecisionResult struct {
	ID       string `json:"id"`
	Decision string `json:"decision"`
}

// DecideApproval answers a pending approval with "allow" or "deny" (by: the dashboard). For a
// client asking to use the hub (policy.KindClient), scopes are the toolsets granted (and
// "readonly"); none: those it asked for.
func (c *Controller) DecideApproval(id, decision string, scopes []string) (DecisionResult, error) {
	if len(scopes) > 0 {
		known := append(c.st.grantableScopes(), authserver.ScopeReadOnly)
		for _, sc := range scopes {
			if !slices.Contains(known, sc) {
				return DecisionResult{}, fmt.Errorf("scopes: %q is not a toolset; use %s", sc, strings.Join(known, ", "))
			}
		}
	}
	if err := c.st.Service.DecideApproval(id, decision, policy.ByDashboard, scopes...); err != nil {
		return DecisionResult{}, err
	}
	return DecisionResult{ID: id, Decision: decision}, nil
}

// WorkspaceGrant is GrantWorkspace's answer: the session, the directory and its new status
// ("approved" after a grant, "declined" after a revoke). The Sessions view follows the change
// live on the "sessions" hub channel.
type WorkspaceGrant struct {
	SessionID string `json:"sessionId"`
	Dir       string `json:"dir"`
	Allow     bool   `json:"allow"`
	Status    string `json:"status"`
}

type workspaceGrantArgs struct {
	Session string `json:"session"`
	Dir     string `json:"dir"`
}

// GrantWorkspace grants (allow) or revokes, for one session, one of its MCP roots or its relay
// directory (by: the dashboard), audited as workspace_grant or workspace_revoke. The answer holds
// for that session, like one given to a prompt.
func (c *Controller) GrantWorkspace(sessionID, dir string, allow bool) (WorkspaceGrant, error) {
	switch {
	case sessionID == "":
		return WorkspaceGrant{}, errors.New("session: required, the id of a connected MCP client session (the Sessions view lists them)")
	case dir == "":
		return WorkspaceGrant{}, errors.New("dir: required, one of the session's roots or its relay directory")
	case !filepath.IsAbs(dir):
		return WorkspaceGrant{}, fmt.Errorf("dir: %q is not an absolute path; use the directory the Sessions view shows", dir)
	}
	dir = filepath.Clean(dir)
	action, status := "workspace_revoke", "declined"
	if allow {
		action, status = "workspace_grant", "approved"
	}
	end := c.begin(action, workspaceGrantArgs{Session: sessionID, Dir: dir})
	err := c.st.Service.GrantWorkspace(sessionID, dir, allow, policy.ByDashboard)
	end(err)
	if err != nil {
		return WorkspaceGrant{}, err
	}
	return WorkspaceGrant{SessionID: sessionID, Dir: dir, Allow: allow, Status: status}, nil
}

// RAGCollections lists the RAG collections with their counts, backend and embedder (the
// dashboard's Knowledge view).
func (c *Controller) RAGCollections() (tools.RAGCollectionsOutput, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return c.st.Service.RAGCollections(ctx, true)
}

// RAGQuery runs rag_query for the Knowledge view's query box (topK 0 means 5).
func (c *Controller) RAGQuery(collection, question string, topK int) (tools.RAGQueryOutput, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return c.st.Service.RAGQuery(ctx, tools.RAGQueryInput{Collection: collection, Question: question, TopK: topK})
}
