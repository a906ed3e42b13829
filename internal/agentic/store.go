package agentic

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/switchboard-hub/switchboard/internal/agentic/protocol"
)

// Limits bound the state store so a long-running hub cannot grow without end.
type Limits struct {
	Sessions          int // sessions (with their chat and plan) kept; least recently touched evicted
	HistoryPerSession int // chat messages kept per session; oldest dropped
	Builds            int // builds (with their logs) kept; oldest start dropped
	LogLinesPerBuild  int // log lines kept per build; oldest dropped
	Activity          int // activity events kept; oldest dropped
	MessageTimes      int // message timestamps kept for messagesTotal (7 days at most)
}

// DefaultLimits are generous for a desktop and small enough to stay in memory.
func DefaultLimits() Limits {
	return Limits{
		Sessions:          1000,
		HistoryPerSession: 500,
		Builds:            1000,
		LogLinesPerBuild:  5000,
		Activity:          1000,
		MessageTimes:      100_000,
	}
}

// Event is one publication the store asks for after applying a message.
type Event struct {
	Channel string
	Data    any
}

// Store holds what the backend has told the bridge: sessions, chats, plans,
// builds with their logs and the activity feed. Tools answer from it, the hub
// snapshot providers read it, and aggregates are computed from it. It never
// forgets on its own (a restarted backend does not wipe it); only the Limits
// evict.
type Store struct {
	limits Limits
	now    func() time.Time

	mu           sync.Mutex
	sessions     map[string]*sessionState
	builds       map[string]*buildState
	activity     []protocol.ActivityEvent // chronological
	messageTimes []time.Time              // when each chat message was first seen
	overview     *protocol.Overview       // backend-reported figures, nil until reported
}

type sessionState struct {
	info     *protocol.Session // nil when only chat or plan messages were seen
	messages []protocol.ChatMessage
	// streaming holds ids of messages built from deltas whose final form has
	// not arrived; the final one is always published, even when its text
	// equals the fragments, because it tells clients the stream ended.
	streaming map[string]bool
	plan      *protocol.Plan
	touched   time.Time
}

type buildState struct {
	info  protocol.BuildInfo
	lines []string // the newest lines; read through kept()
	total int      // lines in the whole log as far as observed = index of the next line
	seen  time.Time
}

// kept returns the newest limit lines (lines may briefly hold more).
func (b *buildState) kept(limit int) []string {
	if len(b.lines) > limit {
		return b.lines[len(b.lines)-limit:]
	}
	return b.lines
}

// NewStore returns an empty store with the given limits (zero fields use the
// defaults).
func NewStore(limits Limits) *Store {
	def := DefaultLimits()
	fill := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	fill(&limits.Sessions, def.Sessions)
	fill(&limits.HistoryPerSession, def.HistoryPerSession)
	fill(&limits.Builds, def.Builds)
	fill(&limits.LogLinesPerBuild, def.LogLinesPerBuild)
	fill(&limits.Activity, def.Activity)
	fill(&limits.MessageTimes, def.MessageTimes)
	return &Store{
		limits:   limits,
		now:      time.Now,
		sessions: make(map[string]*sessionState),
		builds:   make(map[string]*buildState),
	}
}

// Apply folds one backend message into the state and returns the hub events
// it produced. Message types the store does not model are passed through to
// the hub unchanged: on msg.Channel, else on "ide:<type>".
func (s *Store) Apply(msg protocol.Message) ([]Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	at := msg.Timestamp
	if at.IsZero() {
		at = s.now()
	}
	switch msg.Type {
	case protocol.TypeAck:
		return nil, nil
	case protocol.TypeSession:
		var sess protocol.Session
		if err := msg.Decode(&sess); err != nil {
			return nil, err
		}
		return s.upsertSession(sess, at)
	case protocol.TypeSessionList:
		var list protocol.SessionList
		if err := msg.Decode(&list); err != nil {
			return nil, err
		}
		var events []Event
		for _, sess := range list.Sessions {
			ev, err := s.upsertSession(sess, at)
			if err != nil {
				return events, err
			}
			events = append(events, ev...)
		}
		return events, nil
	case protocol.TypeChatMessage:
		var m protocol.ChatMessage
		if err := msg.Decode(&m); err != nil {
			return nil, err
		}
		if msg.SessionID == "" {
			return nil, fmt.Errorf("%s without sessionId", msg.Type)
		}
		return s.upsertMessage(msg.SessionID, m, at), nil
	case protocol.TypeChatDelta:
		var d protocol.ChatDelta
		if err := msg.Decode(&d); err != nil {
			return nil, err
		}
		if msg.SessionID == "" || d.MessageID == "" {
			return nil, fmt.Errorf("%s without sessionId or messageId", msg.Type)
		}
		return s.appendDelta(msg.SessionID, d, at), nil
	case protocol.TypeChatHistory:
		var h protocol.ChatHistory
		if err := msg.Decode(&h); err != nil {
			return nil, err
		}
		if msg.SessionID == "" {
			return nil, fmt.Errorf("%s without sessionId", msg.Type)
		}
		var events []Event
		for _, m := range h.Messages {
			events = append(events, s.upsertMessage(msg.SessionID, m, at)...)
		}
		return events, nil
	case protocol.TypePlan:
		var p protocol.Plan
		if err := msg.Decode(&p); err != nil {
			return nil, err
		}
		if msg.SessionID == "" {
			return nil, fmt.Errorf("%s without sessionId", msg.Type)
		}
		if p.Steps == nil {
			p.Steps = []protocol.PlanStep{}
		}
		st := s.session(msg.SessionID, at)
		st.plan = &p
		return []Event{{Channel: PrefixPlan + msg.SessionID, Data: planFeed(msg.SessionID, p)}}, nil
	case protocol.TypeBuild:
		var b protocol.BuildInfo
		if err := msg.Decode(&b); err != nil {
			return nil, err
		}
		return s.upsertBuild(b, at)
	case protocol.TypeBuildList:
		var list protocol.BuildList
		if err := msg.Decode(&list); err != nil {
			return nil, err
		}
		var events []Event
		for _, b := range list.Builds {
			ev, err := s.upsertBuild(b, at)
			if err != nil {
				return events, err
			}
			events = append(events, ev...)
		}
		return events, nil
	case protocol.TypeBuildLog:
		var l protocol.BuildLog
		if err := msg.Decode(&l); err != nil {
			return nil, err
		}
		if l.BuildID == "" {
			return nil, fmt.Errorf("%s without buildId", msg.Type)
		}
		return s.appendLog(l, at), nil
	case protocol.TypeActivity:
		var e protocol.ActivityEvent
		if err := msg.Decode(&e); err != nil {
			return nil, err
		}
		if e.Timestamp.IsZero() {
			e.Timestamp = at
		}
		s.activity = append(s.activity, e)
		s.trimActivity()
		return []Event{activityEvent(e)}, nil
	case protocol.TypeActivityList:
		var list protocol.ActivityList
		if err := msg.Decode(&list); err != nil {
			return nil, err
		}
		return s.mergeActivity(list.Events, at), nil
	case protocol.TypeOverview:
		var o protocol.Overview
		if err := msg.Decode(&o); err != nil {
			return nil, err
		}
		s.overview = &o
	}
	// Not modelled (or modelled but also of interest raw, like overview and
	// error): forward as the reference bridge does.
	channel := msg.Channel
	if channel == "" {
		channel = "ide:" + msg.Type
	}
	var data any
	if len(msg.Data) > 0 {
		data = msg.Data
	}
	return []Event{{Channel: channel, Data: data}}, nil
}

// session returns the state for id, creating it (and evicting the least
// recently touched session beyond the limit).
func (s *Store) session(id string, at time.Time) *sessionState {
	st, ok := s.sessions[id]
	if !ok {
		st = &sessionState{}
		s.sessions[id] = st
		if len(s.sessions) > s.limits.Sessions {
			s.evictSession(id)
		}
	}
	if at.After(st.touched) {
		st.touched = at
	}
	return st
}

func (s *Store) evictSession(keep string) {
	var oldestID string
	var oldest time.Time
	for id, st := range s.sessions {
		if id == keep {
			continue
		}
		if oldestID == "" || st.touched.Before(oldest) {
			oldestID, oldest = id, st.touched
		}
	}
	delete(s.sessions, oldestID)
}

func (s *Store) upsertSession(sess protocol.Session, at time.Time) ([]Event, error) {
	if sess.ID == "" {
		return nil, fmt.Errorf("session without id")
	}
	st := s.session(sess.ID, at)
	if st.info != nil {
		// Keep what an update leaves out.
		if sess.Name == "" {
			sess.Name = st.info.Name
		}
		if sess.Status == "" {
			sess.Status = st.info.Status
		}
		if sess.CreatedAt.IsZero() {
			sess.CreatedAt = st.info.CreatedAt
		}
		if *st.info == sess {
			return nil, nil
		}
	}
	if sess.CreatedAt.IsZero() {
		sess.CreatedAt = at
	}
	st.info = &sess
	return []Event{{Channel: ChannelSessions, Data: SessionEvent{Kind: "session", Session: sess}}}, nil
}

// upsertMessage adds m to the session's history or replaces the entry with
// the same id (an echo, a history answer, or the final form of a stream).
func (s *Store) upsertMessage(sessionID string, m protocol.ChatMessage, at time.Time) []Event {
	if m.Timestamp.IsZero() {
		m.Timestamp = at
	}
	st := s.session(sessionID, at)
	for i, old := range st.messages {
		same := (m.ID != "" && old.ID == m.ID) ||
			(m.ID == "" && old.Role == m.Role && old.Content == m.Content && old.Timestamp.Equal(m.Timestamp))
		if !same {
			continue
		}
		if m.ID == "" {
			return nil // history answer repeating an id-less message we have
		}
		ended := st.streaming[m.ID]
		delete(st.streaming, m.ID)
		if old.Content == m.Content && old.Role == m.Role && !ended {
			return nil
		}
		// The final message supersedes streamed fragments; keep its place.
		m.Timestamp = old.Timestamp
		st.messages[i] = m
		return []Event{chatMessageEvent(sessionID, m)}
	}
	if m.ID == "" {
		m.ID = uuid.NewString()
	}
	s.insertMessage(st, m)
	return []Event{chatMessageEvent(sessionID, m)}
}

// appendDelta extends the streamed message, creating it on the first fragment
// so that history shows a reply in progress and keeps it if the stream breaks.
func (s *Store) appendDelta(sessionID string, d protocol.ChatDelta, at time.Time) []Event {
	st := s.session(sessionID, at)
	found, offset := false, 0
	for i := range st.messages {
		if st.messages[i].ID == d.MessageID {
			offset = len(st.messages[i].Content)
			st.messages[i].Content += d.Content
			found = true
			break
		}
	}
	if !found {
		s.insertMessage(st, protocol.ChatMessage{ID: d.MessageID, Role: "assistant", Content: d.Content, Timestamp: at})
		if st.streaming == nil {
			st.streaming = make(map[string]bool)
		}
		st.streaming[d.MessageID] = true
	}
	// offset (bytes of the message before this fragment) lets a client that
	// got the partial message in a snapshot skip a fragment it already has.
	return []Event{{Channel: PrefixChat + sessionID, Data: ChatDeltaEvent{
		Kind: "delta", MessageID: d.MessageID, Content: d.Content, Offset: offset,
	}}}
}

// insertMessage keeps history ordered by timestamp (messages usually arrive in
// order, so this is an append) and bounded.
func (s *Store) insertMessage(st *sessionState, m protocol.ChatMessage) {
	i := len(st.messages)
	for i > 0 && st.messages[i-1].Timestamp.After(m.Timestamp) {
		i--
	}
	st.messages = slices.Insert(st.messages, i, m)
	if over := len(st.messages) - s.limits.HistoryPerSession; over > 0 {
		for _, gone := range st.messages[:over] {
			delete(st.streaming, gone.ID)
		}
		st.messages = slices.Delete(st.messages, 0, over)
	}
	s.messageTimes = append(s.messageTimes, m.Timestamp)
	s.trimMessageTimes()
}

func (s *Store) trimMessageTimes() {
	cutoff := s.now().Add(-periods["7d"])
	drop := 0
	for drop < len(s.messageTimes) && s.messageTimes[drop].Before(cutoff) {
		drop++
	}
	if over := len(s.messageTimes) - drop - s.limits.MessageTimes; over > 0 {
		drop += over
	}
	if drop > 0 {
		s.messageTimes = slices.Delete(s.messageTimes, 0, drop)
	}
}

func (s *Store) build(id string, at time.Time) *buildState {
	b, ok := s.builds[id]
	if !ok {
		b = &buildState{info: protocol.BuildInfo{ID: id, Status: "unknown"}, seen: at}
		s.builds[id] = b
		if len(s.builds) > s.limits.Builds {
			s.evictBuild(id)
		}
	}
	return b
}

func (s *Store) evictBuild(keep string) {
	var oldestID string
	var oldest time.Time
	for id, b := range s.builds {
		if id == keep {
			continue
		}
		if t := b.startedOrSeen(); oldestID == "" || t.Before(oldest) {
			oldestID, oldest = id, t
		}
	}
	delete(s.builds, oldestID)
}

func (b *buildState) startedOrSeen() time.Time {
	if !b.info.StartedAt.IsZero() {
		return b.info.StartedAt
	}
	return b.seen
}

func (s *Store) upsertBuild(in protocol.BuildInfo, at time.Time) ([]Event, error) {
	if in.ID == "" {
		return nil, fmt.Errorf("build without id")
	}
	b := s.build(in.ID, at)
	merged := b.info
	if in.Repo != "" {
		merged.Repo = in.Repo
	}
	if in.Branch != "" {
		merged.Branch = in.Branch
	}
	if in.Status != "" {
		merged.Status = in.Status
	}
	if in.Duration != "" {
		merged.Duration = in.Duration
	}
	if !in.StartedAt.IsZero() {
		merged.StartedAt = in.StartedAt
	}
	if merged == b.info {
		return nil, nil
	}
	b.info = merged
	data := BuildEvent{Kind: "build", Build: merged}
	return []Event{{Channel: ChannelBuilds, Data: data}, {Channel: PrefixBuild + in.ID, Data: data}}, nil
}

// appendLog adds lines at their position in the build's log. Lines the store
// already holds (From below its total) are skipped, so a catch-up answer that
// overlaps the live stream does not duplicate anything.
func (s *Store) appendLog(l protocol.BuildLog, at time.Time) []Event {
	b := s.build(l.BuildID, at)
	lines := l.Lines
	if l.From != nil {
		from := *l.From
		switch {
		case from < b.total:
			skip := b.total - from
			if skip >= len(lines) {
				return nil
			}
			lines = lines[skip:]
		case from > b.total:
			// A gap we cannot fill from this message: move on from where it starts.
			b.total = from
		}
	}
	events := make([]Event, 0, len(lines))
	channel := PrefixBuild + l.BuildID
	for _, line := range lines {
		b.total++
		events = append(events, Event{Channel: channel, Data: BuildLogEvent{Kind: "log", Line: line, N: b.total}})
	}
	b.lines = append(b.lines, lines...)
	// Trim in batches: the buffer may hold up to twice the limit, so a busy
	// build costs one copy per LogLinesPerBuild lines instead of one per line.
	if limit := s.limits.LogLinesPerBuild; len(b.lines) > 2*limit {
		b.lines = slices.Clone(b.lines[len(b.lines)-limit:])
	}
	return events
}

func (s *Store) trimActivity() {
	if over := len(s.activity) - s.limits.Activity; over > 0 {
		s.activity = slices.Delete(s.activity, 0, over)
	}
}

// mergeActivity adds the events not already held, in timestamp order.
func (s *Store) mergeActivity(in []protocol.ActivityEvent, at time.Time) []Event {
	var events []Event
	for _, e := range in {
		if e.Timestamp.IsZero() {
			e.Timestamp = at
		}
		dup := slices.ContainsFunc(s.activity, func(o protocol.ActivityEvent) bool {
			return o.Type == e.Type && o.Message == e.Message && o.Timestamp.Equal(e.Timestamp)
		})
		if dup {
			continue
		}
		i := len(s.activity)
		for i > 0 && s.activity[i-1].Timestamp.After(e.Timestamp) {
			i--
		}
		s.activity = slices.Insert(s.activity, i, e)
		events = append(events, activityEvent(e))
	}
	s.trimActivity()
	return events
}

func chatMessageEvent(sessionID string, m protocol.ChatMessage) Event {
	return Event{Channel: PrefixChat + sessionID, Data: ChatMessageEvent{Kind: "message", Message: m}}
}

func activityEvent(e protocol.ActivityEvent) Event {
	return Event{Channel: ChannelActivity, Data: ActivityAddedEvent{Kind: "activity", Event: e}}
}

func planFeed(sessionID string, p protocol.Plan) PlanFeed {
	return PlanFeed{SessionID: sessionID, Status: p.Status, Steps: p.Steps}
}

// ---- queries ----

// Sessions returns the known sessions, oldest first.
func (s *Store) Sessions() []protocol.Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessionsLocked()
}

func (s *Store) sessionsLocked() []protocol.Session {
	out := make([]protocol.Session, 0, len(s.sessions))
	for _, st := range s.sessions {
		if st.info != nil {
			out = append(out, *st.info)
		}
	}
	slices.SortFunc(out, func(a, b protocol.Session) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
}

// Session returns one session record.
func (s *Store) Session(id string) (protocol.Session, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.sessions[id]; ok && st.info != nil {
		return *st.info, true
	}
	return protocol.Session{}, false
}

// KnowsSession reports whether anything (record, chat or plan) was seen for id.
func (s *Store) KnowsSession(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.sessions[id]
	return ok
}

// RecordMessage adds a message the bridge itself sent (the user's chat
// message); an echo with the same id from the backend merges with it.
func (s *Store) RecordMessage(sessionID string, m protocol.ChatMessage) []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.upsertMessage(sessionID, m, s.now())
}

// History returns the last limit messages of a session (all when limit <= 0),
// oldest first.
func (s *Store) History(sessionID string, limit int) []protocol.ChatMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.sessions[sessionID]
	if !ok {
		return []protocol.ChatMessage{}
	}
	msgs := st.messages
	if limit > 0 && len(msgs) > limit {
		msgs = msgs[len(msgs)-limit:]
	}
	return slices.Clone(msgs)
}

// Plan returns the session's plan, if one was reported.
func (s *Store) Plan(sessionID string) (protocol.Plan, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.sessions[sessionID]
	if !ok || st.plan == nil {
		return protocol.Plan{}, false
	}
	return protocol.Plan{Status: st.plan.Status, Steps: slices.Clone(st.plan.Steps)}, true
}

// Build returns one build record.
func (s *Store) Build(id string) (protocol.BuildInfo, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.builds[id]
	if !ok {
		return protocol.BuildInfo{}, false
	}
	return b.info, true
}

// Builds returns builds (of repo, when set), newest start first, at most
// limit (all when limit <= 0).
func (s *Store) Builds(repo string, limit int) []protocol.BuildInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buildsLocked(repo, limit)
}

func (s *Store) buildsLocked(repo string, limit int) []protocol.BuildInfo {
	states := make([]*buildState, 0, len(s.builds))
	for _, b := range s.builds {
		if repo == "" || b.info.Repo == repo {
			states = append(states, b)
		}
	}
	slices.SortFunc(states, func(a, b *buildState) int {
		if c := b.startedOrSeen().Compare(a.startedOrSeen()); c != 0 {
			return c
		}
		return strings.Compare(b.info.ID, a.info.ID)
	})
	if limit > 0 && len(states) > limit {
		states = states[:limit]
	}
	out := make([]protocol.BuildInfo, len(states))
	for i, b := range states {
		out[i] = b.info
	}
	return out
}

// Logs returns the last tail lines of a build's log (all kept lines when
// tail <= 0) and the total number of lines observed.
func (s *Store) Logs(buildID string, tail int) (lines []string, total int, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.builds[buildID]
	if !ok {
		return nil, 0, false
	}
	lines = b.kept(s.limits.LogLinesPerBuild)
	if tail > 0 && len(lines) > tail {
		lines = lines[len(lines)-tail:]
	}
	return slices.Clone(lines), b.total, true
}

// LogTotal returns how many lines of the build's log the store has seen.
func (s *Store) LogTotal(buildID string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b, ok := s.builds[buildID]; ok {
		return b.total
	}
	return 0
}

// Activity returns the newest limit events (all when limit <= 0), newest first.
func (s *Store) Activity(limit int) []protocol.ActivityEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	events := s.activity
	if limit > 0 && len(events) > limit {
		events = events[len(events)-limit:]
	}
	out := slices.Clone(events)
	slices.Reverse(out)
	if out == nil {
		out = []protocol.ActivityEvent{}
	}
	return out
}

// inactiveSessionStatuses are the statuses that do not count as active.
var inactiveSessionStatuses = map[string]bool{
	"closed": true, "ended": true, "archived": true, "completed": true, "failed": true,
	"stopped": true, "terminated": true, "deleted": true, "error": true,
}

// Overview counts what the store holds. Repos and services come from the
// backend's last overview; without one, repos counts the distinct
// repositories seen in builds.
func (s *Store) Overview() DashboardOverview {
	s.mu.Lock()
	defer s.mu.Unlock()
	var o DashboardOverview
	for _, st := range s.sessions {
		if st.info != nil && !inactiveSessionStatuses[strings.ToLower(st.info.Status)] {
			o.ActiveSessions++
		}
	}
	since := s.now().Add(-periods["24h"])
	repos := map[string]bool{}
	for _, b := range s.builds {
		if b.info.Repo != "" {
			repos[b.info.Repo] = true
		}
		if !b.startedOrSeen().Before(since) {
			o.RecentBuilds++
		}
	}
	o.Repos = len(repos)
	if s.overview != nil {
		o.Repos = s.overview.Repos
		o.Services = s.overview.Services
	}
	return o
}

// ValidPeriod reports whether Metrics accepts period ("1h", "24h", "7d").
func ValidPeriod(period string) bool { _, ok := periods[period]; return ok }

// periods are the windows ide_dashboard_metrics accepts.
var periods = map[string]time.Duration{
	"1h":  time.Hour,
	"24h": 24 * time.Hour,
	"7d":  7 * 24 * time.Hour,
}

// buildOutcome maps the many spellings of a finished build's status.
func buildOutcome(status string) string {
	switch strings.ToLower(status) {
	case "success", "succeeded", "passed", "ok":
		return "success"
	case "failed", "failure", "error", "errored":
		return "failed"
	}
	return ""
}

// Metrics aggregates the period (a key of periods) from observed state:
// builds started in it, sessions created in it, chat messages seen in it.
func (s *Store) Metrics(period string) DashboardMetrics {
	s.mu.Lock()
	defer s.mu.Unlock()
	since := s.now().Add(-periods[period])
	var m DashboardMetrics
	var sum time.Duration
	var timed int
	for _, b := range s.builds {
		if b.startedOrSeen().Before(since) {
			continue
		}
		m.BuildsTotal++
		switch buildOutcome(b.info.Status) {
		case "success":
			m.BuildsSuccess++
		case "failed":
			m.BuildsFailed++
		default:
			continue
		}
		if d, err := time.ParseDuration(b.info.Duration); err == nil {
			sum += d
			timed++
		}
	}
	m.AvgBuildTime = "0s"
	if timed > 0 {
		m.AvgBuildTime = (sum / time.Duration(timed)).Round(time.Millisecond).String()
	}
	if finished := m.BuildsSuccess + m.BuildsFailed; finished > 0 {
		m.SuccessRate = float64(m.BuildsSuccess) / float64(finished)
	}
	for _, st := range s.sessions {
		if st.info != nil && !st.info.CreatedAt.Before(since) {
			m.AgentSessions++
		}
	}
	for _, t := range s.messageTimes {
		if !t.Before(since) {
			m.MessagesTotal++
		}
	}
	return m
}

// ---- hub snapshots (data shapes in docs/ide-bridge.md) ----

// SnapshotSessions is the snapshot a new subscriber of ChannelSessions receives: every session.
func (s *Store) SnapshotSessions() SessionsSnapshot {
	return SessionsSnapshot{Sessions: s.Sessions()}
}

// SnapshotChat is the snapshot a new subscriber of chat:<sessionID> receives: the session's
// whole kept history.
func (s *Store) SnapshotChat(sessionID string) ChatSnapshot {
	return ChatSnapshot{SessionID: sessionID, Messages: s.History(sessionID, 0)}
}

// SnapshotPlan is the snapshot a new subscriber of plan:<sessionID> receives: the session's
// plan, or an empty one with status "unknown" before the backend sent any.
func (s *Store) SnapshotPlan(sessionID string) PlanFeed {
	p, ok := s.Plan(sessionID)
	if !ok {
		p = protocol.Plan{Status: "unknown", Steps: []protocol.PlanStep{}}
	}
	return planFeed(sessionID, p)
}

// SnapshotBuilds is the snapshot a new subscriber of ChannelBuilds receives: every kept build.
func (s *Store) SnapshotBuilds() BuildsSnapshot {
	return BuildsSnapshot{Builds: s.Builds("", 0)}
}

// SnapshotBuild is the snapshot a new subscriber of build:<buildID> receives: the build and its
// kept log lines. It reports false for a build the store does not know, and no snapshot is sent.
func (s *Store) SnapshotBuild(buildID string) (BuildLogSnapshot, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.builds[buildID]
	if !ok {
		return BuildLogSnapshot{}, false
	}
	return BuildLogSnapshot{Build: b.info, Lines: slices.Clone(b.kept(s.limits.LogLinesPerBuild)), Total: b.total}, true
}

// SnapshotActivity is the snapshot a new subscriber of ChannelActivity receives: the last 500
// activity events, oldest first.
func (s *Store) SnapshotActivity() ActivitySnapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	events := s.activity
	if len(events) > 500 {
		events = events[len(events)-500:]
	}
	return ActivitySnapshot{Events: append([]protocol.ActivityEvent{}, events...)}
}

// DashboardOverview is the platform summary ide_dashboard_overview answers with.
type DashboardOverview struct {
	Repos          int  `json:"repos" jsonschema:"repositories managed by the backend (as it reports; else distinct repositories seen in builds)"`
	Services       int  `json:"services" jsonschema:"services managed by the backend, as it reports"`
	ActiveSessions int  `json:"activeSessions" jsonschema:"agent sessions not closed, ended, completed or failed"`
	RecentBuilds   int  `json:"recentBuilds" jsonschema:"builds started in the last 24 hours"`
	BridgeOnline   bool `json:"bridgeOnline" jsonschema:"whether the bridge to the agentic backend is connected right now"`
}

// DashboardMetrics are the aggregates ide_dashboard_metrics answers with.
type DashboardMetrics struct {
	BuildsTotal   int     `json:"buildsTotal" jsonschema:"builds started in the period"`
	BuildsSuccess int     `json:"buildsSuccess" jsonschema:"of those, builds that succeeded"`
	BuildsFailed  int     `json:"buildsFailed" jsonschema:"of those, builds that failed"`
	AvgBuildTime  string  `json:"avgBuildTime" jsonschema:"average duration of the finished builds, e.g. 1m2.5s"`
	AgentSessions int     `json:"agentSessions" jsonschema:"agent sessions created in the period"`
	MessagesTotal int     `json:"messagesTotal" jsonschema:"chat messages (user and assistant) in the period"`
	SuccessRate   float64 `json:"successRate" jsonschema:"succeeded / finished builds, 0.0 to 1.0"`
}
