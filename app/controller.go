package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/switchboard-hub/switchboard/internal/process"
	"github.com/switchboard-hub/switchboard/mcp"
)

// Controller is what the dashboard may ask of the hub. The desktop window binds it through Wails
// and the headless dashboard exposes the same methods as a small HTTP API, so the frontend has one
// set of controls in both modes. All live data flows the other way, over the WebSocket hub.
type Controller struct {
	st      *Stack
	version string
	exe     string
}

// NewController returns the controls for one stack.
func NewController(st *Stack, version string) *Controller {
	exe, err := os.Executable()
	if err != nil {
		exe = "switchboard"
	}
	return &Controller{st: st, version: version, exe: exe}
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
	if c.st.Hub == nil || !c.st.Hub.Running() {
		return Bootstrap{}, errors.New("the WebSocket hub is not running; switch it on (transport ws)")
	}
	return Bootstrap{HubURL: c.st.Hub.URL(), HubToken: c.st.Hub.Token(), Version: c.version, Workspace: c.st.Service.Workspace().Dir()}, nil
}

// TransportList wraps the transport states.
type TransportList struct {
	Transports []mcp.TransportStatus `json:"transports"`
}

// Transports lists the four switchable transports.
func (c *Controller) Transports() TransportList {
	return TransportList{Transports: c.st.Transports.Status()}
}

// SetTransport switches one transport on or off.
func (c *Controller) SetTransport(name string, enabled bool) (TransportList, error) {
	if name == mcp.TransportWS && !enabled {
		return c.Transports(), errors.New("ws: the dashboard itself runs on the WebSocket hub; it cannot switch it off (use the tray)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), mcp.DrainTimeout+2*time.Second)
	defer cancel()
	err := c.st.Transports.Set(ctx, name, enabled)
	return c.Transports(), err
}

// StartProcess starts a command in the workspace.
func (c *Controller) StartProcess(command string, args []string) (process.Info, error) {
	if command == "" {
		return process.Info{}, errors.New("command: required, e.g. \"npm\"")
	}
	return c.st.Processes.Start(context.Background(), process.StartOptions{Command: command, Args: args, Dir: c.st.Service.Workspace().Dir()})
}

// StopProcess stops a process (SIGTERM, then SIGKILL after the grace period).
func (c *Controller) StopProcess(id string) (process.Info, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return c.st.Processes.Stop(ctx, id)
}

// KillProcess kills a process group at once.
func (c *Controller) KillProcess(id string) (process.Info, error) {
	return c.st.Processes.Kill(id)
}

// SendInput writes to a process's stdin.
func (c *Controller) SendInput(id, input string) error {
	if input == "" {
		return errors.New("input: empty; include \"\\n\" to send a line")
	}
	return c.st.Processes.Input(id, []byte(input))
}

// CreateIDESession asks the agentic backend for a new session.
func (c *Controller) CreateIDESession(name string) (any, error) {
	if name == "" {
		return nil, errors.New("name: required")
	}
	return c.st.IDE.CreateSession(context.Background(), name)
}

// SendChat sends a chat message to an agent session.
func (c *Controller) SendChat(sessionID, message string) (any, error) {
	if sessionID == "" || message == "" {
		return nil, errors.New("sessionId and message: both required")
	}
	return c.st.IDE.SendChat(context.Background(), sessionID, message)
}

// ClientConfig returns ready-to-paste client configuration for the running transports.
func (c *Controller) ClientConfig() map[string]any {
	out := map[string]any{
		"stdio": map[string]any{"mcpServers": map[string]any{"switchboard": map[string]any{
			"command": c.exe, "args": []string{"serve", "--stdio", "--workspace", c.st.Service.Workspace().Dir()}}}},
	}
	if addr := c.st.Transports.Addr(mcp.TransportUnix); addr != "" {
		out["unix"] = map[string]any{"mcpServers": map[string]any{"switchboard": map[string]any{
			"command": c.exe, "args": []string{"connect", "--socket", addr}}}}
	}
	if addr := c.st.Transports.Addr(mcp.TransportTCP); addr != "" {
		// connect --tcp sends the TCP token handshake for any stdio client.
		out["tcp"] = map[string]any{"mcpServers": map[string]any{"switchboard": map[string]any{
			"command": c.exe, "args": []string{"connect", "--tcp", addr}}}}
	}
	if addr := c.st.Transports.Addr(mcp.TransportHTTP); addr != "" {
		out["http"] = map[string]any{"mcpServers": map[string]any{"switchboard": map[string]any{
			"type": "http", "url": fmt.Sprintf("http://%s/mcp", addr),
			"headers": map[string]string{"Authorization": "Bearer " + c.st.Config.HTTP.Token}}}}
	}
	return out
}
