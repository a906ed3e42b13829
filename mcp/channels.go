package mcp

import (
	"github.com/switchboard-hub/switchboard/internal/audit"
	"github.com/switchboard-hub/switchboard/internal/process"
	"github.com/switchboard-hub/switchboard/internal/sessions"
	"github.com/switchboard-hub/switchboard/internal/tasks"
)

// Hub channels the service publishes on, and their payloads (documented in docs/architecture.md).
// The IDE subsystem's channels are in package mcp/ide. Every payload is a named struct: the
// dashboard's TypeScript types are generated from them (`make types`, frontend/src/lib/generated),
// so a field renamed here fails the frontend's type check instead of silently reading undefined.

// SessionsSnapshot is the "sessions" channel's snapshot; its events are sessions.Change.
type SessionsSnapshot struct {
	Sessions []sessions.Info `json:"sessions"`
}

// ActivitySnapshot is the "activity" channel's snapshot (the recent calls, oldest first); each
// event is one ActivityEntry.
type ActivitySnapshot struct {
	Events []ActivityEntry `json:"events"`
}

// ActivityEntry is one call (or audited dashboard/tray action) on the "activity" channel: its
// audit entry, as the audit file has it, plus what only the dashboard gets, from the hub's memory
// (the in-memory ring behind the channel's snapshot; never written to the audit file).
type ActivityEntry struct {
	audit.Entry `tstype:",extends"`
	// Values holds each top-level argument's value as a short display string
	// (audit.SummarizeArgsValues): a path as its text, so a person can find a call by it. What the
	// audit summary hides stays hidden the same way: payloads and private text (content, message,
	// script, …) as their size and sha256, secrets as "<redacted>".
	Values map[string]string `json:"values,omitempty"`
	// Refused: the hub answered in the tool's place without running it, for a reason other than
	// the policy's decision: an unknown tool, a held or quarantined server tool, a refused root.
	Refused bool `json:"refused,omitempty"`
}

// ProcessesSnapshot is the "processes" channel's snapshot.
type ProcessesSnapshot struct {
	Processes []process.Info `json:"processes"`
}

// ProcessesEvent is a "processes" channel event: a process started or exited.
type ProcessesEvent struct {
	Kind    string       `json:"kind" tstype:"'started' | 'exited'"`
	Process process.Info `json:"process"`
}

// ProcessSnapshot is a "process:<id>" channel's snapshot: the process and the tail of its output.
type ProcessSnapshot struct {
	Process process.Info `json:"process"`
	Output  string       `json:"output"`
	Offset  int64        `json:"offset"` // byte offset of the end of Output in the whole output
}

// ProcessOutputEvent is a "process:<id>" event carrying output (Kind "output").
type ProcessOutputEvent struct {
	Kind   string `json:"kind" tstype:"'output'"`
	Stream string `json:"stream" tstype:"'stdout' | 'stderr' | 'pty'"`
	Data   string `json:"data"`
	Offset int64  `json:"offset"` // byte offset of Data's first byte in the whole output
}

// ProcessStatusEvent is a "process:<id>" event telling that the process started or ended
// (Kind "status").
type ProcessStatusEvent struct {
	Kind    string       `json:"kind" tstype:"'status'"`
	Process process.Info `json:"process"`
}

// TransportsFeed is the "transports" channel's snapshot and every event: the whole list.
type TransportsFeed struct {
	Transports []TransportStatus `json:"transports"`
}

// TasksSnapshot is the "tasks" channel's snapshot: every task, newest first, without results;
// each event is a tasks.Change.
type TasksSnapshot struct {
	Tasks []tasks.Task `json:"tasks"`
}
