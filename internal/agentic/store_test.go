package agentic

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/agentic/protocol"
)

func msg(t *testing.T, msgType, sessionID string, payload any) protocol.Message {
	t.Helper()
	m, err := protocol.New(msgType, sessionID, payload)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func apply(t *testing.T, s *Store, m protocol.Message) []Event {
	t.Helper()
	events, err := s.Apply(m)
	if err != nil {
		t.Fatalf("apply %s: %v", m.Type, err)
	}
	return events
}

func channels(events []Event) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e.Channel
	}
	return out
}

func TestStoreChatStreamAndEcho(t *testing.T) {
	s := NewStore(Limits{})
	t0 := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

	// The bridge records the user's message; the backend's echo (same id) merges.
	if ev := s.RecordMessage("s1", protocol.ChatMessage{ID: "u1", Role: "user", Content: "hi", Timestamp: t0}); len(ev) != 1 {
		t.Fatalf("RecordMessage events = %v", ev)
	}
	if ev := apply(t, s, msg(t, protocol.TypeChatMessage, "s1", protocol.ChatMessage{ID: "u1", Role: "user", Content: "hi", Timestamp: t0})); len(ev) != 0 {
		t.Errorf("identical echo published %v; want nothing", ev)
	}
	// A streamed reply appears in history as it grows, then its final form replaces it.
	offset := 0
	for _, part := range []string{"Hel", "lo ", "there"} {
		ev := apply(t, s, msg(t, protocol.TypeChatDelta, "s1", protocol.ChatDelta{MessageID: "a1", Content: part}))
		data := roundTrip[map[string]any](t, ev[0].Data)
		if ev[0].Channel != "chat:s1" || data["kind"] != "delta" || data["content"] != part || data["messageId"] != "a1" ||
			data["offset"] != float64(offset) {
			t.Fatalf("delta event = %s %v; want offset %d", ev[0].Channel, data, offset)
		}
		offset += len(part)
	}
	h := s.History("s1", 0)
	if len(h) != 2 || h[1].Content != "Hello there" || h[1].Role != "assistant" {
		t.Fatalf("history mid-stream = %+v", h)
	}
	ev := apply(t, s, msg(t, protocol.TypeChatMessage, "s1", protocol.ChatMessage{ID: "a1", Role: "assistant", Content: "Hello there!"}))
	if len(ev) != 1 || roundTrip[map[string]any](t, ev[0].Data)["kind"] != "message" {
		t.Fatalf("final message events = %v", ev)
	}
	h = s.History("s1", 0)
	if len(h) != 2 || h[1].Content != "Hello there!" {
		t.Fatalf("history after final = %+v", h)
	}
	// A final message equal to its fragments is still published: it ends the stream.
	apply(t, s, msg(t, protocol.TypeChatDelta, "s1", protocol.ChatDelta{MessageID: "a2", Content: "same"}))
	ev = apply(t, s, msg(t, protocol.TypeChatMessage, "s1", protocol.ChatMessage{ID: "a2", Role: "assistant", Content: "same"}))
	if len(ev) != 1 {
		t.Errorf("final message equal to its fragments published %v; want one message event", ev)
	}
	if ev := apply(t, s, msg(t, protocol.TypeChatMessage, "s1", protocol.ChatMessage{ID: "a2", Role: "assistant", Content: "same"})); len(ev) != 0 {
		t.Errorf("repeated final message published %v", ev)
	}
	h = s.History("s1", 2)
	if got := s.History("s1", 1); len(got) != 1 || got[0].ID != "a2" {
		t.Errorf("History limit 1 = %+v; want the newest", got)
	}
	// A history answer repeats what we have and adds an older message in order.
	older := protocol.ChatMessage{ID: "u0", Role: "user", Content: "earlier", Timestamp: t0.Add(-time.Minute)}
	apply(t, s, msg(t, protocol.TypeChatHistory, "s1", protocol.ChatHistory{Messages: []protocol.ChatMessage{older, h[0], h[1]}}))
	var ids []string
	for _, m := range s.History("s1", 0) {
		ids = append(ids, m.ID)
	}
	if !slices.Equal(ids, []string{"u0", "u1", "a1", "a2"}) {
		t.Errorf("history after merge = %v", ids)
	}
}

func TestStoreHistoryBounded(t *testing.T) {
	s := NewStore(Limits{HistoryPerSession: 3})
	for i := range 5 {
		s.RecordMessage("s", protocol.ChatMessage{ID: fmt.Sprint(i), Role: "user", Content: fmt.Sprint(i), Timestamp: time.Unix(int64(i), 0)})
	}
	h := s.History("s", 0)
	if len(h) != 3 || h[0].ID != "2" || h[2].ID != "4" {
		t.Errorf("bounded history = %+v; want the newest 3", h)
	}
}

func TestStoreBuildLogMerge(t *testing.T) {
	from := func(i int) *int { return &i }
	tests := []struct {
		name   string
		logs   []protocol.BuildLog
		want   []string
		total  int
		events int
	}{
		{name: "append without from", logs: []protocol.BuildLog{
			{BuildID: "b", Lines: []string{"a", "b"}}, {BuildID: "b", Lines: []string{"c"}},
		}, want: []string{"a", "b", "c"}, total: 3, events: 3},
		{name: "overlap skipped", logs: []protocol.BuildLog{
			{BuildID: "b", From: from(0), Lines: []string{"a", "b"}},
			{BuildID: "b", From: from(1), Lines: []string{"b", "c", "d"}},
			{BuildID: "b", From: from(0), Lines: []string{"a"}},
		}, want: []string{"a", "b", "c", "d"}, total: 4, events: 4},
		{name: "gap jumps ahead", logs: []protocol.BuildLog{
			{BuildID: "b", From: from(0), Lines: []string{"a"}},
			{BuildID: "b", From: from(5), Lines: []string{"f", "g"}},
		}, want: []string{"a", "f", "g"}, total: 7, events: 3},
		{name: "bounded to the newest lines", logs: []protocol.BuildLog{
			{BuildID: "b", From: from(0), Lines: []string{"1", "2", "3", "4", "5", "6"}},
		}, want: []string{"3", "4", "5", "6"}, total: 6, events: 6},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewStore(Limits{LogLinesPerBuild: 4})
			events := 0
			var lastN float64
			for _, l := range tc.logs {
				for _, ev := range apply(t, s, msg(t, protocol.TypeBuildLog, "", l)) {
					events++
					data := roundTrip[map[string]any](t, ev.Data)
					if ev.Channel != "build:b" || data["kind"] != "log" {
						t.Fatalf("log event = %s %v", ev.Channel, data)
					}
					lastN = data["n"].(float64)
				}
			}
			lines, total, ok := s.Logs("b", 0)
			if !ok || !slices.Equal(lines, tc.want) || total != tc.total {
				t.Errorf("logs = %v (total %d, ok %v); want %v (total %d)", lines, total, ok, tc.want, tc.total)
			}
			if events != tc.events || int(lastN) != tc.total {
				t.Errorf("published %d log events, last n %v; want %d, n %d", events, lastN, tc.events, tc.total)
			}
			if tail, _, _ := s.Logs("b", 2); !slices.Equal(tail, tc.want[len(tc.want)-2:]) {
				t.Errorf("tail 2 = %v", tail)
			}
		})
	}
}

func TestStorePassthroughChannels(t *testing.T) {
	s := NewStore(Limits{})
	m := msg(t, "deploy_status", "", map[string]any{"env": "staging"})
	ev := apply(t, s, m)
	if !slices.Equal(channels(ev), []string{"ide:deploy_status"}) {
		t.Errorf("no channel: published on %v, want ide:deploy_status", channels(ev))
	}
	m.Channel = "deploys"
	ev = apply(t, s, m)
	if !slices.Equal(channels(ev), []string{"deploys"}) || roundTrip[map[string]any](t, ev[0].Data)["env"] != "staging" {
		t.Errorf("with channel: %v %v", channels(ev), ev)
	}
	// Modelled types go to the documented channels, whatever channel the backend named.
	b := msg(t, protocol.TypeBuild, "", protocol.BuildInfo{ID: "b1", Repo: "r", Status: "running"})
	b.Channel = "elsewhere"
	if got := channels(apply(t, s, b)); !slices.Equal(got, []string{"ide:builds", "build:b1"}) {
		t.Errorf("build published on %v", got)
	}
	if _, err := s.Apply(msg(t, protocol.TypeChatMessage, "", protocol.ChatMessage{Role: "user", Content: "x"})); err == nil {
		t.Error("chat_message without sessionId accepted")
	}
}

func TestStoreSessionsUpsertAndEvict(t *testing.T) {
	s := NewStore(Limits{Sessions: 2})
	t0 := time.Now().UTC().Add(-time.Hour)
	for i, id := range []string{"a", "b", "c"} {
		apply(t, s, msg(t, protocol.TypeSession, "", protocol.Session{ID: id, Name: id, Status: "active", CreatedAt: t0.Add(time.Duration(i) * time.Minute)}))
	}
	got := s.Sessions()
	if len(got) != 2 || got[0].ID != "b" || got[1].ID != "c" {
		t.Fatalf("sessions after eviction = %+v", got)
	}
	// A partial update keeps the fields it leaves out.
	ev := apply(t, s, msg(t, protocol.TypeSession, "", protocol.Session{ID: "c", Status: "closed"}))
	sess, _ := s.Session("c")
	if len(ev) != 1 || sess.Name != "c" || sess.Status != "closed" || !sess.CreatedAt.Equal(t0.Add(2*time.Minute)) {
		t.Errorf("after update: %+v (events %v)", sess, ev)
	}
	if ev := apply(t, s, msg(t, protocol.TypeSession, "", sess)); len(ev) != 0 {
		t.Errorf("unchanged session republished: %v", ev)
	}
	if o := s.Overview(); o.ActiveSessions != 1 {
		t.Errorf("active sessions = %d, want 1 (c is closed)", o.ActiveSessions)
	}
}

func TestStoreMetricsAndOverview(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	s := NewStore(Limits{})
	s.now = func() time.Time { return now }
	builds := []protocol.BuildInfo{
		{ID: "1", Repo: "a", Status: "success", Duration: "10s", StartedAt: now.Add(-10 * time.Minute)},
		{ID: "2", Repo: "a", Status: "failed", Duration: "20s", StartedAt: now.Add(-30 * time.Minute)},
		{ID: "3", Repo: "b", Status: "running", StartedAt: now.Add(-5 * time.Minute)},
		{ID: "4", Repo: "b", Status: "passed", Duration: "1m", StartedAt: now.Add(-3 * time.Hour)},
		{ID: "5", Repo: "c", Status: "success", Duration: "2m", StartedAt: now.Add(-3 * 24 * time.Hour)},
		{ID: "6", Repo: "c", Status: "success", Duration: "2m", StartedAt: now.Add(-8 * 24 * time.Hour)},
	}
	apply(t, s, msg(t, protocol.TypeBuildList, "", protocol.BuildList{Builds: builds}))
	apply(t, s, msg(t, protocol.TypeSessionList, "", protocol.SessionList{Sessions: []protocol.Session{
		{ID: "s1", Name: "one", Status: "active", CreatedAt: now.Add(-20 * time.Minute)},
		{ID: "s2", Name: "two", Status: "ended", CreatedAt: now.Add(-2 * 24 * time.Hour)},
	}}))
	for i, ago := range []time.Duration{time.Minute, 2 * time.Hour, 2 * 24 * time.Hour, 9 * 24 * time.Hour} {
		s.RecordMessage("s1", protocol.ChatMessage{ID: fmt.Sprint(i), Role: "user", Content: "m", Timestamp: now.Add(-ago)})
	}

	tests := []struct {
		period string
		want   DashboardMetrics
	}{
		{"1h", DashboardMetrics{BuildsTotal: 3, BuildsSuccess: 1, BuildsFailed: 1, AvgBuildTime: "15s", AgentSessions: 1, MessagesTotal: 1, SuccessRate: 0.5}},
		{"24h", DashboardMetrics{BuildsTotal: 4, BuildsSuccess: 2, BuildsFailed: 1, AvgBuildTime: "30s", AgentSessions: 1, MessagesTotal: 2, SuccessRate: 2.0 / 3}},
		{"7d", DashboardMetrics{BuildsTotal: 5, BuildsSuccess: 3, BuildsFailed: 1, AvgBuildTime: "52.5s", AgentSessions: 2, MessagesTotal: 3, SuccessRate: 0.75}},
	}
	for _, tc := range tests {
		if got := s.Metrics(tc.period); got != tc.want {
			t.Errorf("Metrics(%s) = %+v\n want %+v", tc.period, got, tc.want)
		}
	}

	o := s.Overview()
	if o.Repos != 3 || o.Services != 0 || o.ActiveSessions != 1 || o.RecentBuilds != 4 {
		t.Errorf("overview from observation = %+v", o)
	}
	apply(t, s, msg(t, protocol.TypeOverview, "", protocol.Overview{Repos: 7, Services: 2}))
	if o := s.Overview(); o.Repos != 7 || o.Services != 2 {
		t.Errorf("overview after backend report = %+v", o)
	}
}

func TestStoreActivityMergeAndOrder(t *testing.T) {
	s := NewStore(Limits{Activity: 3})
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	e := func(i int) protocol.ActivityEvent {
		return protocol.ActivityEvent{Type: "t", Message: fmt.Sprint(i), Timestamp: t0.Add(time.Duration(i) * time.Second)}
	}
	apply(t, s, msg(t, protocol.TypeActivity, "", e(2)))
	ev := apply(t, s, msg(t, protocol.TypeActivityList, "", protocol.ActivityList{Events: []protocol.ActivityEvent{e(1), e(2), e(3)}}))
	if len(ev) != 2 {
		t.Errorf("merge published %d events, want 2 (e2 is known)", len(ev))
	}
	apply(t, s, msg(t, protocol.TypeActivity, "", e(4)))
	got := s.Activity(0)
	if len(got) != 3 || got[0].Message != "4" || got[2].Message != "2" {
		t.Errorf("activity = %+v; want 4,3,2 (newest first, bounded to 3)", got)
	}
	if got := s.Activity(1); len(got) != 1 || got[0].Message != "4" {
		t.Errorf("activity limit 1 = %+v", got)
	}
}
