package desktop

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/app/apptest"
	"github.com/switchboard-hub/switchboard/app/dashboard"
	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/internal/policy"
)

func toolsOfEntries(t *testing.T, out map[string]any) []string {
	t.Helper()
	entries, ok := out["entries"].([]any)
	if !ok {
		t.Fatalf("answer has no entries: %v", out)
	}
	var tools []string
	for _, e := range entries {
		tools = append(tools, e.(map[string]any)["tool"].(string))
	}
	return tools
}

// The audit trail through GET /api/audit and the Wails binding: calls of a named client (allowed,
// denied by a rule, failed) are read back from the file newest first, filtered by client, tool
// and decision, paged; a wrong filter is a 400 naming the field.
func TestAuditThroughDashboardAPI(t *testing.T) {
	st := apptest.Stack(t, "", func(c *config.Config) {
		c.Policy = policy.Config{Rules: []policy.RuleSpec{{Tool: "file_write", Args: map[string]string{"path": "secret/*"}, Action: "deny"}}}
	})
	srv := httptest.NewServer(dashboard.NewServer(app.NewController(st, "test"), "dash-token").Handler())
	defer srv.Close()
	api := func(route string) (int, map[string]any) {
		t.Helper()
		return apptest.DashAPI(t, srv.URL, "dash-token", "GET", route, nil)
	}
	if code, out := api("/api/audit"); code != 200 || len(toolsOfEntries(t, out)) != 0 || out["file"] != filepath.Join(st.Config.DataDir, "logs", "audit.log") {
		t.Fatalf("empty trail = %d %v", code, out)
	}

	cs := apptest.ConnectClient(t, st, "logs-client")
	if res := apptest.CallTool(t, cs, "file_write", map[string]any{"path": "notes/a.txt", "content": "a"}); res.IsError {
		t.Fatalf("allowed write: %+v", res.Content[0])
	}
	if res := apptest.CallTool(t, cs, "file_write", map[string]any{"path": "secret/b.txt", "content": "b"}); !res.IsError {
		t.Fatal("the deny rule let the write through")
	}
	if res := apptest.CallTool(t, cs, "file_read", map[string]any{"path": "missing.txt"}); !res.IsError {
		t.Fatal("reading a missing file succeeded")
	}
	other := apptest.ConnectClient(t, st, "other-client")
	apptest.CallTool(t, other, "dir_list", map[string]any{"path": "."})

	code, out := api("/api/audit")
	if got := strings.Join(toolsOfEntries(t, out), " "); code != 200 || got != "dir_list file_read file_write file_write" {
		t.Fatalf("GET /api/audit = %d %q", code, got)
	}
	if code, _ := apptest.DashAPI(t, srv.URL, "", "GET", "/api/audit", nil); code != http.StatusUnauthorized {
		t.Errorf("without the token: %d", code)
	}
	code, out = api("/api/audit?decision=deny")
	entries, _ := out["entries"].([]any)
	if code != 200 || len(entries) != 1 {
		t.Fatalf("decision=deny: %d %v", code, out)
	}
	denied := entries[0].(map[string]any)
	if denied["client"] != "logs-client" || denied["tool"] != "file_write" || denied["outcome"] != "error" ||
		!strings.Contains(denied["rule"].(string), "rule 1") || !strings.Contains(denied["args"].(string), "secret/b.txt") ||
		!strings.Contains(denied["error"].(string), "denied by") {
		t.Errorf("denied entry = %v", denied)
	}
	for route, want := range map[string]string{
		"/api/audit?client=logs-client":             "file_read file_write file_write",
		"/api/audit?client=LOGS-CLIENT&tool=file_w": "file_write file_write",
		"/api/audit?tool=*_list":                    "dir_list",
		"/api/audit?outcome=error":                  "file_read file_write",
		"/api/audit?decision=allow&outcome=ok":      "dir_list file_write",
	} {
		if _, out := api(route); strings.Join(toolsOfEntries(t, out), " ") != want {
			t.Errorf("%s = %v, want %s", route, toolsOfEntries(t, out), want)
		}
	}
	session := denied["session"].(string)
	if !strings.HasPrefix(session, "unix-") {
		t.Errorf("session = %q", session)
	}
	if _, out := api("/api/audit?client=" + session); len(toolsOfEntries(t, out)) != 3 {
		t.Errorf("by session %s: %v", session, toolsOfEntries(t, out))
	}

	// Paging: two by two, the cursor carries on where the last page stopped.
	var pages []string
	route := "/api/audit?limit=2"
	for {
		_, out := api(route)
		pages = append(pages, strings.Join(toolsOfEntries(t, out), ","))
		next, _ := out["next"].(string)
		if next == "" {
			break
		}
		route = "/api/audit?limit=2&before=" + next
	}
	if got := strings.Join(pages, " | "); got != "dir_list,file_read | file_write,file_write" {
		t.Errorf("pages = %s", got)
	}

	for route, want := range map[string]string{
		"/api/audit?decision=maybe": "decision: \"maybe\" is not a policy decision",
		"/api/audit?limit=lots":     "limit: \"lots\" is not a number",
		"/api/audit?limit=5000":     "limit: 5000 is out of range",
		"/api/audit?before=x":       "before: \"x\" is not a cursor",
	} {
		if code, out := api(route); code != 400 || !strings.Contains(fmt.Sprint(out["error"]), want) {
			t.Errorf("%s = %d %v, want 400 %q", route, code, out, want)
		}
	}

	// The Wails binding answers with the same JSON.
	a := newApp(app.NewController(st, "test"), nil)
	page, err := a.Audit(app.AuditQuery{Decision: "deny"})
	if err != nil {
		t.Fatal(err)
	}
	if j := bindingJSON(t, page); fmt.Sprint(toolsOfEntries(t, j)) != "[file_write]" || j["file"] != out["file"] && j["file"] == "" {
		t.Errorf("App.Audit = %v", j)
	}
	if _, err := a.Audit(app.AuditQuery{Outcome: "fine"}); err == nil || !strings.Contains(err.Error(), "outcome:") {
		t.Errorf("App.Audit with a bad outcome: %v", err)
	}
}

// The hub's own log through GET /api/hublog, the Wails binding and the "hublog" channel: the
// start-up lines are there, a level filter keeps warnings, and a warning logged while a dashboard
// follows the channel (a broken policy in the config file) arrives as an event, in the file too.
func TestHubLogThroughDashboardAPIAndChannel(t *testing.T) {
	cfgPath := filepath.Join(t.TempDir(), "config.toml")
	st := apptest.Stack(t, "", func(c *config.Config) { c.Path = cfgPath })
	srv := httptest.NewServer(dashboard.NewServer(app.NewController(st, "test"), "dash-token").Handler())
	defer srv.Close()

	code, out := apptest.DashAPI(t, srv.URL, "dash-token", "GET", "/api/hublog", nil)
	if code != 200 || out["file"] != filepath.Join(st.Config.DataDir, "logs", "hub.log") {
		t.Fatalf("GET /api/hublog = %d %v", code, out)
	}
	text := fmt.Sprint(out["records"])
	for _, want := range []string{"hub started", "listening", "value:unix", "hub: listening"} {
		if !strings.Contains(text, want) {
			t.Errorf("hub log lacks %q: %s", want, text)
		}
	}
	if code, out := apptest.DashAPI(t, srv.URL, "dash-token", "GET", "/api/hublog?level=warn", nil); code != 200 || len(out["records"].([]any)) != 0 {
		t.Errorf("level=warn at start = %d %v", code, out)
	}
	if code, out := apptest.DashAPI(t, srv.URL, "dash-token", "GET", "/api/hublog?level=loud", nil); code != 400 || !strings.Contains(fmt.Sprint(out["error"]), "level:") {
		t.Errorf("level=loud = %d %v", code, out)
	}

	conn, _, err := websocket.DefaultDialer.Dial(st.WSHub.URL(), http.Header{"Authorization": {"Bearer " + st.WSHub.Token()}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.WriteJSON(map[string]string{"type": "subscribe", "channel": app.ChannelHubLog}); err != nil {
		t.Fatal(err)
	}
	type record struct {
		Seq   uint64 `json:"seq"`
		Level string `json:"level"`
		Msg   string `json:"msg"`
		Attrs []struct{ Key, Value string }
	}
	var frame struct {
		Type string `json:"type"`
		Data struct {
			record
			Records []record `json:"records"`
			File    string   `json:"file"`
		} `json:"data"`
	}
	read := func(want string) {
		t.Helper()
		for {
			conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			frame.Data.Records = nil
			if err := conn.ReadJSON(&frame); err != nil {
				t.Fatalf("waiting for the %s: %v", want, err)
			}
			if frame.Type == want {
				return
			}
		}
	}
	read("snapshot")
	if n := len(frame.Data.Records); n == 0 || frame.Data.Records[0].Msg != "hub started" || frame.Data.File == "" {
		t.Fatalf("snapshot = %+v", frame.Data)
	}
	last := frame.Data.Records[len(frame.Data.Records)-1].Seq

	if err := os.WriteFile(cfgPath, []byte("[policy]\ndefault = \"sometimes\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_ = st.ReloadConfig()
	for {
		read("event")
		if frame.Data.Seq <= last {
			continue // published after the snapshot was taken: a repeat
		}
		if frame.Data.Level != "WARN" || !strings.Contains(frame.Data.Msg, "policy") {
			t.Fatalf("event = %+v, want the policy warning", frame.Data.record)
		}
		break
	}
	if code, out := apptest.DashAPI(t, srv.URL, "dash-token", "GET", "/api/hublog?level=warn", nil); code != 200 || !strings.Contains(fmt.Sprint(out["records"]), "sometimes") {
		t.Errorf("level=warn after the warning = %d %v", code, out)
	}
	a := newApp(app.NewController(st, "test"), nil)
	list, err := a.HubLog("warn", 1)
	if err != nil || len(list.Records) != 1 || list.Records[0].Level != "WARN" {
		t.Errorf("App.HubLog = %+v, %v", list, err)
	}
	if _, err := a.HubLog("", 5000); err == nil || !strings.Contains(err.Error(), "limit:") {
		t.Errorf("App.HubLog limit 5000: %v", err)
	}
	b, err := os.ReadFile(st.HubLog.File())
	if err != nil || !strings.Contains(string(b), `msg="hub started"`) || !strings.Contains(string(b), "level=WARN msg=\"policy:") {
		t.Errorf("hub.log = %q, %v", b, err)
	}
}
