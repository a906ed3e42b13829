package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"time"

	"github.com/switchboard-hub/switchboard/internal/clientconf"
	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/internal/policy"
	"github.com/switchboard-hub/switchboard/internal/tomledit"
	"github.com/switchboard-hub/switchboard/internal/upstream"
	mcptransport "github.com/switchboard-hub/switchboard/mcp/transport"
)

// The dashboard's Servers view and `switchboard servers` against a running hub: the user's
// other MCP servers ([[servers]] in the config file) with their state, tools and logs. Changes
// to the list (add, remove, enable, disable) are edits of the config file, so the file stays the
// source of truth; the hub applies them at once (and would on its own when it sees the file
// change). Approvals go to the hub, which pins the definitions it sees.

// ServerList is ListServers' answer.
type ServerList struct {
	Servers []upstream.Status `json:"servers"`
	// ConfigPath is the file the list lives in.
	ConfigPath string `json:"configPath"`
}

// ServerLog is ServerLogs' answer: a server's last log lines, oldest first.
type ServerLog struct {
	Name  string             `json:"name"`
	Lines []upstream.LogLine `json:"lines"`
}

// ServerSignIn is LoginServer's answer.
type ServerSignIn struct {
	Name string `json:"name"`
	// URL is the authorization server's page the user signs in on.
	URL string `json:"url"`
	// Opened: the hub opened URL in the user's browser; otherwise the caller opens it.
	Opened bool `json:"opened"`
}

// ServerChange is the answer of an edit of the server list: the config file's diff and the
// servers after it.
type ServerChange struct {
	Path    string            `json:"path"`
	Diff    string            `json:"diff"`
	Servers []upstream.Status `json:"servers"`
}

func (c *Controller) upstreams() (*upstream.Manager, error) {
	m := c.st.Service.Upstreams()
	if m == nil {
		return nil, errors.New("servers: this hub runs no upstream servers")
	}
	return m, nil
}

// ListServers lists the configured servers with their state.
func (c *Controller) ListServers() (ServerList, error) {
	m, err := c.upstreams()
	if err != nil {
		return ServerList{}, err
	}
	return ServerList{Servers: m.Statuses(), ConfigPath: c.st.Config.Path}, nil
}

// ServerLogs returns a server's last lines of stderr and supervisor events (n <= 0: all kept).
func (c *Controller) ServerLogs(name string, n int) (ServerLog, error) {
	m, err := c.upstreams()
	if err != nil {
		return ServerLog{}, err
	}
	lines, err := m.Logs(name, n)
	if err != nil {
		return ServerLog{}, err
	}
	return ServerLog{Name: name, Lines: lines}, nil
}

type serverArgs struct {
	Server string   `json:"server"`
	Tools  []string `json:"tools,omitempty"`
}

// ApproveServer takes a server out of quarantine and pins its tools (or only the named held
// tools), audited as server_approve.
func (c *Controller) ApproveServer(name string, tools []string) (upstream.Status, error) {
	m, err := c.upstreams()
	if err != nil {
		return upstream.Status{}, err
	}
	end := c.begin("server_approve", serverArgs{Server: name, Tools: tools})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	st, err := m.Approve(ctx, name, tools...)
	end(err)
	return st, err
}

// ApproveServerCommand approves a server's command as the user was shown it (hash is its
// CommandHash, from the server's status): the server may then run, its secrets be resolved and
// its headers sent. A command that changed since it was shown is refused. Audited as
// server_approve_command.
func (c *Controller) ApproveServerCommand(name, hash string) (upstream.Status, error) {
	m, err := c.upstreams()
	if err != nil {
		return upstream.Status{}, err
	}
	end := c.begin("server_approve_command", serverArgs{Server: name})
	st, err := func() (upstream.Status, error) {
		spec, err := m.Spec(name)
		if err != nil {
			return upstream.Status{}, err
		}
		if hash == "" {
			return upstream.Status{}, errors.New("hash: required: the command_hash of the server's status, so the command approved is the one that was shown")
		}
		if hash != spec.CommandHash() {
			return upstream.Status{}, fmt.Errorf("server %q: its command changed since it was shown (now: %s); review it again before approving", name, spec.CommandLine())
		}
		if err := m.ApproveCommand(spec); err != nil {
			return upstream.Status{}, err
		}
		return m.Status(name)
	}()
	end(err)
	return st, err
}

// RestartServer stops and starts a server now, audited as server_restart.
func (c *Controller) RestartServer(name string) (upstream.Status, error) {
	m, err := c.upstreams()
	if err != nil {
		return upstream.Status{}, err
	}
	end := c.begin("server_restart", serverArgs{Server: name})
	err = m.Restart(name)
	end(err)
	if err != nil {
		return upstream.Status{}, err
	}
	return m.Status(name)
}

// SetServerEnabled switches a server on or off in the config file and applies it.
func (c *Controller) SetServerEnabled(name string, enabled bool) (ServerChange, error) {
	action := "server_disable"
	if enabled {
		action = "server_enable"
	}
	return c.editServers(action, serverArgs{Server: name}, func(data []byte) ([]byte, error) {
		return upstream.SetServerEnabled(data, name, enabled)
	})
}

// AddServer adds a server to the config file and starts it, its tools quarantined until
// approved. The command the form showed is approved with it: adding it was the user's act.
func (c *Controller) AddServer(spec upstream.Spec) (ServerChange, error) {
	return c.editServers("server_add", serverArgs{Server: spec.Name}, func(data []byte) ([]byte, error) {
		out, err := upstream.AddServer(data, spec)
		if err != nil {
			return nil, err
		}
		m, err := c.upstreams()
		if err != nil {
			return nil, err
		}
		if err := m.ApproveCommand(spec); err != nil {
			return nil, err
		}
		return out, nil
	})
}

// RemoveServer removes a server from the config file, stops it and forgets its approval.
func (c *Controller) RemoveServer(name string) (ServerChange, error) {
	return c.editServers("server_remove", serverArgs{Server: name}, func(data []byte) ([]byte, error) {
		return upstream.RemoveServer(data, name)
	})
}

// editServers edits the config file, audited as action, and applies the new server list.
func (c *Controller) editServers(action string, args serverArgs, edit func([]byte) ([]byte, error)) (ServerChange, error) {
	m, err := c.upstreams()
	if err != nil {
		return ServerChange{}, err
	}
	path := c.st.Config.Path
	if path == "" {
		return ServerChange{}, errors.New("servers: the hub has no config file path; start it with --config FILE")
	}
	end := c.begin(action, args)
	change, err := func() (ServerChange, error) {
		c.st.serversMu.Lock()
		defer c.st.serversMu.Unlock()
		old, err := os.ReadFile(path)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return ServerChange{}, fmt.Errorf("config %s: %w", path, err)
		}
		data, err := edit(old)
		if err != nil {
			return ServerChange{}, err
		}
		if data, err = config.ToolsetsFollowServers(old, data); err != nil {
			return ServerChange{}, err
		}
		if err := tomledit.WriteFile(path, data); err != nil {
			return ServerChange{}, err
		}
		if err := c.st.ReloadConfig(); err != nil {
			return ServerChange{}, err
		}
		// Tokens in a server's env or headers (or anywhere near) are never shown in the diff.
		diff := config.Redact(clientconf.Change{Path: path, Old: old, New: data, Exists: old != nil}.Diff(),
			append(config.Secrets(old), config.Secrets(data)...)...)
		return ServerChange{Path: path, Diff: diff}, nil
	}()
	end(err)
	if err != nil {
		return ServerChange{}, err
	}
	change.Servers = m.Statuses()
	return change, nil
}

// ReloadConfig reads the config file once and puts it in force: the policy and the upstream
// servers (the file is the source of truth; the watcher in NewStack does the same on every
// change on disk).
func (st *Stack) ReloadConfig() error {
	return st.applyConfig(config.LoadAgain(st.Config.Path))
}

// applyConfig puts one read of the config file in force. A file that did not load leaves the
// policy in force (its status says why), and the servers, [ml] and [rag] as they are.
func (st *Stack) applyConfig(cfg config.Config, err error) error {
	var p *policy.Policy
	if err == nil {
		p, err = cfg.CompilePolicy()
	}
	if err := st.Policy.Apply(p, err); err != nil {
		return err
	}
	st.Service.SetClientProjects(clientProjects(cfg)) // [clients.NAME] project: from the next call
	var errs []error
	if m := st.Service.Upstreams(); m != nil {
		prev := m.Names()
		errs = append(errs, m.Sync(st.serverSpecs(cfg.Servers)))
		// A server added to the file and named in its toolsets key (ToolsetsFollowServers
		// names it there) is served now, as it will be at the next start, even when this run's
		// toolsets leave out servers they do not name.
		for _, name := range m.Names() {
			if !slices.Contains(prev, name) && slices.Contains(cfg.Toolsets, name) {
				if _, err := st.Service.SetToolset(name, true); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	// So is the workspace key, as the Settings view's save does (followFileWorkspace), and the
	// tools mode (clients are told their tool list changed).
	if err == nil {
		if err := st.followFileToolsMode(cfg); err != nil {
			errs = append(errs, fmt.Errorf("tools_mode: %w", err))
		}
		if err := st.followFileTaskAfter(cfg); err != nil {
			errs = append(errs, err)
		}
		if err := st.followFileWorkspace(cfg.Workspace); err != nil {
			errs = append(errs, fmt.Errorf("workspace: %w", err))
		}
	}
	// So is [code] (the Settings view's save does the same: SaveCode): the idle time at once, a
	// server command from its language's next start.
	if err == nil && st.Code != nil {
		st.Code.Configure(cfg.Code.IdleTimeout(), cfg.Code.Servers)
	}
	// [ml] edited by hand is put in force like the Settings view's save (Stack.SetML).
	if !reflect.DeepEqual(cfg.ML, st.RunningML()) {
		if err := st.SetML(cfg.ML); err != nil {
			errs = append(errs, fmt.Errorf("ml: %w", err))
		}
	}
	// So is [rag] (Stack.SetRAG); one the hub cannot switch to (Qdrant unreachable, a directory
	// it cannot write) leaves the engine in force, and the error is logged.
	if cfg.RAG != st.RunningRAG() {
		if err := st.SetRAG(cfg.RAG); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// controlRequest is a ControlMethod request's params.
type controlRequest struct {
	Action string        `json:"action"`
	Name   string        `json:"name"`
	Tools  []string      `json:"tools"`
	Lines  int           `json:"lines"`
	On     bool          `json:"on"`
	Hash   string        `json:"hash"`
	Spec   upstream.Spec `json:"spec"`
}

// control answers the `switchboard` CLI verbs sent to the running hub (mcptransport.ControlMethod).
func (c *Controller) control(_ context.Context, action string, raw json.RawMessage) (any, error) {
	var req controlRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		return nil, fmt.Errorf("%s: %w", mcptransport.ControlMethod, err)
	}
	switch action {
	case "hub.info":
		return c.hubInfo(), nil
	case "clients.token":
		return c.IssueClientToken(req.Name)
	case "clients.revoke-token":
		return c.RevokeClientToken(req.Name)
	case "clients.drop-token":
		return c.dropClientToken(req.Name)
	case "servers.list":
		return c.ListServers()
	case "servers.logs":
		return c.ServerLogs(req.Name, req.Lines)
	case "servers.approve":
		return c.ApproveServer(req.Name, req.Tools)
	case "servers.approve-command":
		return c.ApproveServerCommand(req.Name, req.Hash)
	case "servers.restart":
		return c.RestartServer(req.Name)
	case "servers.signed-in":
		return c.ServerSignedIn(req.Name)
	case "servers.logout":
		return c.LogoutServer(req.Name)
	case "servers.reload":
		// Under the file's lock, as the watcher does: a Settings save in progress is read whole.
		c.st.serversMu.Lock()
		err := c.st.ReloadConfig()
		c.st.serversMu.Unlock()
		if err != nil {
			return nil, err
		}
		return c.ListServers()
	}
	return nil, fmt.Errorf("%s: unknown action %q", mcptransport.ControlMethod, action)
}
