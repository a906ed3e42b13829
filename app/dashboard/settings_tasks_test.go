package dashboard

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/app/apptest"
	"github.com/switchboard-hub/switchboard/internal/config"
)

// TestTaskAfterThroughDashboardAPI: Settings › Tasks saves task_after through the Save bar's
// controls: GET /api/settings shows it under "tasks", the review (POST /api/settings/preview)
// shows the diff and writes and applies nothing, and POST /api/settings/tasks saves it. A bad
// value is refused naming the key and the fix, in the review and the save, and nothing is
// written; a good one is written to the config file (comments and other keys kept) and in force
// from the next call: a call running past it comes back as a task handle, and with "off" the same
// call is waited for. "" removes the key (the default); a hand edit of the file, seen by the
// watcher, is put in force too.
func TestTaskAfterThroughDashboardAPI(t *testing.T) {
	dir := realTempDir(t)
	cfgPath := filepath.Join(dir, "config.toml")
	orig := "# my hub\ntoolsets = [\"files\", \"exec\"]\n\n[web]\ntimeout = \"20s\"\n"
	if err := os.WriteFile(cfgPath, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	st := apptest.Stack(t, "", func(c *config.Config) { c.Path = cfgPath })
	srv := httptest.NewServer(NewServer(app.NewController(st, "test"), "dash-token").Handler())
	defer srv.Close()
	post := func(v string) (int, map[string]any) {
		t.Helper()
		return apptest.DashAPI(t, srv.URL, "dash-token", http.MethodPost, "/api/settings/tasks", map[string]any{"taskAfter": v})
	}
	read := func() string { b, _ := os.ReadFile(cfgPath); return string(b) }
	tasks := func() map[string]any {
		t.Helper()
		code, out := apptest.DashAPI(t, srv.URL, "dash-token", http.MethodGet, "/api/settings", nil)
		tasks, _ := out["tasks"].(map[string]any)
		if code != http.StatusOK || tasks == nil {
			t.Fatalf("GET /api/settings: %d %v", code, out)
		}
		return tasks
	}
	preview := func(v string) map[string]any {
		t.Helper()
		code, out := apptest.DashAPI(t, srv.URL, "dash-token", http.MethodPost, "/api/settings/preview", map[string]any{"tasks": map[string]any{"taskAfter": v}})
		secs, _ := out["sections"].([]any)
		if code != http.StatusOK || len(secs) != 1 {
			t.Fatalf("preview %q: %d %v", v, code, out)
		}
		sec, _ := secs[0].(map[string]any)
		if sec["section"] != "tasks" {
			t.Fatalf("preview %q: %v", v, out)
		}
		return sec
	}

	if s := tasks(); s["saved"] != "" || s["running"] != "45s" || s["default"] != "45s" {
		t.Fatalf("GET /api/settings tasks: %v", s)
	}
	for _, bad := range []struct{ in, want string }{
		{"soon", `task_after: "soon" is not a duration`},
		{"500ms", `task_after: 500ms would turn almost every call into a task; write at least "1s"`},
		{"-5s", `task_after: "-5s" is negative`},
		{"48h", "task_after: 48h0m0s is longer than any client waits"},
		// A value that would write another key if it reached the file's text unchecked.
		{"1s\"\nread_only = true", `task_after: "1s\"\nread_only = true" is not a duration`},
	} {
		code, out := post(bad.in)
		if msg, _ := out["error"].(string); code != http.StatusBadRequest || !strings.Contains(msg, bad.want) {
			t.Errorf("task_after %q: %d %v, want 400 with %q", bad.in, code, out, bad.want)
		}
		if sec := preview(bad.in); !strings.Contains(sec["error"].(string), bad.want) {
			t.Errorf("review of task_after %q: %v, want the error %q", bad.in, sec, bad.want)
		}
	}
	if read() != orig {
		t.Fatalf("a refused value was written:\n%s", read())
	}

	cs := apptest.InMemoryClient(t, st, "settings-tasks")
	call := func() *sdk.CallToolResult {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "exec", Arguments: map[string]any{"command": "sh", "args": []string{"-c", "sleep 2.5; echo slept"}}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}

	// The review shows the diff; nothing is written, nothing is put in force.
	if sec := preview("1s"); !strings.Contains(sec["diff"].(string), `+task_after = "1s"`) || sec["applies"] != "now" || sec["error"] != nil {
		t.Errorf("review of 1s: %v", sec)
	}
	if read() != orig || st.Service.TaskAfter() != config.DefaultTaskAfter {
		t.Fatalf("the review wrote or applied: hub %s, file:\n%s", st.Service.TaskAfter(), read())
	}

	code, out := post("1s")
	if code != http.StatusOK || !strings.Contains(out["diff"].(string), `+task_after = "1s"`) {
		t.Fatalf("save 1s: %d %v", code, out)
	}
	if f := read(); !strings.HasPrefix(f, "# my hub\n") || !strings.Contains(f, `task_after = "1s"`) || !strings.Contains(f, "timeout = \"20s\"") {
		t.Errorf("the file after saving:\n%s", f)
	}
	if res := call(); !strings.Contains(toolText(res), "tasks_get") || strings.Contains(toolText(res), "slept") {
		t.Errorf("a 2.5 s call with task_after 1s was not handed back: %q", toolText(res))
	}

	code, out = post("off")
	if code != http.StatusOK || !strings.Contains(read(), `task_after = "0s"`) {
		t.Fatalf("save off: %d %v\n%s", code, out, read())
	}
	if settings, _ := out["settings"].(map[string]any); settings == nil || settings["tasks"] == nil {
		t.Errorf("save off answered no settings: %v", out)
	} else if saved := settings["tasks"].(map[string]any); saved["running"] != "0s" || saved["saved"] != "0s" {
		t.Errorf("the save's settings after off: %v", saved)
	}
	if s := tasks(); s["running"] != "0s" || s["saved"] != "0s" {
		t.Errorf("GET /api/settings after off: %v", s)
	}
	if res := call(); !strings.Contains(toolText(res), "slept") {
		t.Errorf("with task_after off the call was not waited for: %q", toolText(res))
	}

	if code, out = post(""); code != http.StatusOK || strings.Contains(read(), "task_after") || st.Service.TaskAfter() != config.DefaultTaskAfter {
		t.Fatalf("save the default: %d %v\n%s", code, out, read())
	}

	// The three saves are audited as the dashboard's (started, then ok); the reviews and the
	// refused values are not.
	if err := st.Audit.Flush(); err != nil {
		t.Fatal(err)
	}
	audit, _ := os.ReadFile(filepath.Join(st.Config.LogDir(), "audit.log"))
	if n := len(regexp.MustCompile(`"actor":"dashboard".*"tool":"settings_tasks".*"outcome":"ok"`).FindAll(audit, -1)); n != 3 || strings.Count(string(audit), `"tool":"settings_tasks"`) != 6 {
		t.Errorf("%d ok settings_tasks audit lines of %d, want 3 of 6:\n%s", n, strings.Count(string(audit), `"tool":"settings_tasks"`), audit)
	}

	// A hand edit: the watcher's reload puts it in force.
	if err := os.WriteFile(cfgPath, []byte("task_after = \"3s\"\n"+orig), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := st.ReloadConfig(); err != nil {
		t.Fatal(err)
	}
	if st.Service.TaskAfter() != 3*time.Second {
		t.Errorf("after a hand edit to 3s the hub uses %s", st.Service.TaskAfter())
	}
}

// toolText is a result's text content.
func toolText(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
