package tasks

import (
	"encoding/json"
	"time"
)

// The wire types: what the hub's "tasks" channel carries to the dashboard (make types) and what
// the store writes to disk.

// Status is a task's state, with the Tasks extension's names.
type Status string

// Task states (io.modelcontextprotocol/tasks). Completed includes a tool result that is an
// error (isError); Failed is for a protocol error (the call returned a JSON-RPC error).
const (
	Working       Status = "working"
	InputRequired Status = "input_required"
	Completed     Status = "completed"
	Failed        Status = "failed"
	Cancelled     Status = "cancelled"
)

// Terminal reports whether s is an end state.
func (s Status) Terminal() bool { return s == Completed || s == Failed || s == Cancelled }

// Owner is who may read and cancel a task. See Owner.Allows for the rule.
type Owner struct {
	// Session is the session registry ID of the connection that started the call.
	Session string `json:"session"`
	// Client is the name the client gave in clientInfo.
	Client string `json:"client"`
	// Transport is the kind of connection (unix, tcp, http, stdio): each is behind its own
	// credential (the 0600 socket, the TCP or HTTP token).
	Transport string `json:"transport"`
	// Identity is the client a credential of its own proved (a per-client HTTP token, an OAuth
	// grant); "" for a shared credential.
	Identity string `json:"identity,omitempty"`
}

// Allows reports whether a caller may read or cancel a task this owner started: the same
// session, or — a client that reconnected — the same client name over the same kind of
// connection, which is behind the same credential. A name alone is a label, not an identity:
// it only counts together with the credential the connection had to present. A task started
// under a client's own credential is that client's: another credential never reaches it, even
// with the same name.
func (o Owner) Allows(caller Owner) bool {
	if o.Identity != caller.Identity {
		return false
	}
	if o.Session != "" && o.Session == caller.Session {
		return true
	}
	return o.Client != "" && o.Client == caller.Client && o.Transport != "" && o.Transport == caller.Transport
}

// Progress is the latest progress a task's call reported.
type Progress struct {
	Done    float64 `json:"done"`
	Total   float64 `json:"total,omitempty"` // 0: unknown
	Message string  `json:"message,omitempty"`
}

// RPCError is the JSON-RPC error of a failed task.
type RPCError struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

// Task is one task as the store has it.
type Task struct {
	ID            string    `json:"id"`
	Owner         Owner     `json:"owner"`
	Tool          string    `json:"tool"`
	Status        Status    `json:"status" tstype:"'working' | 'input_required' | 'completed' | 'failed' | 'cancelled'"`
	StatusMessage string    `json:"statusMessage,omitempty"`
	Progress      *Progress `json:"progress,omitempty"`
	Created       time.Time `json:"created"` // when the call began

	Updated time.Time `json:"updated"`
	// Result is the call's result as JSON (an MCP CallToolResult), once Completed.
	Result json.RawMessage `json:"result,omitempty" tstype:"unknown"`
	// Error is set when Failed.
	Error *RPCError `json:"error,omitempty"`
	// Truncated: the result was larger than the store keeps and was cut (see Store).
	Truncated bool `json:"truncated,omitempty"`
}

// Summary is a task without its result, for lists and the dashboard.
func (t Task) Summary() Task {
	t.Result = nil
	return t
}

// Change is a task that started, progressed or ended, for subscribers (the dashboard's feed).
type Change struct {
	Kind string `json:"kind" tstype:"'started' | 'updated' | 'ended' | 'removed'"`
	Task Task   `json:"task"` // without its result
}
