package ide

import (
	"context"
	"fmt"
	"github.com/switchboard-hub/switchboard/internal/agentic"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/switchboard-hub/switchboard/internal/agentic/protocol"
	"github.com/switchboard-hub/switchboard/internal/testutil"
	"github.com/switchboard-hub/switchboard/mcp/ide/agenticsim"
)

var allTools = []string{
	"ide_chat_send", "ide_chat_history", "ide_session_list", "ide_session_create", "ide_plan_status",
	"ide_build_status", "ide_build_list", "ide_build_logs",
	"ide_dashboard_overview", "ide_dashboard_activity", "ide_dashboard_metrics",
}

func TestToolsRegisteredWithAnnotations(t *testing.T) {
	cs := connectTools(t, New(nil, WithLogger(quietLogger())))
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		a := tool.Annotations
		if a == nil || a.OpenWorldHint == nil || !*a.OpenWorldHint {
			t.Errorf("%s: want OpenWorldHint true (the backend is external), got %+v", tool.Name, a)
			continue
		}
		mutating := tool.Name == "ide_chat_send" || tool.Name == "ide_session_create"
		if a.ReadOnlyHint == mutating {
			t.Errorf("%s: ReadOnlyHint = %v", tool.Name, a.ReadOnlyHint)
		}
		// Every input field carries a description.
		schema := roundTrip[map[string]any](t, tool.InputSchema)
		props, _ := schema["properties"].(map[string]any)
		for key, p := range props {
			if d, _ := p.(map[string]any)["description"].(string); d == "" {
				t.Errorf("%s.%s has no description", tool.Name, key)
			}
		}
	}
	slices.Sort(names)
	want := slices.Clone(allTools)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("tools = %v\nwant %v", names, want)
	}
}

// TestToolsAnswerWithBackendData seeds a simulator before the bridge
// connects, so everything a tool returns must have come over the socket.
func TestToolsAnswerWithBackendData(t *testing.T) {
	reply := func(_, message string) string { return "echo: " + message }
	sim := startSim(t, agenticsim.Options{
		Repos: []string{"alpha", "beta"}, Services: 3, Reply: reply,
		ReplyDelay: 2 * time.Millisecond, LineInterval: 2 * time.Millisecond,
	})
	seeded := sim.CreateSession("seeded")
	steps := []protocol.PlanStep{{Name: "analyse", Status: "done"}, {Name: "fix", Status: "running"}}
	if err := sim.SetPlan(seeded.ID, "running", steps); err != nil {
		t.Fatal(err)
	}
	okBuild := sim.StartBuild("alpha", "main", 5, true)
	badBuild := sim.StartBuild("beta", "dev", 3, false)
	testutil.Eventually(t, "seed builds finished", func() bool {
		a, _ := sim.Build(okBuild.ID)
		b, _ := sim.Build(badBuild.ID)
		return a.Status == "success" && b.Status == "failed"
	})
	sim.EmitActivity("deploy", "Deployed alpha to staging")

	pub := newRecordingPublisher()
	sub := startSubsystem(t, pub, sim.URL(), WithWorkspaceRoot("/work/space"))
	testutil.Eventually(t, "bridge connected", func() bool { return sub.BridgeStatus().Connected })
	cs := connectTools(t, sub)

	// hello carries the workspace root.
	testutil.Eventually(t, "hello received", func() bool {
		return slices.ContainsFunc(sim.Requests(), func(m protocol.Message) bool { return m.Type == protocol.TypeHello })
	})
	for _, m := range sim.Requests() {
		if m.Type == protocol.TypeHello {
			var hello protocol.HelloRequest
			if err := m.Decode(&hello); err != nil || hello.WorkspaceRoot != "/work/space" || hello.Client != "switchboard" {
				t.Errorf("hello = %+v (%v)", hello, err)
			}
		}
	}

	t.Run("session_list", func(t *testing.T) {
		out := callTool[SessionListOutput](t, cs, "ide_session_list", nil)
		if len(out.Sessions) != 1 || out.Sessions[0].ID != seeded.ID || out.Sessions[0].Name != "seeded" ||
			out.Sessions[0].Status != "active" || !out.Sessions[0].CreatedAt.Equal(seeded.CreatedAt) {
			t.Errorf("sessions = %+v; want %+v", out.Sessions, seeded)
		}
	})

	var created Session
	t.Run("session_create", func(t *testing.T) {
		out := callTool[SessionCreateOutput](t, cs, "ide_session_create", map[string]any{"name": "new work"})
		created = out.Session
		held, _, ok := sim.Session(created.ID)
		if !ok || created.ID == "" || created.Status != "active" || held.Name != "new work" {
			t.Errorf("created = %+v; simulator holds %+v (%v)", created, held, ok)
		}
		if list := callTool[SessionListOutput](t, cs, "ide_session_list", nil); len(list.Sessions) != 2 {
			t.Errorf("session list after create = %+v", list.Sessions)
		}
	})

	t.Run("plan_status", func(t *testing.T) {
		out := callTool[PlanStatusOutput](t, cs, "ide_plan_status", map[string]any{"sessionId": seeded.ID})
		if out.SessionID != seeded.ID || out.Status != "running" || !slices.Equal(out.Steps, steps) {
			t.Errorf("plan = %+v", out)
		}
	})

	t.Run("build_status", func(t *testing.T) {
		out := callTool[BuildStatusOutput](t, cs, "ide_build_status", map[string]any{"buildId": okBuild.ID})
		want, _ := sim.Build(okBuild.ID)
		if out.Build != roundTrip[BuildInfo](t, want) || out.Build.Duration == "" {
			t.Errorf("build = %+v; want %+v", out.Build, want)
		}
	})

	t.Run("build_list", func(t *testing.T) {
		all := callTool[BuildListOutput](t, cs, "ide_build_list", nil)
		if len(all.Builds) != 2 || all.Builds[0].ID != badBuild.ID {
			t.Errorf("builds = %+v; want both, newest (%s) first", all.Builds, badBuild.ID)
		}
		beta := callTool[BuildListOutput](t, cs, "ide_build_list", map[string]any{"repo": "beta"})
		if len(beta.Builds) != 1 || beta.Builds[0].Status != "failed" || beta.Builds[0].Branch != "dev" {
			t.Errorf("beta builds = %+v", beta.Builds)
		}
		one := callTool[BuildListOutput](t, cs, "ide_build_list", map[string]any{"limit": 1})
		if len(one.Builds) != 1 {
			t.Errorf("limit 1 = %+v", one.Builds)
		}
	})

	t.Run("build_logs", func(t *testing.T) {
		// The bridge connected after the build ran: these lines can only come
		// from the build_logs answer.
		want := sim.BuildLines(okBuild.ID)
		out := callTool[BuildLogsOutput](t, cs, "ide_build_logs", map[string]any{"buildId": okBuild.ID})
		if out.BuildID != okBuild.ID || !slices.Equal(out.Lines, want) || len(want) != 5 {
			t.Errorf("logs = %q; want %q", out.Lines, want)
		}
		tail := callTool[BuildLogsOutput](t, cs, "ide_build_logs", map[string]any{"buildId": okBuild.ID, "tail": 2})
		if !slices.Equal(tail.Lines, want[3:]) {
			t.Errorf("tail 2 = %q", tail.Lines)
		}
	})

	t.Run("dashboard_overview", func(t *testing.T) {
		out := callTool[DashboardOverviewOutput](t, cs, "ide_dashboard_overview", nil)
		want := agentic.DashboardOverview{Repos: 2, Services: 3, ActiveSessions: 2, RecentBuilds: 2, BridgeOnline: true}
		if out.Overview != want {
			t.Errorf("overview = %+v; want %+v", out.Overview, want)
		}
	})

	t.Run("dashboard_activity", func(t *testing.T) {
		out := callTool[DashboardActivityOutput](t, cs, "ide_dashboard_activity", map[string]any{"limit": 100})
		if len(out.Events) < 5 || out.Events[0].Timestamp.Before(out.Events[len(out.Events)-1].Timestamp) {
			t.Fatalf("activity = %+v; want several events, newest first", out.Events)
		}
		if !slices.ContainsFunc(out.Events, func(e ActivityEvent) bool {
			return e.Type == "deploy" && e.Message == "Deployed alpha to staging"
		}) {
			t.Errorf("activity lacks the emitted deploy event: %+v", out.Events)
		}
	})

	t.Run("dashboard_metrics", func(t *testing.T) {
		out := callTool[DashboardMetricsOutput](t, cs, "ide_dashboard_metrics", map[string]any{"period": "1h"})
		m := out.Metrics
		if out.Period != "1h" || m.BuildsTotal != 2 || m.BuildsSuccess != 1 || m.BuildsFailed != 1 ||
			m.SuccessRate != 0.5 || m.AgentSessions != 2 || m.AvgBuildTime == "0s" {
			t.Errorf("metrics = %+v", out)
		}
		if def := callTool[DashboardMetricsOutput](t, cs, "ide_dashboard_metrics", nil); def.Period != "24h" {
			t.Errorf("default period = %q", def.Period)
		}
		msg := callToolError(t, cs, "ide_dashboard_metrics", map[string]any{"period": "2h"})
		if !strings.Contains(msg, "period") || !strings.Contains(msg, `"7d"`) {
			t.Errorf("bad period error = %q", msg)
		}
	})

	t.Run("chat", func(t *testing.T) {
		out := callTool[ChatSendOutput](t, cs, "ide_chat_send", map[string]any{"sessionId": seeded.ID, "message": "please fix"})
		if !out.Sent || out.SessionID != seeded.ID || time.Since(out.Timestamp) > time.Minute {
			t.Errorf("chat_send = %+v", out)
		}
		var hist ChatHistoryOutput
		testutil.Eventually(t, "streamed reply complete", func() bool {
			hist = callTool[ChatHistoryOutput](t, cs, "ide_chat_history", map[string]any{"sessionId": seeded.ID})
			return len(hist.Messages) == 2 && hist.Messages[1].Content == "echo: please fix"
		})
		if hist.Messages[0].Role != "user" || hist.Messages[0].Content != "please fix" || hist.Messages[1].Role != "assistant" {
			t.Errorf("history = %+v", hist.Messages)
		}
		if _, msgs, _ := sim.Session(seeded.ID); len(msgs) != 2 {
			t.Errorf("simulator history = %+v", msgs)
		}
		last := callTool[ChatHistoryOutput](t, cs, "ide_chat_history", map[string]any{"sessionId": seeded.ID, "limit": 1})
		if len(last.Messages) != 1 || last.Messages[0].Role != "assistant" {
			t.Errorf("history limit 1 = %+v", last.Messages)
		}
		testutil.Eventually(t, "plan completed", func() bool {
			return callTool[PlanStatusOutput](t, cs, "ide_plan_status", map[string]any{"sessionId": seeded.ID}).Status == "completed"
		})

		// A second, headless bridge that never saw the chat gets it from the backend.
		other := startSubsystem(t, nil, sim.URL())
		testutil.Eventually(t, "second bridge connected", func() bool { return other.BridgeStatus().Connected })
		ocs := connectTools(t, other)
		got := callTool[ChatHistoryOutput](t, ocs, "ide_chat_history", map[string]any{"sessionId": seeded.ID})
		if len(got.Messages) != 2 || got.Messages[0].Content != "please fix" || got.Messages[1].Content != "echo: please fix" {
			t.Errorf("history via second bridge = %+v", got.Messages)
		}
	})

	t.Run("errors name the field and the fix", func(t *testing.T) {
		tests := []struct {
			tool string
			args map[string]any
			want []string
		}{
			{"ide_chat_send", map[string]any{"sessionId": "nope", "message": "hi"}, []string{`sessionId "nope"`, "no session", "ide_session_list"}},
			{"ide_chat_send", map[string]any{"sessionId": seeded.ID, "message": "  "}, []string{"message", "empty"}},
			{"ide_session_create", map[string]any{"name": ""}, []string{"name", "required"}},
			{"ide_build_status", map[string]any{"buildId": "build-999"}, []string{`buildId "build-999"`, "ide_build_list"}},
			{"ide_build_logs", map[string]any{"buildId": okBuild.ID, "tail": -1}, []string{"tail", "negative"}},
			{"ide_chat_history", map[string]any{"sessionId": "nope"}, []string{`sessionId "nope"`, "ide_session_list"}},
			{"ide_plan_status", map[string]any{"sessionId": ""}, []string{"sessionId", "required"}},
			{"ide_dashboard_activity", map[string]any{"limit": -3}, []string{"limit", "negative"}},
			// The shared registration helper's errors, not go-sdk's schema validator's
			// ("validating \"arguments\": validating root: ...").
			{"ide_chat_history", map[string]any{}, []string{"sessionId: required"}},
			{"ide_chat_history", map[string]any{"sessionId": 7}, []string{"sessionId: want a string, got a JSON number"}},
		}
		for _, tc := range tests {
			msg := callToolError(t, cs, tc.tool, tc.args)
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("%s %v: error %q lacks %q", tc.tool, tc.args, msg, w)
				}
			}
		}
	})

	t.Run("hub channels", func(t *testing.T) {
		checkHubFeed(t, pub, seeded.ID, created.ID, okBuild.ID)
	})
}

// checkHubFeed asserts that what the bridge received reached the hub
// channels and that every channel has a snapshot of the documented shape.
func checkHubFeed(t *testing.T, pub *recordingPublisher, sessionID, createdID, buildID string) {
	kinds := func(channel string) []string {
		var out []string
		for _, e := range pub.on(channel) {
			if e.Type != "event" {
				t.Errorf("%s: published type %q", channel, e.Type)
			}
			out = append(out, fmt.Sprint(e.Data["kind"]))
		}
		return out
	}
	chat := kinds("chat:" + sessionID)
	if len(chat) < 3 || chat[0] != "message" || !slices.Contains(chat, "delta") || chat[len(chat)-1] != "message" {
		t.Errorf("chat:%s kinds = %v; want message, delta…, message", sessionID, chat)
	}
	if got := kinds(agentic.ChannelSessions); !slices.Contains(got, "session") {
		t.Errorf("ide:sessions kinds = %v", got)
	}
	if got := kinds(agentic.ChannelBuilds); !slices.Contains(got, "build") {
		t.Errorf("ide:builds kinds = %v", got)
	}
	if got := kinds(agentic.PrefixBuild + buildID); !slices.Contains(got, "log") {
		t.Errorf("build:%s kinds = %v", buildID, got)
	}
	if got := kinds(agentic.ChannelActivity); !slices.Contains(got, "activity") {
		t.Errorf("ide:activity kinds = %v", got)
	}
	plans := pub.on(agentic.PrefixPlan + sessionID)
	if len(plans) == 0 || plans[len(plans)-1].Data["status"] != "completed" || plans[len(plans)-1].Data["sessionId"] != sessionID {
		t.Errorf("plan:%s events = %v", sessionID, plans)
	}

	snapshots := []struct {
		channel string
		check   func(map[string]any) bool
	}{
		{agentic.ChannelBridge, func(d map[string]any) bool { return d["connected"] == true }},
		{agentic.ChannelSessions, func(d map[string]any) bool { return len(d["sessions"].([]any)) == 2 }},
		{agentic.PrefixChat + sessionID, func(d map[string]any) bool {
			return d["sessionId"] == sessionID && len(d["messages"].([]any)) == 2
		}},
		{agentic.PrefixPlan + sessionID, func(d map[string]any) bool { return d["status"] == "completed" && len(d["steps"].([]any)) == 3 }},
		{agentic.PrefixPlan + createdID, func(d map[string]any) bool { return d["sessionId"] == createdID }},
		{agentic.ChannelBuilds, func(d map[string]any) bool { return len(d["builds"].([]any)) == 2 }},
		{agentic.PrefixBuild + buildID, func(d map[string]any) bool {
			return d["build"].(map[string]any)["id"] == buildID && len(d["lines"].([]any)) == 5
		}},
		{agentic.ChannelActivity, func(d map[string]any) bool { return len(d["events"].([]any)) >= 5 }},
	}
	for _, s := range snapshots {
		data, ok := pub.snapshot(t, s.channel)
		if !ok || !s.check(data) {
			t.Errorf("snapshot %s = %v (ok %v)", s.channel, data, ok)
		}
	}
	if _, ok := pub.snapshot(t, agentic.PrefixBuild+"unknown"); ok {
		t.Error("snapshot for an unknown build should be absent")
	}
}

func TestPassthroughReachesHubChannel(t *testing.T) {
	sim := startSim(t, agenticsim.Options{})
	pub := newRecordingPublisher()
	sub := startSubsystem(t, pub, sim.URL())
	testutil.Eventually(t, "connected", func() bool { return sub.BridgeStatus().Connected })

	custom, _ := protocol.New("deploy_status", "", map[string]any{"env": "staging"})
	sim.Broadcast(custom)
	custom.Channel = "deploys"
	sim.Broadcast(custom)
	testutil.Eventually(t, "both passthrough events", func() bool {
		return len(pub.on("ide:deploy_status")) == 1 && len(pub.on("deploys")) == 1
	})
	if d := pub.on("deploys")[0].Data; d["env"] != "staging" {
		t.Errorf("passthrough data = %v", d)
	}
}

func TestChatSendWhileDisconnected(t *testing.T) {
	// Nothing listens on port 1: the bridge stays disconnected.
	sub := startSubsystem(t, nil, "ws://127.0.0.1:1/ws")
	testutil.Eventually(t, "a failed dial", func() bool { return sub.BridgeStatus().Attempts > 0 })
	cs := connectTools(t, sub)

	msg := callToolError(t, cs, "ide_chat_send", map[string]any{"sessionId": "s1", "message": "hello?"})
	for _, want := range []string{"not connected", "ws://127.0.0.1:1/ws", "not sent", "bridgeOnline", "last error"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if h := sub.Store().History("s1", 0); len(h) != 0 {
		t.Errorf("unsent message recorded: %+v", h)
	}
	if msg := callToolError(t, cs, "ide_session_create", map[string]any{"name": "x"}); !strings.Contains(msg, "not connected") {
		t.Errorf("session_create offline error = %q", msg)
	}
	// Read tools answer from the store without waiting.
	start := time.Now()
	ov := callTool[DashboardOverviewOutput](t, cs, "ide_dashboard_overview", nil)
	if ov.Overview.BridgeOnline || time.Since(start) > time.Second {
		t.Errorf("overview offline = %+v after %v", ov, time.Since(start))
	}
	if msg := callToolError(t, cs, "ide_build_status", map[string]any{"buildId": "b1"}); !strings.Contains(msg, "offline") {
		t.Errorf("build_status offline error = %q", msg)
	}
}

func TestSessionCreatePlaceholderWhenBackendIsSlow(t *testing.T) {
	silent := startSilentBackend(t)
	sub2 := startSubsystem(t, nil, silent, WithResponseWait(50*time.Millisecond))
	testutil.Eventually(t, "connected to silent backend", func() bool { return sub2.BridgeStatus().Connected })

	sess, err := sub2.CreateSession(context.Background(), "slow one")
	if err != nil {
		t.Fatal(err)
	}
	if sess.ID != "" || sess.Status != "creating" || sess.Name != "slow one" || sess.CreatedAt.IsZero() {
		t.Errorf("placeholder = %+v; want status creating and no id", sess)
	}
	// chat_send is sent even without an answer, and recorded.
	out, err := sub2.SendChat(context.Background(), "s-x", "anyone?")
	if err != nil || !out.Sent {
		t.Fatalf("SendChat to a silent backend = %+v, %v", out, err)
	}
	if h := sub2.Store().History("s-x", 0); len(h) != 1 || h[0].Role != "user" || h[0].Content != "anyone?" {
		t.Errorf("history = %+v", h)
	}
}

// TestBackendRestartMidStream stops the backend while a reply streams and a
// build logs, restarts it on the same address, and checks that the bridge
// kept what it had, reconnects, and completes both without gaps or repeats.
func TestBackendRestartMidStream(t *testing.T) {
	words := make([]string, 40)
	for i := range words {
		words[i] = fmt.Sprintf("w%02d", i)
	}
	longReply := strings.Join(words, " ")
	sim := startSim(t, agenticsim.Options{
		Reply:        func(_, _ string) string { return longReply },
		ReplyDelay:   15 * time.Millisecond,
		LineInterval: 15 * time.Millisecond,
	})
	pub := newRecordingPublisher()
	sub := startSubsystem(t, pub, sim.URL())
	testutil.Eventually(t, "connected", func() bool { return sub.BridgeStatus().Connected })
	cs := connectTools(t, sub)

	sess := callTool[SessionCreateOutput](t, cs, "ide_session_create", map[string]any{"name": "restart"}).Session
	callTool[ChatSendOutput](t, cs, "ide_chat_send", map[string]any{"sessionId": sess.ID, "message": "go"})
	build := sim.StartBuild("alpha", "main", 40, true)

	store := sub.Store()
	testutil.Eventually(t, "reply and build under way", func() bool {
		h := store.History(sess.ID, 0)
		_, total, _ := store.Logs(build.ID, 0)
		return len(h) == 2 && len(h[1].Content) > 0 && total >= 5
	})
	sim.Stop()
	testutil.Eventually(t, "bridge notices the drop", func() bool { return !sub.BridgeStatus().Connected })

	// Earlier state is kept and served while the backend is away.
	partial := store.History(sess.ID, 0)[1].Content
	if partial == longReply || !strings.HasPrefix(longReply, partial) {
		t.Fatalf("partial reply %q should be a strict prefix of the full reply", partial)
	}
	hist := callTool[ChatHistoryOutput](t, cs, "ide_chat_history", map[string]any{"sessionId": sess.ID})
	if len(hist.Messages) != 2 || hist.Messages[0].Content != "go" || hist.Messages[1].Content != partial {
		t.Errorf("history while down = %+v", hist.Messages)
	}
	logsDown := callTool[BuildLogsOutput](t, cs, "ide_build_logs", map[string]any{"buildId": build.ID})
	if len(logsDown.Lines) < 5 || !slices.Equal(logsDown.Lines, sim.BuildLines(build.ID)[:len(logsDown.Lines)]) {
		t.Errorf("logs while down = %q", logsDown.Lines)
	}
	if sessions := callTool[SessionListOutput](t, cs, "ide_session_list", nil); len(sessions.Sessions) != 1 {
		t.Errorf("sessions while down = %+v", sessions.Sessions)
	}
	callToolError(t, cs, "ide_chat_send", map[string]any{"sessionId": sess.ID, "message": "still there?"})

	// The backend keeps working while its socket is down; then it comes back.
	testutil.Eventually(t, "simulator finished the build offline", func() bool {
		b, _ := sim.Build(build.ID)
		return b.Status == "success"
	})
	if _, err := sim.Start(addrOf(t, sim.URL())); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, "bridge reconnected", func() bool { return sub.BridgeStatus().Connected })
	// hello's state sync brings the final build status without being asked.
	testutil.Eventually(t, "build status synced", func() bool {
		b, _ := store.Build(build.ID)
		return b.Status == "success"
	})

	logs := callTool[BuildLogsOutput](t, cs, "ide_build_logs", map[string]any{"buildId": build.ID})
	if want := sim.BuildLines(build.ID); !slices.Equal(logs.Lines, want) {
		t.Errorf("logs after restart have gaps or repeats:\n got %d lines %q\nwant %d lines", len(logs.Lines), logs.Lines, len(want))
	}
	hist = callTool[ChatHistoryOutput](t, cs, "ide_chat_history", map[string]any{"sessionId": sess.ID})
	if len(hist.Messages) != 2 || hist.Messages[1].Content != longReply {
		t.Errorf("history after restart = %+v; want the completed reply", hist.Messages)
	}

	// And the session carries on.
	callTool[ChatSendOutput](t, cs, "ide_chat_send", map[string]any{"sessionId": sess.ID, "message": "again"})
	testutil.Eventually(t, "second reply", func() bool {
		h := store.History(sess.ID, 0)
		return len(h) == 4 && h[3].Content == longReply
	})
	if h := store.History(sess.ID, 0); h[2].Content != "again" || h[2].Role != "user" {
		t.Errorf("history = %+v", h)
	}
}

func addrOf(t *testing.T, wsURL string) string {
	t.Helper()
	return strings.TrimSuffix(strings.TrimPrefix(wsURL, "ws://"), "/ws")
}

// startSilentBackend accepts WebSocket connections, reads everything and
// never answers: a backend too busy to confirm within ResponseWait.
func startSilentBackend(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer conn.Close()
		for {
			if _, _, err := conn.ReadMessage(); err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http") + "/ws"
}
