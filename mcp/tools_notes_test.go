package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/switchboard-hub/switchboard/internal/wshub"
	"github.com/switchboard-hub/switchboard/mcp/tools"
)

func TestMemoryTools(t *testing.T) {
	data, ws := t.TempDir(), t.TempDir()
	s := newTestService(t, WithWorkspaceRoot(ws), WithNotes(data))
	cs := connect(t, s)
	var w tools.MemoryWriteOutput
	mustCall(t, cs, "memory_write", map[string]any{"key": "decisions", "content": "use sqlite"}, &w)
	if w.Size != 10 || w.Deleted || w.Replaced {
		t.Fatalf("write = %+v", w)
	}
	mustCall(t, cs, "memory_write", map[string]any{"key": "todo.later", "content": "x"}, nil)

	// A new hub on the same data dir and workspace (a restart) reads the notes back.
	s2 := newTestService(t, WithWorkspaceRoot(ws), WithNotes(data))
	cs2 := connect(t, s2)
	var r tools.MemoryReadOutput
	mustCall(t, cs2, "memory_read", map[string]any{"key": "decisions"}, &r)
	if r.Content != "use sqlite" || r.Size != 10 || r.Updated == nil {
		t.Fatalf("read after restart = %+v", r)
	}
	mustCall(t, cs2, "memory_read", map[string]any{}, &r)
	if len(r.Notes) != 2 || r.Notes[0].Key != "decisions" || r.Notes[1].Key != "todo.later" || r.Notes[0].Size != 10 {
		t.Fatalf("list = %+v", r.Notes)
	}
	// Another workspace has its own notes.
	s3 := newTestService(t, WithNotes(data))
	r = tools.MemoryReadOutput{}
	mustCall(t, connect(t, s3), "memory_read", map[string]any{}, &r)
	if len(r.Notes) != 0 {
		t.Errorf("another workspace sees %+v", r.Notes)
	}
	mustCall(t, cs2, "memory_write", map[string]any{"key": "decisions", "content": ""}, &w)
	if !w.Deleted || !w.Replaced {
		t.Errorf("delete = %+v", w)
	}
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"memory_write", map[string]any{"key": "../../etc/passwd", "content": "x"}, "key: \"../../etc/passwd\" is not a valid key"},
		{"memory_write", map[string]any{"key": "a/b", "content": "x"}, "key: "},
		{"memory_read", map[string]any{"key": "decisions"}, "key: no note \"decisions\""},
	} {
		if e := call(t, cs2, tc.tool, tc.args, nil); !strings.HasPrefix(e, tc.want) {
			t.Errorf("%s %v: %q, want prefix %q", tc.tool, tc.args, e, tc.want)
		}
	}
}

// Each client session has its own todo list; the dashboard's hub channel "todos" carries a
// snapshot and every change, and a session's list goes away when it disconnects.
func TestTodoToolsAndHubChannel(t *testing.T) {
	h := wshub.New(wshub.Options{})
	s := newTestService(t, WithWSHub(h), WithNotes(t.TempDir()))
	srv := httptest.NewServer(h)
	defer srv.Close()

	a, b := connect(t, s), connect(t, s)
	var out tools.TodoListOutput
	mustCall(t, a, "todo_write", map[string]any{"items": []map[string]any{{"content": "read the code", "status": "completed"}, {"content": "fix the bug", "status": "in_progress"}}}, &out)
	if out.Completed != 1 || out.InProgress != 1 || len(out.Items) != 2 {
		t.Fatalf("todo_write = %+v", out)
	}
	mustCall(t, b, "todo_read", map[string]any{}, &out)
	if len(out.Items) != 0 {
		t.Fatalf("another session sees %+v", out)
	}
	mustCall(t, a, "todo_read", map[string]any{}, &out)
	if len(out.Items) != 2 || out.Items[1].Content != "fix the bug" {
		t.Fatalf("todo_read = %+v", out)
	}
	if e := call(t, a, "todo_write", map[string]any{"items": []map[string]any{{"content": "x", "status": "blocked"}}}, nil); !strings.HasPrefix(e, `items[0].status: unknown status "blocked"; use pending, in_progress or completed`) {
		t.Errorf("unknown status error = %q", e)
	}

	// A dashboard subscribing late gets the snapshot, then live changes.
	conn, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http")+"/ws", http.Header{"Authorization": {"Bearer " + h.Token()}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.WriteMessage(websocket.TextMessage, []byte(`{"type":"subscribe","channel":"todos"}`))
	next := func(want string) json.RawMessage {
		t.Helper()
		for {
			var m struct {
				Type    string          `json:"type"`
				Channel string          `json:"channel"`
				Data    json.RawMessage `json:"data"`
			}
			conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			if err := conn.ReadJSON(&m); err != nil {
				t.Fatalf("waiting for %s: %v", want, err)
			}
			if m.Type == want && m.Channel == "todos" {
				return m.Data
			}
		}
	}
	var snap tools.TodosSnapshot
	json.Unmarshal(next("snapshot"), &snap)
	if len(snap.Lists) != 1 || len(snap.Lists[0].Items) != 2 {
		t.Fatalf("snapshot = %s", mustJSON(snap))
	}
	mustCall(t, b, "todo_write", map[string]any{"items": []map[string]any{{"content": "write docs", "status": "pending"}}}, nil)
	ev := string(next("event"))
	if !strings.Contains(ev, `"kind":"updated"`) || !strings.Contains(ev, "write docs") {
		t.Fatalf("event = %s", ev)
	}
	b.Close()
	ev = string(next("event"))
	if !strings.Contains(ev, `"kind":"removed"`) || !strings.Contains(ev, "write docs") {
		t.Fatalf("disconnect event = %s", ev)
	}
	_ = context.Background()
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }
