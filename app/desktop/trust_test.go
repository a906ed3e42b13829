package desktop

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/app/apptest"
	"github.com/switchboard-hub/switchboard/app/dashboard"
	"github.com/switchboard-hub/switchboard/app/tray"
	"github.com/switchboard-hub/switchboard/internal/audit"
	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/internal/policy"
)

// A call the policy asks about, from a client that cannot answer (no elicitation): the tray
// shows "1 waiting for approval" (opening the dashboard), GET /api/approvals lists it, and
// POST /api/approvals/{id} with the dashboard token lets it run.
func TestApprovalThroughTrayAndDashboardAPI(t *testing.T) {
	st := apptest.Stack(t, "", func(c *config.Config) {
		c.Policy = policy.Config{AskTimeout: "30s", Rules: []policy.RuleSpec{{Tool: "file_write", Action: "ask"}}}
	})
	c, view, shell, ctx := runTray(t, st)
	view.waitFor(t, "initial menu", menuHas(tray.LabelOpenDashboard))

	srv := httptest.NewServer(dashboard.NewServer(app.NewController(st, "test"), "dash-token").Handler())
	defer srv.Close()
	api := func(method, path, token string, body any) (int, map[string]any) {
		t.Helper()
		return apptest.DashAPI(t, srv.URL, token, method, path, body)
	}

	cs := apptest.ConnectClient(t, st, "no-elicitation")
	done := make(chan *sdk.CallToolResult, 1)
	go func() {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "file_write", Arguments: map[string]any{"path": "approved.txt", "content": "yes"}})
		if err != nil {
			res = &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: err.Error()}}}
		}
		done <- res
	}()

	m := view.waitFor(t, "approval in the tray", menuHas("1 waiting for approval"))
	if it := itemWithPrefix(t, m, "1 waiting"); it.Action.Kind != tray.ActionOpenDashboard || !it.Enabled {
		t.Errorf("tray item %+v does not open the dashboard", it)
	}
	trayClick(t, c, view, ctx, "1 waiting")
	shell.waitEvent(t, "show")

	if code, _ := api("GET", "/api/approvals", "", nil); code != http.StatusUnauthorized {
		t.Errorf("GET without token: %d", code)
	}
	code, list := api("GET", "/api/approvals", "dash-token", nil)
	approvals, _ := list["approvals"].([]any)
	if code != 200 || len(approvals) != 1 {
		t.Fatalf("GET /api/approvals = %d %v", code, list)
	}
	a := approvals[0].(map[string]any)
	if a["tool"] != "file_write" || a["client"] != "no-elicitation" || !strings.Contains(a["arguments"].(string), "path: approved.txt") || a["requestedAt"] == "" {
		t.Errorf("approval = %v", a)
	}
	id := a["id"].(string)
	if code, out := api("POST", "/api/approvals/"+id, "dash-token", map[string]string{"decision": "perhaps"}); code != 400 || !strings.Contains(out["error"].(string), "decision") {
		t.Errorf("bad decision: %d %v", code, out)
	}
	if code, _ := api("POST", "/api/approvals/"+id, "wrong", map[string]string{"decision": "allow"}); code != http.StatusUnauthorized {
		t.Errorf("POST with a wrong token: %d", code)
	}
	if code, out := api("POST", "/api/approvals/"+id, "dash-token", map[string]string{"decision": "allow"}); code != 200 || out["decision"] != "allow" {
		t.Fatalf("POST allow: %d %v", code, out)
	}
	res := <-done
	if res.IsError {
		t.Fatalf("approved call failed: %+v", res.Content[0])
	}
	if b, err := os.ReadFile(filepath.Join(st.Config.Workspace, "approved.txt")); err != nil || string(b) != "yes" {
		t.Fatalf("approved write: %v %q", err, b)
	}
	view.waitFor(t, "tray item gone", func(m tray.Menu) bool { return !menuHas("1 waiting")(m) })
	if code, _ := api("POST", "/api/approvals/"+id, "dash-token", map[string]string{"decision": "deny"}); code != 400 {
		t.Errorf("answering twice: %d", code)
	}

	// The tray answers the oldest question itself: Deny refuses the call, audited "by tray".
	entries := make(chan string, 8)
	cancelAudit := st.Audit.OnRecord(func(e audit.Entry) {
		if e.Tool == "file_write" {
			entries <- e.Approval + " by " + e.By
		}
	})
	defer cancelAudit()
	go func() {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "file_write", Arguments: map[string]any{"path": "tray.txt", "content": "no"}})
		if err != nil {
			res = &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: err.Error()}}}
		}
		done <- res
	}()
	view.waitFor(t, "tray deny item", menuHas("Deny no-elicitation: run file_write"))
	trayClick(t, c, view, ctx, "Deny no-elicitation")
	res = <-done
	if !res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "declined on the tray") {
		t.Fatalf("tray-denied call: %+v", res.Content[0])
	}
	if got := <-entries; got != "declined by tray" {
		t.Errorf("audit: %q", got)
	}
	if _, err := os.Stat(filepath.Join(st.Config.Workspace, "tray.txt")); err == nil {
		t.Error("tray-denied write happened")
	}
}
