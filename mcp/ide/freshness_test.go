package ide

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/switchboard-hub/switchboard/internal/agentic/protocol"
	"github.com/switchboard-hub/switchboard/internal/testutil"
	"github.com/switchboard-hub/switchboard/mcp/ide/agenticsim"
)

// Read tools say when their answer is the stored state rather than a fresh one: offline bridge.
func TestReadToolsSayWhenStale(t *testing.T) {
	sub := startSubsystem(t, nil, "ws://127.0.0.1:1/ws")
	testutil.Eventually(t, "a failed dial", func() bool { return sub.BridgeStatus().Attempts > 0 })
	cs := connectTools(t, sub)

	list := callTool[SessionListOutput](t, cs, "ide_session_list", nil)
	if list.BridgeOnline || !strings.Contains(list.Warning, "offline") || !strings.Contains(list.Warning, "ws://127.0.0.1:1/ws") {
		t.Errorf("session_list offline = %+v", list)
	}
	builds := callTool[BuildListOutput](t, cs, "ide_build_list", nil)
	if builds.BridgeOnline || !strings.Contains(builds.Warning, "state last received") {
		t.Errorf("build_list offline = %+v", builds)
	}
	ov := callTool[DashboardOverviewOutput](t, cs, "ide_dashboard_overview", nil)
	if ov.BridgeOnline || ov.Overview.BridgeOnline || ov.Warning == "" {
		t.Errorf("overview offline = %+v", ov)
	}
	for _, name := range []string{"ide_dashboard_activity", "ide_dashboard_metrics"} {
		res := callTool[map[string]any](t, cs, name, nil)
		if res["bridgeOnline"] != false || !strings.Contains(res["warning"].(string), "offline") {
			t.Errorf("%s offline = %v", name, res)
		}
	}

	// Online against a backend that never answers: online, but the refresh timed out, said so.
	silent := startSilentBackend(t)
	sub2 := startSubsystem(t, nil, silent, WithResponseWait(50*time.Millisecond))
	testutil.Eventually(t, "connected to silent backend", func() bool { return sub2.BridgeStatus().Connected })
	cs2 := connectTools(t, sub2)
	list = callTool[SessionListOutput](t, cs2, "ide_session_list", nil)
	if !list.BridgeOnline || !strings.Contains(list.Warning, "did not answer") {
		t.Errorf("session_list with a silent backend = %+v", list)
	}
}

// A fresh answer carries bridgeOnline and no warning.
func TestReadToolsFreshAnswer(t *testing.T) {
	sim := startSim(t, agenticsim.Options{})
	sub := startSubsystem(t, nil, sim.URL())
	testutil.Eventually(t, "connected", func() bool { return sub.BridgeStatus().Connected })
	cs := connectTools(t, sub)
	list := callTool[SessionListOutput](t, cs, "ide_session_list", nil)
	if !list.BridgeOnline || list.Warning != "" {
		t.Errorf("session_list online = %+v", list)
	}
}

// A backend answering session_create with something that is not a session is an error naming what
// came back, not a "creating" placeholder.
func TestSessionCreateUndecodableAnswerIsAnError(t *testing.T) {
	for name, reply := range map[string]func(req protocol.Message) protocol.Message{
		"bad data": func(req protocol.Message) protocol.Message {
			return protocol.Message{Type: protocol.TypeSession, RequestID: req.RequestID, Data: json.RawMessage(`"not a session"`), Timestamp: time.Now()}
		},
		"wrong type": func(req protocol.Message) protocol.Message {
			return protocol.Message{Type: protocol.TypeBuild, RequestID: req.RequestID, Data: json.RawMessage(`{}`), Timestamp: time.Now()}
		},
		"no id": func(req protocol.Message) protocol.Message {
			return protocol.Message{Type: protocol.TypeSession, RequestID: req.RequestID, Data: json.RawMessage(`{"name":"x"}`), Timestamp: time.Now()}
		},
	} {
		t.Run(name, func(t *testing.T) {
			url := startAnsweringBackend(t, protocol.TypeSessionCreate, reply)
			sub := startSubsystem(t, nil, url)
			testutil.Eventually(t, "connected", func() bool { return sub.BridgeStatus().Connected })
			cs := connectTools(t, sub)
			msg := callToolError(t, cs, "ide_session_create", map[string]any{"name": "x"})
			if !strings.HasPrefix(msg, `name "x": `) || !strings.Contains(msg, "ide_session_list") || strings.Contains(msg, "creating") {
				t.Errorf("error = %q", msg)
			}
		})
	}
}

// startAnsweringBackend accepts bridge connections and answers messages of type msgType with reply.
func startAnsweringBackend(t *testing.T, msgType string, reply func(protocol.Message) protocol.Message) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer conn.Close()
		for {
			var m protocol.Message
			if err := conn.ReadJSON(&m); err != nil {
				return
			}
			if m.Type == msgType {
				if err := conn.WriteJSON(reply(m)); err != nil {
					return
				}
			}
		}
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http") + "/ws"
}

// An answer the store cannot apply (a malformed session list) is not silently ignored: the read
// tool says its data is the state last received, and why.
func TestUnreadableAnswerIsSurfaced(t *testing.T) {
	url := startAnsweringBackend(t, protocol.TypeSessionList, func(req protocol.Message) protocol.Message {
		return protocol.Message{Type: protocol.TypeSessionList, RequestID: req.RequestID, Data: json.RawMessage(`{"sessions":"not a list"}`), Timestamp: time.Now()}
	})
	sub := startSubsystem(t, nil, url)
	testutil.Eventually(t, "connected", func() bool { return sub.BridgeStatus().Connected })
	cs := connectTools(t, sub)
	list := callTool[SessionListOutput](t, cs, "ide_session_list", nil)
	if !list.BridgeOnline || !strings.Contains(list.Warning, "could not be read") || !strings.Contains(list.Warning, "state last received") {
		t.Fatalf("session_list with an unreadable answer = %+v", list)
	}
}
