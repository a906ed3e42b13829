// Package protocol defines the wire format spoken between Switchboard's IDE
// bridge and the agentic backend (core-agentic, or the agenticsim simulator).
//
// Every WebSocket text frame carries one JSON Message. The envelope follows the
// reference BridgeMessage {type, channel, sessionId, data, timestamp} and adds
// requestId so that a request from the bridge and the backend's answer can be
// matched. The payload in Data depends on Type; the payload structs below are
// the single definition both sides share. docs/ide-bridge.md describes every
// type with examples.
package protocol

import (
	"encoding/json"
	"fmt"
	"time"
)

// Message is one frame on the bridge connection, in either direction.
type Message struct {
	Type      string          `json:"type"`
	Channel   string          `json:"channel,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	RequestID string          `json:"requestId,omitempty"`
	Data      json.RawMessage `json:"data,omitempty"`
	Timestamp time.Time       `json:"timestamp"`
}

// New builds a message whose Data is payload encoded as JSON. A nil payload
// leaves Data empty.
func New(msgType, sessionID string, payload any) (Message, error) {
	msg := Message{Type: msgType, SessionID: sessionID}
	if payload != nil {
		raw, err := json.Marshal(payload)
		if err != nil {
			return Message{}, fmt.Errorf("encode %s payload: %w", msgType, err)
		}
		msg.Data = raw
	}
	return msg, nil
}

// Decode unmarshals the message's Data into v.
func (m Message) Decode(v any) error {
	if len(m.Data) == 0 {
		return fmt.Errorf("decode %s payload: message has no data", m.Type)
	}
	if err := json.Unmarshal(m.Data, v); err != nil {
		return fmt.Errorf("decode %s payload: %w", m.Type, err)
	}
	return nil
}

// Requests: sent by the bridge, each with a fresh RequestID. The backend
// answers with one message carrying the same RequestID (the response type is
// noted beside each request), or with TypeError, or with TypeAck. Three list
// requests share their type with their answer: TypeSessionList (payload {}),
// TypeChatHistory (HistoryRequest) and TypeBuildList (BuildListRequest).
const (
	TypeHello             = "hello"              // HelloRequest; answered with state sync frames (no requestId)
	TypeSessionCreate     = "session_create"     // SessionCreateRequest -> TypeSession
	TypeChatSend          = "chat_send"          // ChatSendRequest -> TypeChatMessage (the user's message echoed)
	TypePlanStatus        = "plan_status"        // {} -> TypePlan
	TypeBuildStatus       = "build_status"       // BuildStatusRequest -> TypeBuild
	TypeBuildLogs         = "build_logs"         // BuildLogsRequest -> TypeBuildLog
	TypeDashboardOverview = "dashboard_overview" // {} -> TypeOverview
	TypeDashboardActivity = "dashboard_activity" // ActivityRequest -> TypeActivityList
	TypeDashboardMetrics  = "dashboard_metrics"  // MetricsRequest -> TypeBuildList (builds in the period)
)

// Backend messages: answers to requests (with RequestID) or unsolicited
// events (without). The bridge applies both the same way.
const (
	TypeAck          = "ack"           // {} — request accepted, nothing else to report
	TypeError        = "error"         // ErrorData
	TypeSession      = "session"       // Session (created or updated)
	TypeSessionList  = "session_list"  // SessionList (upsert, never removes)
	TypeChatMessage  = "chat_message"  // ChatMessage (complete message; final form of a stream)
	TypeChatDelta    = "chat_delta"    // ChatDelta (fragment of a streamed assistant message)
	TypeChatHistory  = "chat_history"  // ChatHistory (upsert by message id)
	TypePlan         = "plan"          // Plan (replaces the session's plan)
	TypeBuild        = "build"         // BuildInfo (created or updated)
	TypeBuildList    = "build_list"    // BuildList (upsert)
	TypeBuildLog     = "build_log"     // BuildLog (lines appended at From)
	TypeActivity     = "activity"      // ActivityEvent
	TypeActivityList = "activity_list" // ActivityList (merged, deduplicated)
	TypeOverview     = "overview"      // Overview
)

// HelloRequest is the first frame the bridge sends after every (re)connection.
type HelloRequest struct {
	Client        string `json:"client"`
	Version       string `json:"version,omitempty"`
	WorkspaceRoot string `json:"workspaceRoot,omitempty"`
}

// SessionCreateRequest asks the backend to create an agent session.
type SessionCreateRequest struct {
	Name string `json:"name"`
}

// ChatSendRequest carries a user message. MessageID is chosen by the bridge so
// the backend's echo and the bridge's own record of the message are one entry.
type ChatSendRequest struct {
	MessageID string `json:"messageId"`
	Message   string `json:"message"`
}

// HistoryRequest asks for a session's chat history; Limit 0 means all.
type HistoryRequest struct {
	Limit int `json:"limit,omitempty"`
}

// BuildStatusRequest asks for one build.
type BuildStatusRequest struct {
	BuildID string `json:"buildId"`
}

// BuildListRequest asks for recent builds; Repo filters, Limit 0 means all.
type BuildListRequest struct {
	Repo  string `json:"repo,omitempty"`
	Limit int    `json:"limit,omitempty"`
}

// BuildLogsRequest asks for a build's log lines from index From (0-based)
// onward, so a bridge that missed lines while offline fetches only the gap.
type BuildLogsRequest struct {
	BuildID string `json:"buildId"`
	From    int    `json:"from"`
}

// ActivityRequest asks for the newest activity events; Limit 0 means all.
type ActivityRequest struct {
	Limit int `json:"limit,omitempty"`
}

// MetricsRequest asks for whatever the backend knows about a period.
type MetricsRequest struct {
	Period string `json:"period"`
}

// ErrorData explains why a request failed (or reports a backend problem).
type ErrorData struct {
	Code    string `json:"code,omitempty"`
	Message string `json:"message"`
}

// Session is an agent session. Keys match Session in docs/tools.md.
type Session struct {
	ID        string    `json:"id" jsonschema:"session identifier (empty while the backend is still creating it)"`
	Name      string    `json:"name" jsonschema:"human-readable session name"`
	Status    string    `json:"status" jsonschema:"session status, e.g. creating, active, idle, closed"`
	CreatedAt time.Time `json:"createdAt" jsonschema:"session creation time"`
}

// SessionList is the backend's list of sessions.
type SessionList struct {
	Sessions []Session `json:"sessions"`
}

// ChatMessage is one message in a session's chat. ID is the stable identity
// used to merge echoes, streamed deltas and history answers.
type ChatMessage struct {
	ID        string    `json:"id,omitempty"`
	Role      string    `json:"role"` // "user" or "assistant"
	Content   string    `json:"content"`
	Timestamp time.Time `json:"timestamp"`
}

// ChatDelta is a fragment of an assistant message being streamed. Fragments
// are appended in arrival order; the final TypeChatMessage with the same ID
// carries the complete text and supersedes them.
type ChatDelta struct {
	MessageID string `json:"messageId"`
	Content   string `json:"content"`
}

// ChatHistory is the backend's answer to a history request.
type ChatHistory struct {
	Messages []ChatMessage `json:"messages"`
}

// PlanStep is one step of an agent plan. Keys match docs/tools.md.
type PlanStep struct {
	Name   string `json:"name" jsonschema:"step name"`
	Status string `json:"status" jsonschema:"step status, e.g. pending, running, done, failed"`
}

// Plan is a session's current plan.
type Plan struct {
	Status string     `json:"status"`
	Steps  []PlanStep `json:"steps"`
}

// BuildInfo describes a CI build. Keys match BuildInfo in docs/tools.md.
// Duration is a Go duration string (e.g. "1m2.5s"), empty while running.
type BuildInfo struct {
	ID        string    `json:"id" jsonschema:"build identifier"`
	Repo      string    `json:"repo" jsonschema:"repository name"`
	Branch    string    `json:"branch" jsonschema:"git branch"`
	Status    string    `json:"status" jsonschema:"build status: queued, running, success or failed"`
	Duration  string    `json:"duration" jsonschema:"build duration once complete, e.g. 1m2.5s; empty while running"`
	StartedAt time.Time `json:"startedAt" jsonschema:"build start time"`
}

// BuildList is the backend's list of builds.
type BuildList struct {
	Builds []BuildInfo `json:"builds"`
}

// BuildLog carries log lines of one build. From is the 0-based index of the
// first line in the build's whole log; when absent the lines are appended to
// what the receiver already has. With From the receiver can drop lines it
// already holds and notice lines it missed.
type BuildLog struct {
	BuildID string   `json:"buildId"`
	From    *int     `json:"from,omitempty"`
	Lines   []string `json:"lines"`
}

// ActivityEvent is one entry of the activity feed. Keys match docs/tools.md.
type ActivityEvent struct {
	Type      string    `json:"type" jsonschema:"event category, e.g. session_created, chat, build_started, build_finished"`
	Message   string    `json:"message" jsonschema:"human-readable description"`
	Timestamp time.Time `json:"timestamp" jsonschema:"event timestamp"`
}

// ActivityList is the backend's answer to an activity request.
type ActivityList struct {
	Events []ActivityEvent `json:"events"`
}

// Overview carries the figures only the backend can know (repositories and
// services it manages). Session and build counts are observed by the bridge.
type Overview struct {
	Repos    int `json:"repos"`
	Services int `json:"services"`
}
