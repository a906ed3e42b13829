package upstream

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// approvals is what the user approved: which servers are out of quarantine and, for each, the
// pinned definition of every approved tool. It lives in the hub's data directory
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
}

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
	a := &approvals{path: path, data: approvalsFile{Version: 1, Servers: map[string]*serverApproval{}}}
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
	if err := json.Unmarshal(b, &a.data); err != nil {
		return nil, fmt.Errorf("server approvals %s: %w (fix or delete the file: every server then needs approving again)", path, err)
	}
	if a.data.Servers == nil {
		a.data.Servers = map[string]*serverApproval{}
	}
	return a, nil
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
	if _, ok := a.data.Servers[name]; !ok {
		return nil
	}
	delete(a.data.Servers, name)
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
	if err := os.MkdirAll(filepath.Dir(a.path), 0o700); err != nil {
		return fmt.Errorf("server approvals: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(a.path), ".approvals-*.json")
	if err != nil {
		return fmt.Errorf("server approvals: %w", err)
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("server approvals: %w", err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("server approvals: %w", err)
	}
	if err := os.Rename(tmp.Name(), a.path); err != nil {
		os.Remove(tmp.Name())
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
