package mcp

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/switchboard-hub/switchboard/internal/process"
	"github.com/switchboard-hub/switchboard/internal/wshub"
	"github.com/switchboard-hub/switchboard/mcp/channel"
)

// hubWatcher is a dashboard: a real WebSocket client of the hub. Messages read while waiting for
// another one are kept, so the order of waits does not matter.
type hubWatcher struct {
	t       *testing.T
	conn    *websocket.Conn
	backlog []hubFrame
}

type hubFrame struct {
	Type    string         `json:"type"`
	Channel string         `json:"channel"`
	Data    map[string]any `json:"data"`
}

func watchHub(t *testing.T, h *wshub.Hub) *hubWatcher {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	conn, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http")+"/ws", http.Header{"Authorization": {"Bearer " + h.Token()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &hubWatcher{t: t, conn: conn}
}

func (w *hubWatcher) subscribe(channel string) {
	w.t.Helper()
	if err := w.conn.WriteJSON(map[string]string{"type": "subscribe", "channel": channel}); err != nil {
		w.t.Fatal(err)
	}
}

// next returns the data of the first message of msgType on channel whose data satisfies match.
func (w *hubWatcher) next(msgType, channel string, match func(map[string]any) bool) map[string]any {
	w.t.Helper()
	ok := func(m hubFrame) bool {
		return m.Type == msgType && m.Channel == channel && (match == nil || match(m.Data))
	}
	for i, m := range w.backlog {
		if ok(m) {
			w.backlog = slices.Delete(w.backlog, i, i+1)
			return m.Data
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		var m hubFrame
		w.conn.SetReadDeadline(deadline)
		if err := w.conn.ReadJSON(&m); err != nil {
			w.t.Fatalf("waiting for a %s on %s: %v", msgType, channel, err)
		}
		if ok(m) {
			return m.Data
		}
		w.backlog = append(w.backlog, m)
	}
}

func wantKeys(t *testing.T, what string, data map[string]any, keys ...string) {
	t.Helper()
	slices.Sort(keys)
	if got := keysOf(data); !slices.Equal(got, keys) {
		t.Errorf("%s keys = %v, want %v (the dashboard's generated types and reducers read these)", what, got, keys)
	}
}

// The typed payloads keep the wire shape the dashboard reads: every core channel's snapshot and
// events, seen by a real WebSocket client, carry exactly the documented keys.
func TestCoreChannelPayloadShapes(t *testing.T) {
	h := wshub.New(wshub.Options{})
	s := newTestService(t, WithWSHub(h), WithProcessService(process.New(process.Options{})))
	cs := connect(t, s)
	w := watchHub(t, h)

	for _, c := range []string{channel.Sessions, channel.Activity, channel.Processes, channel.Toolsets} {
		w.subscribe(c)
	}
	wantKeys(t, "sessions snapshot", w.next(wshub.TypeSnapshot, channel.Sessions, nil), "sessions")
	wantKeys(t, "activity snapshot", w.next(wshub.TypeSnapshot, channel.Activity, nil), "events")
	wantKeys(t, "processes snapshot", w.next(wshub.TypeSnapshot, channel.Processes, nil), "processes")
	wantKeys(t, "toolsets snapshot", w.next(wshub.TypeSnapshot, channel.Toolsets, nil), "toolsets")

	var started struct {
		ID string `json:"id"`
	}
	mustCall(t, cs, "process_start", map[string]any{"command": "sh", "args": []string{"-c", "read line; echo got $line"}}, &started)
	if started.ID == "" {
		t.Fatal("process_start returned no id")
	}
	ev := w.next(wshub.TypeEvent, channel.Processes, func(d map[string]any) bool { return d["kind"] == "started" })
	wantKeys(t, "processes event", ev, "kind", "process")
	if p, _ := ev["process"].(map[string]any); p["id"] != started.ID || p["status"] != "running" {
		t.Errorf("processes event process = %v", p)
	} else if _, isNumber := p["duration"].(float64); !isNumber {
		t.Errorf("process duration = %#v, want a number (nanoseconds), as the generated type says", p["duration"])
	}
	entry := w.next(wshub.TypeEvent, channel.Activity, func(d map[string]any) bool { return d["tool"] == "process_start" })
	for _, k := range []string{"time", "tool", "session", "transport", "level", "outcome", "durationMs", "args"} {
		if _, ok := entry[k]; !ok {
			t.Errorf("activity event lacks %q: %v", k, entry)
		}
	}

	own := channel.ProcessPrefix + started.ID
	w.subscribe(own)
	snap := w.next(wshub.TypeSnapshot, own, nil)
	wantKeys(t, "process snapshot", snap, "process", "output", "offset")

	mustCall(t, cs, "process_input", map[string]any{"id": started.ID, "input": "typed\n"}, nil)
	out := w.next(wshub.TypeEvent, own, func(d map[string]any) bool { return d["kind"] == "output" })
	wantKeys(t, "process output event", out, "kind", "stream", "data", "offset")
	if out["stream"] != process.StreamStdout || !strings.Contains(out["data"].(string), "got typed") {
		t.Errorf("output event = %v", out)
	}
	status := w.next(wshub.TypeEvent, own, func(d map[string]any) bool { return d["kind"] == "status" })
	wantKeys(t, "process status event", status, "kind", "process")
	exited := w.next(wshub.TypeEvent, channel.Processes, func(d map[string]any) bool { return d["kind"] == "exited" })
	if p, _ := exited["process"].(map[string]any); p["status"] != string(process.StatusExited) {
		t.Errorf("exited event = %v", exited)
	}

	// The payload types round-trip: what the hub sent decodes into the structs the TS is made of.
	raw, _ := json.Marshal(out)
	var typed ProcessOutputEvent
	if err := json.Unmarshal(raw, &typed); err != nil || typed.Kind != "output" || typed.Data == "" {
		t.Errorf("output event as ProcessOutputEvent = %+v, %v", typed, err)
	}
}
