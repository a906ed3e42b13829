package upstream

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"time"

	"github.com/switchboard-hub/switchboard/internal/atomicfile"
)

// approvals is what the user approved: for each server the command it may run (CommandHash:
// what runs here, or where its requests and credentials go) and whether it is out of
// quarantine, with the pinned definition of every approved tool. It lives in the hub's data directory
// (servers/approvals.json), which the hub's own tools cannot reach (workspace.Protect), so an
// agent cannot approve a tool for itself by writing the file.
type approvals struct {
	path string

	mu   sync.Mutex
	data approvalsFile
}

type approvalsFile struct {
	Version int                        `json:"version"`
	Servers map[string]*serverApproval `json:"servers"`
	// Commands are the approved commands by server name. Files of version 1 have none: every
	// server's command is then approved again once, by the user.
	Commands map[string]commandApproval `json:"commands,omitempty"`
}

// commandApproval is one approved command: its hash and, for people, what it was.
type commandApproval struct {
	Hash       string `json:"hash"`
	Command    string `json:"command"`
	ApprovedAt string `json:"approved_at"`
}

// approvalsVersion is the file's current format: 2 added commands.
const approvalsVersion = 2

type serverApproval struct {
	ApprovedAt string                `json:"approved_at"`
	Tools      map[string]pinnedTool `json:"tools"`
}

type pinnedTool struct {
	Hash       string          `json:"hash"`
	Definition json.RawMessage `json:"definition"` // PinnedDefinition, for the diff when it changes
	PinnedAt   string          `json:"pinned_at"`
}

func loadApprovals(path string) (*approvals, error) {
	a := &approvals{path: path, data: approvalsFile{Version: approvalsVersion, Servers: map[string]*serverApproval{}, Commands: map[string]commandApproval{}}}
	if path == "" {
		return a, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return a, nil
	}
	if err != nil {
		return nil, fmt.Errorf("server approvals %s: %w", path, err)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return a, nil // an empty file approves nothing (every server needs approving again)
	}
	if err := json.Unmarshal(b, &a.data); err != nil {
		return nil, fmt.Errorf("server approvals %s: %w (fix or delete the file: every server then needs approving again)", path, err)
	}
	if a.data.Servers == nil {
		a.data.Servers = map[string]*serverApproval{}
	}
	if a.data.Commands == nil {
		a.data.Commands = map[string]commandApproval{}
	}
	a.data.Version = approvalsVersion
	return a, nil
}

// commandApproved reports whether the user approved exactly this command for the server.
func (a *approvals) commandApproved(name, hash string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	c, ok := a.data.Commands[name]
	return ok && c.Hash == hash
}

// approveCommand records the command the user approved for a server (replacing an earlier one).
func (a *approvals) approveCommand(name, hash, line string, now time.Time) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.data.Commands[name] = commandApproval{Hash: hash, Command: line, ApprovedAt: now.UTC().Format(time.RFC3339)}
	return a.saveLocked()
}

// server returns a copy of a server's approval (nil: quarantined).
func (a *approvals) server(name string) *serverApproval {
	a.mu.Lock()
	defer a.mu.Unlock()
	sa := a.data.Servers[name]
	if sa == nil {
		return nil
	}
	cp := &serverApproval{ApprovedAt: sa.ApprovedAt, Tools: make(map[string]pinnedTool, len(sa.Tools))}
	for k, v := range sa.Tools {
		cp.Tools[k] = v
	}
	return cp
}

// pinned returns a tool's pinned hash without copying the server's approval (on every call).
func (a *approvals) pinned(server, tool string) (hash string, ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	sa := a.data.Servers[server]
	if sa == nil {
		return "", false
	}
	p, ok := sa.Tools[tool]
	return p.Hash, ok
}

// approve takes a server out of quarantine and pins tools (name → definition).
func (a *approvals) approve(name string, tools map[string]pinnedTool, now time.Time) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	sa := a.data.Servers[name]
	if sa == nil {
		sa = &serverApproval{ApprovedAt: now.UTC().Format(time.RFC3339), Tools: map[string]pinnedTool{}}
		a.data.Servers[name] = sa
	}
	for k, v := range tools {
		sa.Tools[k] = v
	}
	return a.saveLocked()
}

// forget puts a server back in quarantine (it was removed from the config).
func (a *approvals) forget(name string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, tools := a.data.Servers[name]
	_, command := a.data.Commands[name]
	if !tools && !command {
		return nil
	}
	delete(a.data.Servers, name)
	delete(a.data.Commands, name)
	return a.saveLocked()
}

func (a *approvals) saveLocked() error {
	if a.path == "" {
		return nil
	}
	b, err := json.MarshalIndent(a.data, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(a.path, append(b, '\n')); err != nil {
		return fmt.Errorf("server approvals: %w", err)
	}
	return nil
}

// ApprovedServers reads which servers the user approved from an approvals file (for a listing
// without a running hub).
func ApprovedServers(path string) (map[string]bool, error) {
	a, err := loadApprovals(path)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for name := range a.data.Servers {
		out[name] = true
	}
	return out, nil
}

// CommandApproved reads from an approvals file whether a server's command is approved as
// configured (for a listing without a running hub).
func CommandApproved(path string, s Spec) (bool, error) {
	a, err := loadApprovals(path)
	if err != nil {
		return false, err
	}
	return a.commandApproved(s.Name, s.CommandHash()), nil
}

// ApproveCommandFile records in an approvals file, with no hub running, that the user approved
// s's command (`switchboard servers add` from a terminal, `servers import`).
func ApproveCommandFile(path string, s Spec) error {
	a, err := loadApprovals(path)
	if err != nil {
		return err
	}
	return a.approveCommand(s.Name, s.CommandHash(), s.CommandLine(), time.Now())
}
