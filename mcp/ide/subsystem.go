// Package ide is Switchboard's IDE subsystem: a bridge to the agentic backend
// (a WebSocket client with reconnect backoff), a state store fed by what the
// backend sends, the hub channels that stream that state to the dashboard,
// and the 11 ide_* MCP tools that answer from the store after asking the
// backend. The wire protocol is in package protocol and docs/ide-bridge.md.
package ide

import (
	"context"
	"errors"
	"fmt"
	"github.com/switchboard-hub/switchboard/internal/agentic"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/switchboard-hub/switchboard/internal/agentic/protocol"
	"github.com/switchboard-hub/switchboard/internal/listeners"
	"github.com/switchboard-hub/switchboard/mcp/tool"
)

// Publisher is what the subsystem needs from the WebSocket hub (*wshub.Hub
// satisfies it).
type Publisher interface {
	Publish(channel, msgType string, data any)
	SetSnapshotProvider(prefix string, fn func(channel string) (any, bool))
}

// hubEventType is the hub envelope type for live updates.
const hubEventType = "event"

// Subsystem owns the bridge, the state store and the ide_* tools.
type Subsystem struct {
	cfg    agentic.Config
	pub    Publisher // nil: headless, nothing is published
	store  *agentic.Store
	bridge *agentic.Bridge

	// applyErrs holds why an answer to one of our requests could not be applied to the store,
	// by request ID, until the waiting tool takes it (see ask). Bounded: see handleMessage.
	applyMu   sync.Mutex
	applyErrs map[string]error

	statusListeners listeners.Set[agentic.BridgeStatus]

	// root is the workspace root announced in the hello frame: cfg.WorkspaceRoot until
	// SetWorkspaceRoot changes it.
	root atomic.Pointer[string]
}

// SetWorkspaceRoot changes the workspace root the bridge announces (the hub's workspace moved).
// The backend learns it with the next hello, at the next (re)connection: a hello in the middle
// of a connection would make it send its whole state again.
func (s *Subsystem) SetWorkspaceRoot(dir string) { s.root.Store(&dir) }

// New builds the subsystem. pub may be nil (headless): the bridge still
// connects and tools still work; only hub publishing is skipped.
func New(pub Publisher, opts ...Option) *Subsystem {
	cfg := agentic.DefaultConfig()
	for _, opt := range opts {
		opt(&cfg)
	}
	cfg = cfg.Normalized()
	s := &Subsystem{cfg: cfg, pub: pub, store: agentic.NewStore(agentic.Limits{}), applyErrs: map[string]error{}}
	s.root.Store(&cfg.WorkspaceRoot)
	s.bridge = agentic.NewBridge(cfg, agentic.BridgeHooks{
		OnMessage: s.handleMessage,
		OnConnect: s.sendHello,
		OnStatus:  s.publishStatus,
	})
	if pub != nil {
		s.registerSnapshots()
	}
	return s
}

// Name identifies the subsystem.
func (s *Subsystem) Name() string { return "ide" }

// Start launches the bridge's connect loop; it runs until ctx ends or
// Shutdown is called.
func (s *Subsystem) Start(ctx context.Context) {
	if w := agentic.PlaintextTokenWarning(s.cfg.BackendURL, s.cfg.Token); w != "" {
		s.cfg.Logger.Warn("IDE bridge: " + w)
	}
	s.bridge.Start(ctx)
}

// Shutdown stops the bridge and waits for its goroutines.
func (s *Subsystem) Shutdown(ctx context.Context) error { return s.bridge.Stop(ctx) }

// BridgeStatus returns the bridge's connection state.
func (s *Subsystem) BridgeStatus() agentic.BridgeStatus { return s.bridge.Status() }

// OnBridgeStatus calls fn with the new state after every change of the bridge's connection
// state (connected, disconnected, a dial error, a retry scheduled) until cancel is called. fn
// runs on the bridge's goroutine, outside its locks, and must not block.
func (s *Subsystem) OnBridgeStatus(fn func(agentic.BridgeStatus)) (cancel func()) {
	return s.statusListeners.Add(fn)
}

// Store exposes the state store (read-only use: queries and snapshots).
func (s *Subsystem) Store() *agentic.Store { return s.store }

func (s *Subsystem) handleMessage(msg protocol.Message) {
	events, err := s.store.Apply(msg)
	if err != nil {
		s.cfg.Logger.Warn("IDE bridge: backend message not applied", "type", msg.Type, "err", err)
		if msg.RequestID != "" {
			// The bridge calls this before it hands the answer to the waiting request, so the
			// tool that asked finds the reason in ask. Entries nobody takes (the tool gave up)
			// are dropped wholesale past a bound.
			s.applyMu.Lock()
			if len(s.applyErrs) >= 256 {
				clear(s.applyErrs)
			}
			s.applyErrs[msg.RequestID] = err
			s.applyMu.Unlock()
		}
	}
	s.publish(events)
}

func (s *Subsystem) publish(events []agentic.Event) {
	if s.pub == nil {
		return
	}
	for _, ev := range events {
		s.pub.Publish(ev.Channel, hubEventType, ev.Data)
	}
}

func (s *Subsystem) publishStatus(st agentic.BridgeStatus) {
	s.statusListeners.Notify(st)
	if s.pub != nil {
		s.pub.Publish(agentic.ChannelBridge, hubEventType, st)
	}
}

// sendHello announces the client after every (re)connection; the backend
// answers with a state sync so the store catches up on what it missed.
func (s *Subsystem) sendHello() {
	msg, err := protocol.New(protocol.TypeHello, "", protocol.HelloRequest{
		Client:        "switchboard",
		WorkspaceRoot: *s.root.Load(),
	})
	if err == nil {
		err = s.bridge.Send(msg)
	}
	if err != nil {
		s.cfg.Logger.Warn("IDE bridge: hello not sent", "err", err)
	}
}

func (s *Subsystem) registerSnapshots() {
	exact := func(name string, fn func() any) {
		s.pub.SetSnapshotProvider(name, func(channel string) (any, bool) {
			if channel != name {
				return nil, false
			}
			return fn(), true
		})
	}
	exact(agentic.ChannelBridge, func() any { return s.bridge.Status() })
	exact(agentic.ChannelSessions, func() any { return s.store.SnapshotSessions() })
	exact(agentic.ChannelBuilds, func() any { return s.store.SnapshotBuilds() })
	exact(agentic.ChannelActivity, func() any { return s.store.SnapshotActivity() })
	s.pub.SetSnapshotProvider(agentic.PrefixChat, func(channel string) (any, bool) {
		id := strings.TrimPrefix(channel, agentic.PrefixChat)
		if id == "" {
			return nil, false
		}
		return s.store.SnapshotChat(id), true
	})
	s.pub.SetSnapshotProvider(agentic.PrefixPlan, func(channel string) (any, bool) {
		id := strings.TrimPrefix(channel, agentic.PrefixPlan)
		if id == "" {
			return nil, false
		}
		return s.store.SnapshotPlan(id), true
	})
	s.pub.SetSnapshotProvider(agentic.PrefixBuild, func(channel string) (any, bool) {
		return s.store.SnapshotBuild(strings.TrimPrefix(channel, agentic.PrefixBuild))
	})
}

// Tools declares the 11 ide_* tools (toolset ide), bound to a *Subsystem: a value that needs no
// subsystem, for the hub's catalogue (mcp.Catalogue) and docs.
func Tools() tool.Group {
	return tool.NewGroup("ide", slices.Concat(chatTools(), buildTools(), dashboardTools())...)
}

// Tools is the subsystem's tool group (mcp.Subsystem); the hub binds it to s.
func (s *Subsystem) Tools() tool.Group { return Tools() }

// ask forwards a request to the backend and waits at most ResponseWait for
// its answer, which the read loop has already applied to the store when ask
// returns.
func (s *Subsystem) ask(ctx context.Context, msgType, sessionID string, payload any) (protocol.Message, error) {
	msg, err := protocol.New(msgType, sessionID, payload)
	if err != nil {
		return protocol.Message{}, err
	}
	if msgType == protocol.TypeChatSend {
		msg.Channel = agentic.PrefixChat + sessionID // as the reference bridge forwards chat
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.ResponseWait)
	defer cancel()
	resp, err := s.bridge.Request(ctx, msg)
	if err != nil || resp.RequestID == "" {
		return resp, err
	}
	s.applyMu.Lock()
	applyErr, failed := s.applyErrs[resp.RequestID]
	delete(s.applyErrs, resp.RequestID)
	s.applyMu.Unlock()
	if failed {
		err = fmt.Errorf("the backend's %s answer could not be read: %w", resp.Type, applyErr)
	}
	return resp, err
}

// notConnected turns ErrNotConnected into a message that says what to do.
func (s *Subsystem) notConnected(action string) error {
	st := s.bridge.Status()
	last := ""
	if st.LastError != "" {
		last = " (last error: " + st.LastError + ")"
	}
	return fmt.Errorf("%w to the agentic backend at %s%s; %s. Start the backend, or point the hub at it ([ide] url in the config file, or %s), then retry once ide_dashboard_overview reports bridgeOnline=true",
		agentic.ErrNotConnected, st.URL, last, action, agentic.EnvURL)
}

// freshness says how current a read tool's answer (always from the store) is, given the error of
// the refresh request that preceded it: nothing is discarded silently.
func (s *Subsystem) freshness(err error) (online bool, warning string) {
	online = s.bridge.Connected()
	var refused *agentic.BackendError
	switch {
	case err == nil:
		return online, ""
	case errors.Is(err, agentic.ErrNotConnected):
		st := s.bridge.Status()
		w := "the bridge to the agentic backend at " + st.URL + " is offline"
		if st.LastError != "" {
			w += " (last error: " + st.LastError + ")"
		}
		return online, w + "; this is the state last received from it"
	case errors.As(err, &refused):
		return online, fmt.Sprintf("the backend refused the refresh: %v; this is the state last received", refused)
	case errors.Is(err, context.DeadlineExceeded):
		return online, fmt.Sprintf("the backend did not answer within %v; this is the state last received (it may update shortly)", s.cfg.ResponseWait)
	case errors.Is(err, agentic.ErrConnectionLost):
		return online, "the connection to the backend dropped during the refresh; this is the state last received"
	default:
		return online, fmt.Sprintf("refresh failed: %v; this is the state last received", err)
	}
}

// CreateSession asks the backend for a new agent session. It returns the
// backend's record when the backend confirms within ResponseWait, else a
// record with status "creating" and no id (the real one arrives later on
// ide:sessions).
func (s *Subsystem) CreateSession(ctx context.Context, name string) (Session, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return Session{}, errors.New(`name: required; give the session a human-readable name, e.g. "fix flaky login test"`)
	}
	placeholder := Session{Name: name, Status: "creating", CreatedAt: time.Now().UTC()}
	resp, err := s.ask(ctx, protocol.TypeSessionCreate, "", protocol.SessionCreateRequest{Name: name})
	var refused *agentic.BackendError
	switch {
	case errors.Is(err, agentic.ErrNotConnected):
		return Session{}, s.notConnected("the session was not created")
	case errors.As(err, &refused):
		return Session{}, fmt.Errorf("name %q: %w", name, refused)
	case errors.Is(err, agentic.ErrConnectionLost):
		return Session{}, fmt.Errorf("name %q: the connection dropped before the backend answered, so the session may or may not exist; check ide_session_list once the bridge is back", name)
	case errors.Is(err, context.DeadlineExceeded):
		// Sent, but no answer in time: the backend is still creating it.
		return placeholder, nil
	case err != nil:
		return Session{}, fmt.Errorf("name %q: %w; check ide_session_list, the session may exist", name, err)
	}
	if resp.Type != protocol.TypeSession {
		return Session{}, fmt.Errorf("name %q: the backend answered session_create with a %q message instead of a session; check ide_session_list, the session may exist", name, resp.Type)
	}
	var sess Session
	if err := resp.Decode(&sess); err != nil {
		return Session{}, fmt.Errorf("name %q: the backend's answer could not be decoded (%v); check ide_session_list, the session may exist", name, err)
	}
	if sess.ID == "" {
		return Session{}, fmt.Errorf("name %q: the backend answered with a session without an id; check ide_session_list", name)
	}
	if stored, ok := s.store.Session(sess.ID); ok {
		return stored, nil
	}
	return sess, nil
}

// SendChat forwards a user message to a session and records it in the
// session's history. It fails when the bridge is disconnected or the backend
// refuses the message.
func (s *Subsystem) SendChat(ctx context.Context, sessionID, message string) (ChatSendOutput, error) {
	if sessionID == "" {
		return ChatSendOutput{}, errors.New("sessionId: required; call ide_session_list to see sessions or ide_session_create to start one")
	}
	if strings.TrimSpace(message) == "" {
		return ChatSendOutput{}, errors.New("message: must not be empty")
	}
	id := uuid.NewString()
	sentAt := time.Now().UTC()
	_, err := s.ask(ctx, protocol.TypeChatSend, sessionID, protocol.ChatSendRequest{MessageID: id, Message: message})
	var refused *agentic.BackendError
	switch {
	case errors.Is(err, agentic.ErrNotConnected):
		return ChatSendOutput{}, s.notConnected("the message was not sent")
	case errors.As(err, &refused):
		return ChatSendOutput{}, fmt.Errorf("sessionId %q: %w; call ide_session_list to see sessions", sessionID, refused)
	case errors.Is(err, agentic.ErrConnectionLost):
		return ChatSendOutput{}, fmt.Errorf("sessionId %q: the connection dropped before the backend confirmed the message, so it may not have arrived; check ide_chat_history once the bridge is back", sessionID)
	}
	// Confirmed, or sent without an answer in time: either way it is on its
	// way, and the backend's echo (same id) merges with this record.
	s.publish(s.store.RecordMessage(sessionID, protocol.ChatMessage{
		ID: id, Role: "user", Content: message, Timestamp: sentAt,
	}))
	return ChatSendOutput{Sent: true, SessionID: sessionID, Timestamp: sentAt}, nil
}
