// Package sessions keeps the registry of connected MCP clients.
//
// The dashboard and the tray read it: which clients are connected, over which transport, and how
// busy they are. It is MCP-agnostic: transports register a session when a connection is accepted
// and the audit middleware counts calls against it.
package sessions

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard-hub/switchboard/internal/listeners"
)

// Info is a snapshot of one client session.
type Info struct {
	ID            string `json:"id"`
	Transport     string `json:"transport"`
	ClientName    string `json:"clientName"`
	ClientVersion string `json:"clientVersion"`
	// Protocol is the MCP revision the client speaks ("2025-06-18", "2026-07-28", …): the
	// Sessions view shows it, since one endpoint serves clients of both eras.
	Protocol    string    `json:"protocol,omitempty"`
	Peer        string    `json:"peer"`
	ConnectedAt time.Time `json:"connectedAt"`
	Calls       int64     `json:"calls"`
	LastCallAt  time.Time `json:"lastCallAt,omitzero"`
	LastTool    string    `json:"lastTool,omitempty"`
	// Roots are the client's MCP roots (clients that declare the roots capability), in the
	// client's order: the first one is where relative paths resolve.
	Roots []Root `json:"roots,omitempty"`
	// Relay is the directory the client started `switchboard connect` in, with whether the
	// session may use it; nil when the client came another way.
	Relay *Root `json:"relay,omitempty"`
	// Workspace is where the session's relative paths resolve, and WorkspaceFrom where that
	// came from: "root" (its MCP root), "relay" (Relay), "client" (the project the config
	// gives the client its token names: [clients.NAME] project) or "hub" (the hub's workspace).
	Workspace     string `json:"workspace,omitempty"`
	WorkspaceFrom string `json:"workspaceFrom,omitempty" tstype:"'root' | 'relay' | 'client' | 'hub'"`
	// Identity is the client a per-client token was issued to ("" for the hub's shared token
	// or a transport without tokens): unlike ClientName, which any client may claim, it is
	// proven by the credential.
	Identity string `json:"identity,omitempty"`
	// Stateless marks a 2026-07-28 client over HTTP without a session: this entry stands for
	// every request of that client identity (token and clientInfo), not one connection.
	Stateless bool `json:"stateless,omitempty"`
	// ToolsMode is the tools mode the client asked for when it connected (full, search,
	// script); "" when it uses the hub's.
	ToolsMode string `json:"toolsMode,omitempty"`
}

// Root is one MCP root of a session and whether the session may use it.
type Root struct {
	URI    string `json:"uri"`
	Name   string `json:"name,omitempty"`
	Dir    string `json:"dir,omitempty"`    // the directory it names; empty when it names none
	Status string `json:"status"`           // "granted" | "approved" | "declined" | "pending" | "invalid"
	Detail string `json:"detail,omitempty"` // by what ([roots] allow entry, who approved, why invalid)
}

// Change is a registry notification.
type Change struct {
	Kind    string `json:"kind" tstype:"'connected' | 'updated' | 'disconnected'"`
	Session Info   `json:"session"`
}

// Registry is safe for concurrent use.
type Registry struct {
	seq atomic.Uint64

	mu        sync.Mutex
	sessions  map[string]*Info
	listeners listeners.Set[Change]
}

// New returns an empty registry.
func New() *Registry {
	return &Registry{sessions: map[string]*Info{}}
}

// Add registers a new session and returns its ID.
func (r *Registry) Add(transport, peer string) string {
	id := fmt.Sprintf("%s-%d", transport, r.seq.Add(1))
	info := &Info{ID: id, Transport: transport, Peer: peer, ConnectedAt: time.Now().UTC()}
	r.mu.Lock()
	r.sessions[id] = info
	snap := *info
	r.mu.Unlock()
	r.notify(Change{Kind: "connected", Session: snap})
	return id
}

// SetClient records the client's self-reported name and version and the protocol revision it
// speaks (from initialize, or a 2026-07-28 request's _meta).
func (r *Registry) SetClient(id, name, version, protocol string) {
	r.update(id, func(i *Info) { i.ClientName, i.ClientVersion, i.Protocol = name, version, protocol })
}

// SetIdentity records the client identity a credential proved and whether the entry stands
// for a stateless client.
func (r *Registry) SetIdentity(id, identity string, stateless bool) {
	r.update(id, func(i *Info) { i.Identity, i.Stateless = identity, stateless })
}

// SetRoots replaces the session's roots.
func (r *Registry) SetRoots(id string, roots []Root) {
	roots = append([]Root{}, roots...)
	r.update(id, func(i *Info) { i.Roots = roots })
}

// SetWorkspace records the session's relay directory and its workspace.
func (r *Registry) SetWorkspace(id string, relay *Root, dir, from string) {
	if relay != nil {
		c := *relay
		relay = &c
	}
	r.update(id, func(i *Info) { i.Relay, i.Workspace, i.WorkspaceFrom = relay, dir, from })
}

// SetToolsMode records the tools mode the client asked for.
func (r *Registry) SetToolsMode(id, mode string) {
	r.update(id, func(i *Info) { i.ToolsMode = mode })
}

// CountCall records a tool call.
func (r *Registry) CountCall(id, tool string) {
	r.update(id, func(i *Info) { i.Calls++; i.LastCallAt = time.Now().UTC(); i.LastTool = tool })
}

func (r *Registry) update(id string, fn func(*Info)) {
	r.mu.Lock()
	info, ok := r.sessions[id]
	if !ok {
		r.mu.Unlock()
		return
	}
	fn(info)
	snap := *info
	r.mu.Unlock()
	r.notify(Change{Kind: "updated", Session: snap})
}

// Remove unregisters a session (idempotent).
func (r *Registry) Remove(id string) {
	r.mu.Lock()
	info, ok := r.sessions[id]
	delete(r.sessions, id)
	r.mu.Unlock()
	if ok {
		r.notify(Change{Kind: "disconnected", Session: *info})
	}
}

// Get returns one session.
func (r *Registry) Get(id string) (Info, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if info, ok := r.sessions[id]; ok {
		return *info, true
	}
	return Info{}, false
}

// List returns all sessions, oldest first.
func (r *Registry) List() []Info {
	r.mu.Lock()
	out := make([]Info, 0, len(r.sessions))
	for _, info := range r.sessions {
		out = append(out, *info)
	}
	r.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if !out[i].ConnectedAt.Equal(out[j].ConnectedAt) {
			return out[i].ConnectedAt.Before(out[j].ConnectedAt)
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// Subscribe calls fn on every change until cancel is called. fn runs synchronously on the
// goroutine that made the change, so it must not block.
func (r *Registry) Subscribe(fn func(Change)) (cancel func()) { return r.listeners.Add(fn) }

func (r *Registry) notify(c Change) { r.listeners.Notify(c) }
