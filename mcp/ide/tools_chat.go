package ide

import (
	"context"
	"errors"
	"fmt"
	"github.com/switchboard-hub/switchboard/internal/agentic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/agentic/protocol"
	"github.com/switchboard-hub/switchboard/mcp/tool"
)

// Record types of the ide_* tools (docs/tools.md), shared with the wire protocol (same JSON keys).
type (
	// Session is an agent session.
	Session = protocol.Session
	// PlanStep is one step of a session's plan.
	PlanStep = protocol.PlanStep
	// BuildInfo is a CI build record.
	BuildInfo = protocol.BuildInfo
	// ActivityEvent is one entry of the backend's activity feed.
	ActivityEvent = protocol.ActivityEvent
)

// ChatMessage is a chat message as the tools return it (the wire form also has an id).
type ChatMessage struct {
	Role      string    `json:"role" jsonschema:"user or assistant"`
	Content   string    `json:"content" jsonschema:"message text (for a reply still streaming, the text so far)"`
	Timestamp time.Time `json:"timestamp" jsonschema:"message timestamp"`
}

// ChatSendInput are the arguments of ide_chat_send.
type ChatSendInput struct {
	SessionID string `json:"sessionId" jsonschema:"target session identifier (see ide_session_list)"`
	Message   string `json:"message" jsonschema:"message content to send"`
}

// ChatSendOutput is the result of ide_chat_send.
type ChatSendOutput struct {
	Sent      bool      `json:"sent" jsonschema:"whether the message was forwarded to the backend"`
	SessionID string    `json:"sessionId" jsonschema:"echoed session ID"`
	Timestamp time.Time `json:"timestamp" jsonschema:"send time assigned by Switchboard"`
}

// ChatHistoryInput are the arguments of ide_chat_history.
type ChatHistoryInput struct {
	SessionID string `json:"sessionId" jsonschema:"session identifier (see ide_session_list)"`
	Limit     int    `json:"limit,omitempty" jsonschema:"maximum number of messages to return, newest kept; 0 or absent returns all kept (up to 500)"`
}

// ChatHistoryOutput is the result of ide_chat_history.
type ChatHistoryOutput struct {
	SessionID    string        `json:"sessionId" jsonschema:"echoed session ID"`
	Messages     []ChatMessage `json:"messages" jsonschema:"messages, oldest first"`
	BridgeOnline bool          `json:"bridgeOnline" jsonschema:"whether the bridge to the agentic backend is connected; when false the answer is the state last received"`
	Warning      string        `json:"warning,omitempty" jsonschema:"why the answer may be stale: the bridge is offline, the backend refused or did not answer the refresh"`
}

// SessionListInput are the arguments of ide_session_list (none).
type SessionListInput struct{}

// SessionListOutput is the result of ide_session_list.
type SessionListOutput struct {
	Sessions     []Session `json:"sessions" jsonschema:"known agent sessions, oldest first"`
	BridgeOnline bool      `json:"bridgeOnline" jsonschema:"whether the bridge to the agentic backend is connected; when false the answer is the state last received"`
	Warning      string    `json:"warning,omitempty" jsonschema:"why the answer may be stale: the bridge is offline, the backend refused or did not answer the refresh"`
}

// SessionCreateInput are the arguments of ide_session_create.
type SessionCreateInput struct {
	Name string `json:"name" jsonschema:"human-readable name for the new session"`
}

// SessionCreateOutput is the result of ide_session_create.
type SessionCreateOutput struct {
	Session Session `json:"session" jsonschema:"the new session; status creating and no id if the backend has not answered within the wait (the final record then appears in ide_session_list)"`
}

// PlanStatusInput are the arguments of ide_plan_status.
type PlanStatusInput struct {
	SessionID string `json:"sessionId" jsonschema:"session identifier (see ide_session_list)"`
}

// PlanStatusOutput is the result of ide_plan_status.
type PlanStatusOutput struct {
	SessionID    string     `json:"sessionId" jsonschema:"echoed session ID"`
	Status       string     `json:"status" jsonschema:"plan status, unknown when the backend has reported no plan"`
	Steps        []PlanStep `json:"steps" jsonschema:"plan steps in order"`
	BridgeOnline bool       `json:"bridgeOnline" jsonschema:"whether the bridge to the agentic backend is connected; when false the answer is the state last received"`
	Warning      string     `json:"warning,omitempty" jsonschema:"why the answer may be stale: the bridge is offline, the backend refused or did not answer the refresh"`
}

func ptr[T any](v T) *T { return &v }

// readOnly annotates the tools that only query: they still reach the
// external backend, hence OpenWorldHint.
func readOnly() *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(true)}
}

// sendsToBackend annotates the tools that change backend state additively.
func sendsToBackend() *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{ReadOnlyHint: false, DestructiveHint: ptr(false), IdempotentHint: false, OpenWorldHint: ptr(true)}
}

// chatTools declares the group's tools of this file, bound to a *Subsystem.
func chatTools() []tool.Tool {
	return []tool.Tool{
		tool.Func(mcp.Tool{
			Name:        "ide_chat_send",
			Description: "Send a message to an agent chat session through the IDE bridge. The message is recorded in the session's history; the agent's reply streams in asynchronously (read it with ide_chat_history). Fails when the bridge is not connected.",
			Annotations: sendsToBackend(),
		}, (*Subsystem).chatSend),
		tool.Func(mcp.Tool{
			Name:        "ide_chat_history",
			Description: "Retrieve the message history of an agent chat session, oldest first, as observed from the agentic backend (refreshed from the backend when it is connected).",
			Annotations: readOnly(),
		}, (*Subsystem).chatHistory),
		tool.Func(mcp.Tool{
			Name:        "ide_session_list",
			Description: "List agent sessions known to the IDE bridge (refreshed from the backend when it is connected).",
			Annotations: readOnly(),
		}, (*Subsystem).sessionList),
		tool.Func(mcp.Tool{
			Name:        "ide_session_create",
			Description: "Create a new agent session on the agentic backend. Returns the backend's record when it confirms quickly, otherwise a record with status \"creating\" (the final one appears in ide_session_list). Fails when the bridge is not connected.",
			Annotations: sendsToBackend(),
		}, (*Subsystem).sessionCreate),
		tool.Func(mcp.Tool{
			Name:        "ide_plan_status",
			Description: "Get the current plan (status and steps) of an agent session; status is \"unknown\" until the backend reports a plan.",
			Annotations: readOnly(),
		}, (*Subsystem).planStatus),
	}
}

func (s *Subsystem) chatSend(ctx context.Context, _ *mcp.CallToolRequest, in ChatSendInput) (*mcp.CallToolResult, ChatSendOutput, error) {
	out, err := s.SendChat(ctx, in.SessionID, in.Message)
	return nil, out, err
}

func (s *Subsystem) chatHistory(ctx context.Context, _ *mcp.CallToolRequest, in ChatHistoryInput) (*mcp.CallToolResult, ChatHistoryOutput, error) {
	if in.SessionID == "" {
		return nil, ChatHistoryOutput{}, errors.New("sessionId: required; call ide_session_list to see session IDs")
	}
	if in.Limit < 0 {
		return nil, ChatHistoryOutput{}, fmt.Errorf("limit: %d is negative; use 0 (all) or a positive count", in.Limit)
	}
	_, err := s.ask(ctx, protocol.TypeChatHistory, in.SessionID, protocol.HistoryRequest{Limit: in.Limit})
	if err := refusedUnknown(err, !s.store.KnowsSession(in.SessionID), "sessionId", in.SessionID, "ide_session_list"); err != nil {
		return nil, ChatHistoryOutput{}, err
	}
	online, warning := s.freshness(err)
	stored := s.store.History(in.SessionID, in.Limit)
	msgs := make([]ChatMessage, len(stored))
	for i, m := range stored {
		msgs[i] = ChatMessage{Role: m.Role, Content: m.Content, Timestamp: m.Timestamp}
	}
	return nil, ChatHistoryOutput{SessionID: in.SessionID, Messages: msgs, BridgeOnline: online, Warning: warning}, nil
}

func (s *Subsystem) sessionList(ctx context.Context, _ *mcp.CallToolRequest, _ SessionListInput) (*mcp.CallToolResult, SessionListOutput, error) {
	_, err := s.ask(ctx, protocol.TypeSessionList, "", struct{}{}) // the store answers either way
	online, warning := s.freshness(err)
	return nil, SessionListOutput{Sessions: s.store.Sessions(), BridgeOnline: online, Warning: warning}, nil
}

func (s *Subsystem) sessionCreate(ctx context.Context, _ *mcp.CallToolRequest, in SessionCreateInput) (*mcp.CallToolResult, SessionCreateOutput, error) {
	sess, err := s.CreateSession(ctx, in.Name)
	if err != nil {
		return nil, SessionCreateOutput{}, err
	}
	return nil, SessionCreateOutput{Session: sess}, nil
}

func (s *Subsystem) planStatus(ctx context.Context, _ *mcp.CallToolRequest, in PlanStatusInput) (*mcp.CallToolResult, PlanStatusOutput, error) {
	if in.SessionID == "" {
		return nil, PlanStatusOutput{}, errors.New("sessionId: required; call ide_session_list to see session IDs")
	}
	_, err := s.ask(ctx, protocol.TypePlanStatus, in.SessionID, struct{}{})
	if err := refusedUnknown(err, !s.store.KnowsSession(in.SessionID), "sessionId", in.SessionID, "ide_session_list"); err != nil {
		return nil, PlanStatusOutput{}, err
	}
	online, warning := s.freshness(err)
	plan, ok := s.store.Plan(in.SessionID)
	if !ok {
		plan = protocol.Plan{Status: "unknown"}
	}
	if plan.Steps == nil {
		plan.Steps = []PlanStep{}
	}
	return nil, PlanStatusOutput{SessionID: in.SessionID, Status: plan.Status, Steps: plan.Steps, BridgeOnline: online, Warning: warning}, nil
}

// refusedUnknown reports the backend's refusal of a lookup only when the
// store cannot answer either; what the store holds wins over a backend that
// has forgotten it (e.g. after a restart).
func refusedUnknown(err error, unknown bool, field, id, listTool string) error {
	var refused *agentic.BackendError
	if unknown && errors.As(err, &refused) {
		return fmt.Errorf("%s %q: %w; call %s to see known IDs", field, id, refused, listTool)
	}
	return nil
}
