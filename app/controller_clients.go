package app

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/switchboard-hub/switchboard/internal/clientconf"
	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/mcp"
)

// The dashboard's Clients view: the same work as `switchboard clients` (app/cli/clients.go) over
// the domain package internal/clientconf, with the same entry (RelayEntry). The project scope is
// the hub's workspace, not the directory the hub was started in.

// ClientList is ListClients' answer: every MCP client Switchboard knows, in the CLI's order.
type ClientList struct {
	Clients []ClientInfo `json:"clients"`
	// Project is the directory whose project-scope files are listed (the hub's workspace).
	Project string `json:"project"`
}

// ClientInfo is one MCP client: whether it is installed and its state in each scope it has.
type ClientInfo struct {
	Name      string        `json:"name"`    // e.g. "cursor", as `switchboard clients connect NAME` takes it
	Display   string        `json:"display"` // e.g. "Cursor"
	Format    string        `json:"format"`  // the file format Switchboard accepts, for people
	Installed bool          `json:"installed"`
	Scopes    []ClientScope `json:"scopes"`
}

// ClientScope is a client's configuration file in one scope and how it stands towards this hub.
type ClientScope struct {
	Scope  string `json:"scope"` // "user" or "project"
	Path   string `json:"path"`
	Exists bool   `json:"exists"`
	// State is one of "not installed", "not set up", "connected to this hub", "set up
	// differently", "cannot read the config".
	State string `json:"state"`
	// Detail is the entry found when set up differently, or why the file cannot be read.
	Detail string `json:"detail,omitempty"`
	// ToolsMode is the tools mode the client's entry asks for (connect --tools-mode), "" for
	// the hub's.
	ToolsMode string `json:"tools_mode,omitempty"`
	// HasToken: the entry carries the client's own token (written by connect), which names
	// the client on the hub.
	HasToken bool `json:"has_token,omitempty"`
}

// ClientChange is PreviewClient's and ApplyClient's answer: the edit of one client's file.
type ClientChange struct {
	Client  string `json:"client"`
	Display string `json:"display"`
	Scope   string `json:"scope"`
	Action  string `json:"action"` // "connect" or "disconnect"
	// ToolsMode is the client's own tools mode the connect writes ("" for the hub's).
	ToolsMode string `json:"tools_mode,omitempty"`
	Path      string `json:"path"`
	// Diff is the change as a unified diff (what `switchboard clients connect --dry-run` prints);
	// empty when nothing would change.
	Diff string `json:"diff"`
	// Changed: the edit changes the file (a preview), or changed it (after apply).
	Changed bool `json:"changed"`
	// Applied is true when the file was written.
	Applied bool `json:"applied"`
	// Backup is where the previous version was copied ("" for a new file or no write).
	Backup string `json:"backup,omitempty"`
	// State is the client's state in this scope: now for a preview, after the write for apply.
	State string `json:"state"`
	// Message says what happened, or would happen, in a sentence.
	Message string `json:"message"`
}

type clientArgs struct {
	Client    string `json:"client"`
	Scope     string `json:"scope"`
	Path      string `json:"path,omitempty"`
	ToolsMode string `json:"tools_mode,omitempty"`
}

// clientEnv is the user's environment with the hub's workspace as the project directory.
func (c *Controller) clientEnv() (clientconf.Env, error) {
	env, err := clientconf.OSEnv(config.ReadEnv().Value)
	if err != nil {
		return env, err
	}
	// "" while no project folder is chosen: the project scope has no file then (never one
	// relative to the directory the hub runs in, the home directory of a desktop launch).
	env.Project = c.st.Service.WorkspaceDir()
	env.ProjectBackups = ClientBackupDir(c.st.Config)
	return env, nil
}

// ClientBackupDir is where backups of project-scope client files go: the hub's data directory,
// not the project (a backup there would be committed, or read by the client as a config).
func ClientBackupDir(cfg config.Config) string { return filepath.Join(cfg.DataDir, "client-backups") }

// ListClients lists every known MCP client, installed or not, with its state in each scope.
func (c *Controller) ListClients() (ClientList, error) {
	env, err := c.clientEnv()
	if err != nil {
		return ClientList{}, err
	}
	out := ClientList{Clients: []ClientInfo{}, Project: env.Project}
	for _, cl := range clientconf.Clients() {
		want, err := RelayEntry(c.st.Config, "", cl, "")
		if err != nil {
			return ClientList{}, err
		}
		info := ClientInfo{Name: cl.Name, Display: cl.Display, Format: cl.Format(), Installed: cl.Installed(env), Scopes: []ClientScope{}}
		for _, scope := range cl.Scopes() {
			if scope == clientconf.ScopeProject && env.Project == "" {
				continue
			}
			st := cl.Check(env, scope, want)
			_, statErr := os.Stat(st.Path)
			info.Scopes = append(info.Scopes, ClientScope{Scope: string(scope), Path: st.Path, Exists: statErr == nil, State: string(st.State), Detail: st.Detail, ToolsMode: st.ToolsMode, HasToken: st.HasToken})
		}
		out.Clients = append(out.Clients, info)
	}
	return out, nil
}

// plan looks the client up and computes the edit, refusing unknown actions and scopes. token is
// the client token a connect writes (TokenPending for a preview).
func (c *Controller) plan(name, scope, action, toolsMode, token string) (clientconf.Client, clientconf.Env, clientconf.Change, *clientconf.Entry, error) {
	var none clientconf.Change
	cl, err := clientconf.Lookup(name)
	if err != nil {
		return cl, clientconf.Env{}, none, nil, err
	}
	if scope == "" {
		scope = string(clientconf.ScopeUser)
	}
	if scope != string(clientconf.ScopeUser) && scope != string(clientconf.ScopeProject) {
		return cl, clientconf.Env{}, none, nil, fmt.Errorf("scope: %q is not a scope; want \"user\" or \"project\"", scope)
	}
	if toolsMode != "" {
		if _, err := mcp.ParseToolsMode(toolsMode); err != nil {
			return cl, clientconf.Env{}, none, nil, err
		}
	}
	var e *clientconf.Entry
	switch action {
	case "connect":
		want, err := RelayEntry(c.st.Config, "", cl, toolsMode)
		if err != nil {
			return cl, clientconf.Env{}, none, nil, err
		}
		want = WithClientToken(want, clientconf.Scope(scope), token)
		e = &want
	case "disconnect":
	default:
		return cl, clientconf.Env{}, none, nil, fmt.Errorf("action: %q is not an action; want \"connect\" or \"disconnect\"", action)
	}
	env, err := c.clientEnv()
	if err != nil {
		return cl, env, none, nil, err
	}
	if scope == string(clientconf.ScopeProject) && env.Project == "" {
		return cl, env, none, nil, errors.New("scope project: " + NoProjectReason)
	}
	ch, err := cl.Plan(env, clientconf.Scope(scope), e)
	return cl, env, ch, e, err
}

// state is the client's state in scope now (checked against the relay entry).
func (c *Controller) clientState(cl clientconf.Client, env clientconf.Env, scope string) string {
	want, err := RelayEntry(c.st.Config, "", cl, "")
	if err != nil {
		return ""
	}
	return string(cl.Check(env, clientconf.Scope(scope), want).State)
}

func orUser(scope string) string {
	if scope == "" {
		return string(clientconf.ScopeUser)
	}
	return scope
}

// PreviewClient computes, without writing anything, the edit that connects (action "connect") or
// disconnects ("disconnect") a client in scope ("user" or "project"): the unified diff, and
// whether anything would change. A file that does not parse as the client reads it is refused,
// naming the line and the fix.
//
// toolsMode, for a connect, is the client's own tools mode (full, search, script; "" for the
// hub's): the entry's relay asks the hub for it.
func (c *Controller) PreviewClient(name, scope, action, toolsMode string) (ClientChange, error) {
	cl, env, ch, _, err := c.plan(name, scope, action, toolsMode, TokenPending)
	if err != nil {
		return ClientChange{}, err
	}
	scope = orUser(scope)
	out := ClientChange{Client: cl.Name, Display: cl.Display, Scope: scope, Action: action, ToolsMode: toolsMode, Path: ch.Path,
		Changed: !ch.Empty(), State: c.clientState(cl, env, scope)}
	switch {
	case ch.Empty() && action == "connect":
		out.Message = fmt.Sprintf("%s is already connected to this hub (%s): nothing to change.", cl.Display, ch.Path)
	case ch.Empty():
		out.Message = fmt.Sprintf("%s has no switchboard entry in %s: nothing to change.", cl.Display, ch.Path)
	default:
		out.Diff = ch.Diff()
		out.Message = fmt.Sprintf("Write %s? The previous version is kept as a backup.", ch.Path)
	}
	return out, nil
}

// ApplyClient writes the edit PreviewClient shows (computed again, from the file as it is now),
// keeping a backup of the previous version; audited as the dashboard's client_connect or
// client_disconnect.
func (c *Controller) ApplyClient(name, scope, action, toolsMode string) (ClientChange, error) {
	if action != "connect" && action != "disconnect" {
		return ClientChange{}, fmt.Errorf("action: %q is not an action; want \"connect\" or \"disconnect\"", action)
	}
	if _, err := clientconf.Lookup(name); err != nil {
		return ClientChange{}, err
	}
	if s := orUser(scope); s != string(clientconf.ScopeUser) && s != string(clientconf.ScopeProject) {
		return ClientChange{}, fmt.Errorf("scope: %q is not a scope; want \"user\" or \"project\"", scope)
	}
	end := c.begin("client_"+action, clientArgs{Client: name, Scope: orUser(scope), ToolsMode: toolsMode})
	out, err := c.applyClient(name, scope, action, toolsMode)
	end(err)
	return out, err
}

func (c *Controller) applyClient(name, scope, action, toolsMode string) (ClientChange, error) {
	cl, env, ch, _, err := c.plan(name, scope, action, toolsMode, TokenPending)
	if err != nil {
		return ClientChange{}, err
	}
	if action == "connect" && !ch.Empty() && clientconf.Scope(orUser(scope)) == clientconf.ScopeUser {
		// The token is issued only now that the file will be written (a preview issues none),
		// replacing the client's previous one.
		store, err := c.clientTokens()
		if err != nil {
			return ClientChange{}, err
		}
		token, err := store.Issue(cl.Name)
		if err != nil {
			return ClientChange{}, err
		}
		if cl, env, ch, _, err = c.plan(name, scope, action, toolsMode, token); err != nil {
			return ClientChange{}, err
		}
	}
	scope = orUser(scope)
	out := ClientChange{Client: cl.Name, Display: cl.Display, Scope: scope, Action: action, ToolsMode: toolsMode, Path: ch.Path, Diff: ch.Diff()}
	if ch.Empty() {
		out.Diff = ""
		out.State = c.clientState(cl, env, scope)
		if action == "connect" {
			out.Message = fmt.Sprintf("%s is already connected to this hub (%s): nothing changed.", cl.Display, ch.Path)
		} else {
			out.Message = fmt.Sprintf("%s has no switchboard entry in %s: nothing changed.", cl.Display, ch.Path)
		}
		return out, nil
	}
	backup, err := ch.Apply(time.Now())
	if err != nil {
		if backup != "" {
			err = fmt.Errorf("%w (the previous version is in %s)", err, backup)
		}
		return ClientChange{}, err
	}
	out.Changed, out.Applied, out.Backup = true, true, backup
	if action == "disconnect" && clientconf.Scope(scope) == clientconf.ScopeUser {
		// The entry that held the client's token is gone: so is the token.
		if store, err := c.clientTokens(); err == nil {
			if _, err := store.Revoke(cl.Name); err != nil {
				return ClientChange{}, fmt.Errorf("%s: the entry is removed but its token is not revoked: %w; revoke it in Settings › Client tokens", cl.Display, err)
			}
		}
	}
	out.State = c.clientState(cl, env, scope)
	if backup != "" {
		out.Message = fmt.Sprintf("Wrote %s (the previous version is in %s).", ch.Path, backup)
	} else {
		out.Message = fmt.Sprintf("Wrote %s.", ch.Path)
	}
	if action == "connect" {
		out.Message += fmt.Sprintf(" Restart %s (or reload its MCP servers) to connect.", cl.Display)
	}
	return out, nil
}

// TokenPending stands for the client token in a previewed entry: the token itself is issued
// when the entry is written (ApplyClient, `clients connect` without --dry-run).
const TokenPending = "(a new client token, issued when written)"

// WithClientToken is e carrying token in its env (clientconf.TokenEnv) for the relay to present:
// the client's identity on the hub (Sessions, its workspace from [clients.NAME] project, its
// tasks and todos). A project-scope entry carries none: that file lives in the repository,
// where it is committed and shared, and a token there would leak with it.
func WithClientToken(e clientconf.Entry, scope clientconf.Scope, token string) clientconf.Entry {
	if scope == clientconf.ScopeProject || token == "" {
		return e
	}
	e.Env = map[string]string{clientconf.TokenEnv: token}
	return e
}

// RelayEntry is the server entry a client gets: the stdio relay to the running hub (as the
// Clients view's "unix" snippet for other clients), the running binary's absolute path, and
// --socket when the hub's socket is not the default one. Codex starts servers with a minimal
// environment (no XDG_RUNTIME_DIR), where `connect` would compute another default socket, so its
// entry always names the socket.
//
// toolsMode, when not "", is the client's own tools mode (full, search, script): the relay
// passes it to the hub, which lists that client the tools of that mode whatever its own.
func RelayEntry(cfg config.Config, socket string, client clientconf.Client, toolsMode string) (clientconf.Entry, error) {
	exe, err := os.Executable()
	if err != nil {
		return clientconf.Entry{}, fmt.Errorf("cannot find the switchboard binary: %w", err)
	}
	if p, err := filepath.EvalSymlinks(exe); err == nil {
		exe = p
	}
	path := socket
	if path == "" {
		path = cfg.Unix.Path
	}
	args := []string{"connect"}
	if path != config.DefaultSocketPath() || client.Name == "codex" {
		args = append(args, "--socket", path)
	}
	if toolsMode != "" {
		args = append(args, clientconf.ToolsModeArg, toolsMode)
	}
	return clientconf.Entry{Command: exe, Args: args}, nil
}
