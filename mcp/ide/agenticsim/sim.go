// Package agenticsim is a local stand-in for the agentic backend
// (core-agentic): a WebSocket server at /ws that speaks the IDE bridge
// protocol (package protocol, docs/ide-bridge.md). It keeps sessions with
// chat histories and plans, answers chat with streamed replies, runs fake
// builds that emit log lines and finish as success or failure, and emits
// activity. It exists so the bridge can be developed and tested against a
// real socket; `go run ./cmd/switchboard-dev agentic-sim` runs it.
package agenticsim

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/switchboard-hub/switchboard/internal/agentic/protocol"
)

// Options configure the simulator. The zero value is usable.
type Options struct {
	// Token, when set, is required as "Authorization: Bearer <token>" or ?token=.
	Token string
	// ReplyDelay is the pause before each streamed reply fragment (default 20ms).
	ReplyDelay time.Duration
	// LineInterval is the pause before each build log line (default 20ms).
	LineInterval time.Duration
	// Reply produces the agent's answer; nil uses a canned acknowledgement.
	Reply func(sessionID, message string) string
	// Repos and Services are reported in the overview (repos also include
	// every repository that has had a build).
	Repos    []string
	Services int
	// Demo seeds a session and starts a build every DemoInterval (default
	// 20s), alternating success and failure, so a dashboard has live data.
	Demo         bool
	DemoInterval time.Duration
	Logger       *slog.Logger
}

const (
	writeTimeout   = 5 * time.Second
	maxFrameSize   = 10 << 20
	maxLogSnapshot = 5000 // lines per build_log answer, as the bridge keeps
	maxRecorded    = 1000 // requests remembered for tests
)

// Server is one simulated backend. Its state outlives Stop/Start, like a
// backend whose socket layer restarts while its database stays.
type Server struct {
	opts Options
	log  *slog.Logger

	workCtx    context.Context // background work: streams, builds, demo
	cancelWork context.CancelFunc
	work       sync.WaitGroup

	netMu     sync.Mutex
	listening bool
	closed    bool
	addr      string
	srv       *http.Server
	serveDone chan struct{}
	clients   map[*client]struct{}
	handlers  sync.WaitGroup

	mu          sync.Mutex
	sessions    map[string]*simSession
	builds      map[string]*simBuild
	buildOrder  []string
	activity    []protocol.ActivityEvent
	seq         int
	requests    []protocol.Message
	authHeaders []string
}

type simSession struct {
	info     protocol.Session
	messages []protocol.ChatMessage
	plan     protocol.Plan
}

type simBuild struct {
	info  protocol.BuildInfo
	lines []string
}

type client struct {
	conn    *websocket.Conn
	writeMu sync.Mutex
}

func (c *client) send(msg protocol.Message) error {
	if msg.Timestamp.IsZero() {
		msg.Timestamp = time.Now().UTC()
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_ = c.conn.SetWriteDeadline(time.Now().Add(writeTimeout))
	return c.conn.WriteJSON(msg)
}

// New returns a simulator that is not listening yet.
func New(opts Options) *Server {
	if opts.ReplyDelay <= 0 {
		opts.ReplyDelay = 20 * time.Millisecond
	}
	if opts.LineInterval <= 0 {
		opts.LineInterval = 20 * time.Millisecond
	}
	if opts.DemoInterval <= 0 {
		opts.DemoInterval = 20 * time.Second
	}
	if opts.Reply == nil {
		opts.Reply = func(_, message string) string {
			return fmt.Sprintf("Simulated agent here. I read %q and have planned the next steps; nothing was changed.", message)
		}
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{
		opts:       opts,
		log:        log,
		workCtx:    ctx,
		cancelWork: cancel,
		clients:    make(map[*client]struct{}),
		sessions:   make(map[string]*simSession),
		builds:     make(map[string]*simBuild),
	}
}

// Run serves the simulator on addr until ctx ends.
func Run(ctx context.Context, addr string, opts Options) error {
	s := New(opts)
	bound, err := s.Start(addr)
	if err != nil {
		return err
	}
	s.log.Info("agentic backend simulator listening", "url", "ws://"+bound+"/ws")
	if opts.Demo {
		s.startDemo()
	}
	<-ctx.Done()
	return s.Close()
}

// Start listens on addr ("127.0.0.1:0" picks a port) and serves /ws. It may be
// called again after Stop, e.g. on the same address to simulate a restart.
func (s *Server) Start(addr string) (string, error) {
	s.netMu.Lock()
	defer s.netMu.Unlock()
	if s.closed {
		return "", errors.New("agentic simulator: closed")
	}
	if s.listening {
		return "", fmt.Errorf("agentic simulator: already listening on %s", s.addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("agentic simulator: listen on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/ws", s.serveWS)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	s.addr = ln.Addr().String()
	s.listening = true
	s.serveDone = make(chan struct{})
	go func(srv *http.Server, done chan struct{}) {
		defer close(done)
		_ = srv.Serve(ln) // returns http.ErrServerClosed on Stop
	}(s.srv, s.serveDone)
	return s.addr, nil
}

// Addr is the bound address (kept after Stop so Restart can reuse it).
func (s *Server) Addr() string {
	s.netMu.Lock()
	defer s.netMu.Unlock()
	return s.addr
}

// URL is the WebSocket URL of /ws.
func (s *Server) URL() string { return "ws://" + s.Addr() + "/ws" }

// Stop closes the listener and every connection, as a crashing backend
// would. State and background work (running builds, streams) continue.
func (s *Server) Stop() {
	s.netMu.Lock()
	if !s.listening {
		s.netMu.Unlock()
		return
	}
	s.listening = false
	srv, done := s.srv, s.serveDone
	clients := make([]*client, 0, len(s.clients))
	for c := range s.clients {
		clients = append(clients, c)
	}
	s.netMu.Unlock()

	_ = srv.Close() // listener; hijacked WebSocket conns are closed below
	for _, c := range clients {
		_ = c.conn.Close()
	}
	<-done
	s.handlers.Wait()
}

// Restart stops and starts again on the same address.
func (s *Server) Restart() (string, error) {
	addr := s.Addr()
	s.Stop()
	return s.Start(addr)
}

// Close stops serving and ends all background work. The server cannot be
// started again.
func (s *Server) Close() error {
	s.Stop()
	s.netMu.Lock()
	s.closed = true
	s.netMu.Unlock()
	s.cancelWork()
	s.work.Wait()
	return nil
}

// Clients returns the number of connected bridges.
func (s *Server) Clients() int {
	s.netMu.Lock()
	defer s.netMu.Unlock()
	return len(s.clients)
}

// Requests returns the messages received so far (newest last, up to 1000).
func (s *Server) Requests() []protocol.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// AuthHeaders returns the Authorization header of every upgrade request
// ("" when absent), in order (the newest 1000).
func (s *Server) AuthHeaders() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.authHeaders)
}

func (s *Server) authorized(r *http.Request) bool {
	if s.opts.Token == "" {
		return true
	}
	got := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	if got == "" || got == r.Header.Get("Authorization") {
		got = r.URL.Query().Get("token")
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(s.opts.Token)) == 1
}

// loopbackOrigin accepts browsers only from this machine; the bridge itself
// sends no Origin.
func loopbackOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (s *Server) serveWS(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.authHeaders = append(s.authHeaders, r.Header.Get("Authorization"))
	if over := len(s.authHeaders) - maxRecorded; over > 0 {
		s.authHeaders = slices.Delete(s.authHeaders, 0, over)
	}
	s.mu.Unlock()
	if !s.authorized(r) {
		http.Error(w, "missing or wrong bearer token", http.StatusUnauthorized)
		return
	}
	upgrader := websocket.Upgrader{CheckOrigin: loopbackOrigin}
	conn, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // Upgrade already answered the client
	}
	conn.SetReadLimit(maxFrameSize)
	c := &client{conn: conn}

	s.netMu.Lock()
	if !s.listening { // Stop ran while this handshake was in flight
		s.netMu.Unlock()
		_ = conn.Close()
		return
	}
	s.clients[c] = struct{}{}
	s.handlers.Add(1)
	s.netMu.Unlock()
	defer func() {
		s.netMu.Lock()
		delete(s.clients, c)
		s.netMu.Unlock()
		_ = conn.Close()
		s.handlers.Done()
	}()

	for {
		_, data, err := conn.ReadMessage()
		if err != nil {
			return
		}
		var msg protocol.Message
		if err := json.Unmarshal(data, &msg); err != nil || msg.Type == "" {
			_ = c.send(errorReply(msg.RequestID, "bad_frame", "frame is not a protocol message (need a JSON object with a type)"))
			continue
		}
		s.mu.Lock()
		s.requests = append(s.requests, msg)
		if over := len(s.requests) - maxRecorded; over > 0 {
			s.requests = slices.Delete(s.requests, 0, over)
		}
		s.mu.Unlock()
		s.handle(c, msg)
	}
}

// broadcast sends msg to every connected client except skip.
func (s *Server) broadcast(msg protocol.Message, skip *client) {
	s.netMu.Lock()
	clients := make([]*client, 0, len(s.clients))
	for c := range s.clients {
		if c != skip {
			clients = append(clients, c)
		}
	}
	s.netMu.Unlock()
	if msg.Timestamp.IsZero() {
		msg.Timestamp = time.Now().UTC()
	}
	for _, c := range clients {
		if err := c.send(msg); err != nil {
			_ = c.conn.Close() // its handler notices and unregisters it
		}
	}
}

// Broadcast sends an arbitrary message to every connected client (tests use
// it for message types the simulator does not produce itself).
func (s *Server) Broadcast(msg protocol.Message) { s.broadcast(msg, nil) }

func mustMessage(msgType, sessionID, requestID string, payload any) protocol.Message {
	msg, err := protocol.New(msgType, sessionID, payload)
	if err != nil {
		// Payloads are the simulator's own structs: encoding cannot fail.
		panic(err)
	}
	msg.RequestID = requestID
	msg.Timestamp = time.Now().UTC()
	return msg
}

func errorReply(requestID, code, message string) protocol.Message {
	return mustMessage(protocol.TypeError, "", requestID, protocol.ErrorData{Code: code, Message: message})
}

func (s *Server) nextID(prefix string) string {
	s.seq++
	return fmt.Sprintf("%s-%d", prefix, s.seq)
}

func (s *Server) handle(c *client, msg protocol.Message) {
	reply := func(m protocol.Message) { _ = c.send(m) }
	fail := func(code, text string) { reply(errorReply(msg.RequestID, code, text)) }
	switch msg.Type {
	case protocol.TypeHello:
		for _, m := range s.syncMessages() {
			reply(m)
		}
	case protocol.TypeSessionList:
		s.mu.Lock()
		list := s.sessionListLocked()
		s.mu.Unlock()
		reply(mustMessage(protocol.TypeSessionList, "", msg.RequestID, list))
	case protocol.TypeSessionCreate:
		var req protocol.SessionCreateRequest
		if err := msg.Decode(&req); err != nil || strings.TrimSpace(req.Name) == "" {
			fail("bad_request", "name: required")
			return
		}
		sess := s.createSession(req.Name)
		reply(mustMessage(protocol.TypeSession, "", msg.RequestID, sess))
		s.broadcast(mustMessage(protocol.TypeSession, "", "", sess), c)
		s.emitActivity("session_created", fmt.Sprintf("Session %q (%s) created", sess.Name, sess.ID))
	case protocol.TypeChatSend:
		s.handleChat(c, msg)
	case protocol.TypeChatHistory:
		var req protocol.HistoryRequest
		_ = msg.Decode(&req)
		s.mu.Lock()
		sess, ok := s.sessions[msg.SessionID]
		var msgs []protocol.ChatMessage
		if ok {
			msgs = sess.messages
			if req.Limit > 0 && len(msgs) > req.Limit {
				msgs = msgs[len(msgs)-req.Limit:]
			}
			msgs = append([]protocol.ChatMessage{}, msgs...)
		}
		s.mu.Unlock()
		if !ok {
			fail("unknown_session", fmt.Sprintf("no session %q", msg.SessionID))
			return
		}
		reply(mustMessage(protocol.TypeChatHistory, msg.SessionID, msg.RequestID, protocol.ChatHistory{Messages: msgs}))
	case protocol.TypePlanStatus:
		s.mu.Lock()
		sess, ok := s.sessions[msg.SessionID]
		var plan protocol.Plan
		if ok {
			plan = protocol.Plan{Status: sess.plan.Status, Steps: slices.Clone(sess.plan.Steps)}
		}
		s.mu.Unlock()
		if !ok {
			fail("unknown_session", fmt.Sprintf("no session %q", msg.SessionID))
			return
		}
		reply(mustMessage(protocol.TypePlan, msg.SessionID, msg.RequestID, plan))
	case protocol.TypeBuildStatus:
		var req protocol.BuildStatusRequest
		_ = msg.Decode(&req)
		b, ok := s.Build(req.BuildID)
		if !ok {
			fail("unknown_build", fmt.Sprintf("no build %q", req.BuildID))
			return
		}
		reply(mustMessage(protocol.TypeBuild, "", msg.RequestID, b))
	case protocol.TypeBuildList:
		var req protocol.BuildListRequest
		_ = msg.Decode(&req)
		reply(mustMessage(protocol.TypeBuildList, "", msg.RequestID, protocol.BuildList{Builds: s.buildList(req.Repo, req.Limit, time.Time{})}))
	case protocol.TypeBuildLogs:
		var req protocol.BuildLogsRequest
		_ = msg.Decode(&req)
		s.mu.Lock()
		b, ok := s.builds[req.BuildID]
		var logMsg protocol.BuildLog
		if ok {
			from := min(max(req.From, 0, len(b.lines)-maxLogSnapshot), len(b.lines))
			logMsg = protocol.BuildLog{BuildID: req.BuildID, From: &from, Lines: slices.Clone(b.lines[from:])}
		}
		s.mu.Unlock()
		if !ok {
			fail("unknown_build", fmt.Sprintf("no build %q", req.BuildID))
			return
		}
		reply(mustMessage(protocol.TypeBuildLog, "", msg.RequestID, logMsg))
	case protocol.TypeDashboardOverview:
		reply(mustMessage(protocol.TypeOverview, "", msg.RequestID, s.overview()))
	case protocol.TypeDashboardActivity:
		var req protocol.ActivityRequest
		_ = msg.Decode(&req)
		s.mu.Lock()
		events := s.activity
		if req.Limit > 0 && len(events) > req.Limit {
			events = events[len(events)-req.Limit:]
		}
		events = slices.Clone(events)
		s.mu.Unlock()
		reply(mustMessage(protocol.TypeActivityList, "", msg.RequestID, protocol.ActivityList{Events: events}))
	case protocol.TypeDashboardMetrics:
		var req protocol.MetricsRequest
		_ = msg.Decode(&req)
		window := map[string]time.Duration{"1h": time.Hour, "24h": 24 * time.Hour, "7d": 7 * 24 * time.Hour}[req.Period]
		if window == 0 {
			fail("bad_request", fmt.Sprintf("period %q: use 1h, 24h or 7d", req.Period))
			return
		}
		// The bridge computes aggregates itself; give it every build in the window.
		builds := s.buildList("", 0, time.Now().Add(-window))
		reply(mustMessage(protocol.TypeBuildList, "", msg.RequestID, protocol.BuildList{Builds: builds}))
	default:
		if msg.RequestID != "" {
			fail("unknown_type", fmt.Sprintf("message type %q is not understood", msg.Type))
		}
	}
}

// syncMessages is the state a (re)connecting bridge receives after hello.
func (s *Server) syncMessages() []protocol.Message {
	s.mu.Lock()
	sessions := s.sessionListLocked()
	var plans []protocol.Message
	for _, sess := range sessions.Sessions {
		p := s.sessions[sess.ID].plan
		plans = append(plans, mustMessage(protocol.TypePlan, sess.ID, "", protocol.Plan{Status: p.Status, Steps: slices.Clone(p.Steps)}))
	}
	activity := s.activity
	if len(activity) > 100 {
		activity = activity[len(activity)-100:]
	}
	activity = slices.Clone(activity)
	s.mu.Unlock()
	out := []protocol.Message{
		mustMessage(protocol.TypeSessionList, "", "", sessions),
		mustMessage(protocol.TypeBuildList, "", "", protocol.BuildList{Builds: s.buildList("", 0, time.Time{})}),
		mustMessage(protocol.TypeActivityList, "", "", protocol.ActivityList{Events: activity}),
	}
	return append(out, plans...)
}

func (s *Server) sessionListLocked() protocol.SessionList {
	list := protocol.SessionList{Sessions: []protocol.Session{}}
	for _, sess := range s.sessions {
		list.Sessions = append(list.Sessions, sess.info)
	}
	slices.SortFunc(list.Sessions, func(a, b protocol.Session) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return list
}

// CreateSession adds a session and announces it to connected bridges.
func (s *Server) CreateSession(name string) protocol.Session {
	sess := s.createSession(name)
	s.broadcast(mustMessage(protocol.TypeSession, "", "", sess), nil)
	s.emitActivity("session_created", fmt.Sprintf("Session %q (%s) created", sess.Name, sess.ID))
	return sess
}

func (s *Server) createSession(name string) protocol.Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess := protocol.Session{ID: s.nextID("sess"), Name: name, Status: "active", CreatedAt: time.Now().UTC()}
	s.sessions[sess.ID] = &simSession{info: sess, plan: protocol.Plan{Status: "idle", Steps: []protocol.PlanStep{}}}
	return sess
}

// Session returns a session and its chat history as the simulator holds them.
func (s *Server) Session(id string) (protocol.Session, []protocol.ChatMessage, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, ok := s.sessions[id]
	if !ok {
		return protocol.Session{}, nil, false
	}
	return sess.info, slices.Clone(sess.messages), true
}

// SetPlan replaces a session's plan and announces it.
func (s *Server) SetPlan(sessionID, status string, steps []protocol.PlanStep) error {
	s.mu.Lock()
	sess, ok := s.sessions[sessionID]
	if ok {
		sess.plan = protocol.Plan{Status: status, Steps: slices.Clone(steps)}
	}
	s.mu.Unlock()
	if !ok {
		return fmt.Errorf("no session %q", sessionID)
	}
	s.broadcast(mustMessage(protocol.TypePlan, sessionID, "", protocol.Plan{Status: status, Steps: steps}), nil)
	return nil
}

// EmitActivity records an activity event and announces it.
func (s *Server) EmitActivity(eventType, message string) { s.emitActivity(eventType, message) }

func (s *Server) emitActivity(eventType, message string) {
	e := protocol.ActivityEvent{Type: eventType, Message: message, Timestamp: time.Now().UTC()}
	s.mu.Lock()
	s.activity = append(s.activity, e)
	if over := len(s.activity) - 1000; over > 0 {
		s.activity = slices.Delete(s.activity, 0, over)
	}
	s.mu.Unlock()
	s.broadcast(mustMessage(protocol.TypeActivity, "", "", e), nil)
}

func (s *Server) handleChat(c *client, msg protocol.Message) {
	var req protocol.ChatSendRequest
	if err := msg.Decode(&req); err != nil || strings.TrimSpace(req.Message) == "" {
		_ = c.send(errorReply(msg.RequestID, "bad_request", "message: required"))
		return
	}
	s.mu.Lock()
	sess, ok := s.sessions[msg.SessionID]
	var user protocol.ChatMessage
	if ok {
		id := req.MessageID
		if id == "" {
			id = s.nextID("msg")
		}
		user = protocol.ChatMessage{ID: id, Role: "user", Content: req.Message, Timestamp: time.Now().UTC()}
		sess.messages = append(sess.messages, user)
	}
	s.mu.Unlock()
	if !ok {
		_ = c.send(errorReply(msg.RequestID, "unknown_session", fmt.Sprintf("no session %q", msg.SessionID)))
		return
	}
	_ = c.send(mustMessage(protocol.TypeChatMessage, msg.SessionID, msg.RequestID, user))
	s.broadcast(mustMessage(protocol.TypeChatMessage, msg.SessionID, "", user), c)
	s.emitActivity("chat", fmt.Sprintf("User message in session %s", msg.SessionID))

	s.work.Add(1)
	go func() {
		defer s.work.Done()
		s.streamReply(msg.SessionID, s.opts.Reply(msg.SessionID, req.Message))
	}()
}

// streamReply plays the agent: plan running, reply in fragments, then the
// complete message and plan completed. It runs on even when no bridge is
// connected, so a reconnecting bridge finds the finished reply in history.
func (s *Server) streamReply(sessionID, text string) {
	_ = s.SetPlan(sessionID, "running", []protocol.PlanStep{
		{Name: "Read the request", Status: "done"},
		{Name: "Draft a reply", Status: "running"},
		{Name: "Report back", Status: "pending"},
	})
	s.mu.Lock()
	id := s.nextID("msg")
	s.mu.Unlock()
	started := time.Now().UTC()
	for _, chunk := range splitReply(text) {
		if !s.sleep(s.opts.ReplyDelay) {
			return
		}
		s.broadcast(mustMessage(protocol.TypeChatDelta, sessionID, "", protocol.ChatDelta{MessageID: id, Content: chunk}), nil)
	}
	final := protocol.ChatMessage{ID: id, Role: "assistant", Content: text, Timestamp: started}
	s.mu.Lock()
	if sess, ok := s.sessions[sessionID]; ok {
		sess.messages = append(sess.messages, final)
	}
	s.mu.Unlock()
	s.broadcast(mustMessage(protocol.TypeChatMessage, sessionID, "", final), nil)
	_ = s.SetPlan(sessionID, "completed", []protocol.PlanStep{
		{Name: "Read the request", Status: "done"},
		{Name: "Draft a reply", Status: "done"},
		{Name: "Report back", Status: "done"},
	})
}

// splitReply cuts text into word-sized fragments that concatenate back to it.
func splitReply(text string) []string {
	var out []string
	for text != "" {
		i := strings.IndexByte(text, ' ')
		if i < 0 {
			out = append(out, text)
			break
		}
		out = append(out, text[:i+1])
		text = text[i+1:]
	}
	return out
}

// sleep waits d unless the server is closed; false when closed.
func (s *Server) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.workCtx.Done():
		return false
	case <-t.C:
		return true
	}
}

// StartBuild starts a build that emits lines log lines (one per
// LineInterval) and then finishes as success or failure. It returns the
// build as started.
func (s *Server) StartBuild(repo, branch string, lines int, succeed bool) protocol.BuildInfo {
	s.mu.Lock()
	b := &simBuild{info: protocol.BuildInfo{
		ID: s.nextID("build"), Repo: repo, Branch: branch, Status: "running", StartedAt: time.Now().UTC(),
	}}
	s.builds[b.info.ID] = b
	s.buildOrder = append(s.buildOrder, b.info.ID)
	info := b.info
	s.mu.Unlock()
	s.broadcast(mustMessage(protocol.TypeBuild, "", "", info), nil)
	s.emitActivity("build_started", fmt.Sprintf("Build %s of %s@%s started", info.ID, repo, branch))

	s.work.Add(1)
	go func() {
		defer s.work.Done()
		s.runBuild(b, lines, succeed)
	}()
	return info
}

func (s *Server) runBuild(b *simBuild, lines int, succeed bool) {
	id := b.info.ID
	for i := 0; i < lines; i++ {
		if !s.sleep(s.opts.LineInterval) {
			return
		}
		line := fmt.Sprintf("[%s] step %d/%d: compiling package %d ... ok", id, i+1, lines, i+1)
		if i == lines-1 {
			if succeed {
				line = fmt.Sprintf("[%s] BUILD SUCCESS", id)
			} else {
				line = fmt.Sprintf("[%s] BUILD FAILED: exit status 1", id)
			}
		}
		s.mu.Lock()
		from := len(b.lines)
		b.lines = append(b.lines, line)
		s.mu.Unlock()
		s.broadcast(mustMessage(protocol.TypeBuildLog, "", "", protocol.BuildLog{BuildID: id, From: &from, Lines: []string{line}}), nil)
	}
	s.mu.Lock()
	if succeed {
		b.info.Status = "success"
	} else {
		b.info.Status = "failed"
	}
	b.info.Duration = time.Since(b.info.StartedAt).Round(time.Millisecond).String()
	info := b.info
	s.mu.Unlock()
	s.broadcast(mustMessage(protocol.TypeBuild, "", "", info), nil)
	s.emitActivity("build_finished", fmt.Sprintf("Build %s of %s@%s finished: %s in %s", id, info.Repo, info.Branch, info.Status, info.Duration))
}

// Build returns a build as the simulator holds it.
func (s *Server) Build(id string) (protocol.BuildInfo, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.builds[id]
	if !ok {
		return protocol.BuildInfo{}, false
	}
	return b.info, true
}

// BuildLines returns a build's log as the simulator holds it.
func (s *Server) BuildLines(id string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b, ok := s.builds[id]; ok {
		return slices.Clone(b.lines)
	}
	return nil
}

// buildList returns builds of repo (all when empty) started at or after
// since, newest first, at most limit (all when <= 0).
func (s *Server) buildList(repo string, limit int, since time.Time) []protocol.BuildInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []protocol.BuildInfo{}
	for i := len(s.buildOrder) - 1; i >= 0; i-- {
		b := s.builds[s.buildOrder[i]]
		if (repo != "" && b.info.Repo != repo) || b.info.StartedAt.Before(since) {
			continue
		}
		out = append(out, b.info)
		if limit > 0 && len(out) == limit {
			break
		}
	}
	return out
}

func (s *Server) overview() protocol.Overview {
	s.mu.Lock()
	defer s.mu.Unlock()
	repos := map[string]bool{}
	for _, r := range s.opts.Repos {
		repos[r] = true
	}
	for _, b := range s.builds {
		repos[b.info.Repo] = true
	}
	return protocol.Overview{Repos: len(repos), Services: s.opts.Services}
}

// startDemo keeps a dashboard busy: one session, and a build every
// DemoInterval alternating between repositories, success and failure.
func (s *Server) startDemo() {
	s.CreateSession("demo session")
	repos := s.opts.Repos
	if len(repos) == 0 {
		repos = []string{"switchboard", "agentic-core"}
	}
	s.work.Add(1)
	go func() {
		defer s.work.Done()
		for n := 0; ; n++ {
			s.StartBuild(repos[n%len(repos)], "main", 40, n%3 != 2)
			if !s.sleep(s.opts.DemoInterval) {
				return
			}
		}
	}()
}
