package agentic

import "github.com/switchboard-hub/switchboard/internal/agentic/protocol"

// Channels of the dashboard's WebSocket hub that carry this state (data shapes in
// docs/ide-bridge.md): the store names the channel of every change it reports.
const (
	ChannelBridge   = "ide:bridge"
	ChannelSessions = "ide:sessions"
	ChannelBuilds   = "ide:builds"
	ChannelActivity = "ide:activity"
	PrefixChat      = "chat:"
	PrefixPlan      = "plan:"
	PrefixBuild     = "build:"
)

// Payloads of the subsystem's hub channels (the channel names are the constants below;
// the dashboard's TypeScript types are generated from these structs by `make types`). Snapshots
// are what a dashboard gets on subscribing; events are published on every change. Messages the
// store does not model are forwarded as the backend sent them (json.RawMessage) on
// msg.Channel or "ide:<type>".

// SessionsSnapshot is the "ide:sessions" snapshot.
type SessionsSnapshot struct {
	Sessions []protocol.Session `json:"sessions"`
}

// SessionEvent is an "ide:sessions" event: one session created or changed.
type SessionEvent struct {
	Kind    string           `json:"kind" tstype:"'session'"`
	Session protocol.Session `json:"session"`
}

// ChatSnapshot is a "chat:<sessionId>" snapshot: the session's history, oldest first.
type ChatSnapshot struct {
	SessionID string                 `json:"sessionId"`
	Messages  []protocol.ChatMessage `json:"messages"`
}

// ChatMessageEvent is a "chat:<sessionId>" event: a message added, or the final form of a
// streamed one (same id).
type ChatMessageEvent struct {
	Kind    string               `json:"kind" tstype:"'message'"`
	Message protocol.ChatMessage `json:"message"`
}

// ChatDeltaEvent is a "chat:<sessionId>" event: a fragment of a reply being streamed.
type ChatDeltaEvent struct {
	Kind      string `json:"kind" tstype:"'delta'"`
	MessageID string `json:"messageId"`
	Content   string `json:"content"`
	// Offset is the message's length in bytes before this fragment, so a client that got the
	// partial message in a snapshot can skip a fragment it already has.
	Offset int `json:"offset"`
}

// PlanFeed is a "plan:<sessionId>" snapshot and every event: the whole plan.
type PlanFeed struct {
	SessionID string              `json:"sessionId"`
	Status    string              `json:"status"`
	Steps     []protocol.PlanStep `json:"steps"`
}

// BuildsSnapshot is the "ide:builds" snapshot, newest start first.
type BuildsSnapshot struct {
	Builds []protocol.BuildInfo `json:"builds"`
}

// BuildEvent is an "ide:builds" and "build:<buildId>" event: a build's new state.
type BuildEvent struct {
	Kind  string             `json:"kind" tstype:"'build'"`
	Build protocol.BuildInfo `json:"build"`
}

// BuildLogSnapshot is a "build:<buildId>" snapshot: the build and the kept tail of its log.
type BuildLogSnapshot struct {
	Build protocol.BuildInfo `json:"build"`
	Lines []string           `json:"lines"`
	Total int                `json:"total"` // lines in the whole log as far as observed
}

// BuildLogEvent is a "build:<buildId>" event: one log line, the N-th of the log (1-based).
type BuildLogEvent struct {
	Kind string `json:"kind" tstype:"'log'"`
	Line string `json:"line"`
	N    int    `json:"n"`
}

// ActivitySnapshot is the "ide:activity" snapshot: the newest 500 events, oldest first.
type ActivitySnapshot struct {
	Events []protocol.ActivityEvent `json:"events"`
}

// ActivityAddedEvent is an "ide:activity" event: one event added to the feed.
type ActivityAddedEvent struct {
	Kind  string                 `json:"kind" tstype:"'activity'"`
	Event protocol.ActivityEvent `json:"event"`
}
