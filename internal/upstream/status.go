package upstream

import "time"

// Server states, as the dashboard, tray and `switchboard servers list` show them.
const (
	StateDisabled = "disabled" // enabled = false: not running
	// StateUnapproved: the user has not approved the server's command as configured; nothing
	// runs, no secret is resolved and no request is sent until they do.
	StateUnapproved = "unapproved"
	StateIdle       = "idle"     // on-demand, not started yet (or stopped after its last use)
	StateStarting   = "starting" // process started / connecting, not initialized yet
	StateRunning    = "running"  // initialized; serving its approved tools
	StateBackoff    = "backoff"  // died; restarting at NextRestart
	StateFailed     = "failed"   // cannot start (bad command, bad secret): fix the config; retried on change
	// StateSignin: a remote server refused the hub without a grant it can use (never signed
	// in, signed out, or its refresh token refused); it waits for the user to sign in
	// (`switchboard servers login NAME`, Sign in in the Servers view or the tray).
	StateSignin  = "signin"
	StateStopped = "stopped" // the hub is shutting down
)

// Tool states.
const (
	ToolApproved    = "approved"    // pinned; offered to clients
	ToolQuarantined = "quarantined" // the server is not approved yet
	ToolNew         = "new"         // the approved server started offering a tool not pinned yet: held
	ToolChanged     = "changed"     // differs from its pinned definition: held
)

// Status is one server as the dashboard, the tray and the CLI show it. Env and header values
// never appear in it.
type Status struct {
	Name      string `json:"name"`
	Transport string `json:"transport"` // stdio, http or sse
	// Command is the command line (stdio) or the URL (remote).
	Command string `json:"command"`
	Enabled bool   `json:"enabled"`
	Start   string `json:"start"` // eager or on-demand
	State   string `json:"state"`
	// CommandApproved: the user approved the command as configured (CommandHash); until then
	// the server does not run.
	CommandApproved bool   `json:"command_approved"`
	CommandHash     string `json:"command_hash"`
	// Cwd and Env describe what runs (env names only, never values).
	Cwd string   `json:"cwd,omitempty"`
	Env []string `json:"env"`
	// OAuth: the hub signs in to the server when it asks (a remote server without an
	// Authorization header of its own); its tokens are in the keyring, never here.
	OAuth bool `json:"oauth"`
	// SignedIn: the running connection uses a grant from a sign-in (Sign out forgets it).
	SignedIn bool `json:"signed_in"`
	// Sandbox says how the server is confined (local servers), or that it runs elsewhere.
	Sandbox SandboxStatus `json:"sandbox"`
	// Approved: the user approved the server's tools (it is out of quarantine).
	Approved bool   `json:"approved"`
	PID      int    `json:"pid,omitempty"`
	Since    string `json:"since,omitempty"` // RFC 3339: when it entered State
	// Restarts counts unexpected exits since the hub started.
	Restarts    int    `json:"restarts"`
	NextRestart string `json:"next_restart,omitempty"` // RFC 3339, in backoff
	LastError   string `json:"last_error,omitempty"`
	LastErrorAt string `json:"last_error_at,omitempty"`
	// ServerInfo is what the server announced at initialize ("name version").
	ServerInfo string `json:"server_info,omitempty"`
	// Hub: the server is another Switchboard hub (a hub on another machine used as this
	// one's server), and the machine it runs on, as its serverInfo announced.
	Hub          *HubInfo     `json:"hub,omitempty"`
	Instructions string       `json:"instructions,omitempty"`
	Tools        []ToolStatus `json:"tools"`
	Resources    int          `json:"resources"`
	Templates    int          `json:"resource_templates"`
	Prompts      int          `json:"prompts"`
	// Held counts tools waiting for approval (new or changed); Flagged those whose definitions
	// look like hidden instructions.
	Held    int `json:"held"`
	Flagged int `json:"flagged"`
	// Calls in flight now, and served since the hub started.
	InFlight int   `json:"in_flight"`
	Calls    int64 `json:"calls"`
}

// SandboxStatus is how a server is confined.
type SandboxStatus struct {
	// Mode is "confined", "unconfined" (the kernel cannot confine it), "off" (sandbox = "off")
	// or "remote" (a URL: nothing runs here).
	Mode string `json:"mode"`
	// Detail says what is confined, or why not.
	Detail string `json:"detail"`
	// Read and Write are the paths granted beyond the system's (when confined).
	Read  []string `json:"read"`
	Write []string `json:"write"`
}

// Sandbox modes.
const (
	SandboxConfined   = "confined"
	SandboxUnconfined = "unconfined"
	SandboxOff        = "off"
	SandboxRemote     = "remote"
)

// ToolStatus is one tool a server offers.
type ToolStatus struct {
	Name string `json:"name"` // the server's own name for it
	// Exposed is the name clients see (<server>__<tool>, cut to provider limits).
	Exposed     string `json:"exposed"`
	State       string `json:"state"`
	Description string `json:"description"`
	ReadOnly    bool   `json:"read_only"`
	// Flags name what looks like hidden instructions in the definition (see Flags).
	Flags []string `json:"flags"`
	// Diff, for a changed tool, is a unified diff from the pinned definition to the offered one.
	Diff string `json:"diff,omitempty"`
}

// LogLine is one line a server wrote on stderr (or one event of its supervisor).
type LogLine struct {
	Time   string `json:"time"`   // RFC 3339 with milliseconds
	Stream string `json:"stream"` // "stderr", "stdout" (a stdio server's lines that are not JSON-RPC) or "hub"
	Text   string `json:"text"`
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
