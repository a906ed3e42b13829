package app

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/app/tray"
	"github.com/switchboard-hub/switchboard/internal/audit"
	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/internal/policy"
	"github.com/switchboard-hub/switchboard/internal/testutil"
)

// A call the policy asks about, from a client that cannot answer (no elicitation): the tray
// shows "1 waiting for approval" (opening the dashboard), GET /api/approvals lists it, and
// POST /api/approvals/{id} with the dashboard token lets it run.
func TestApprovalThroughTrayAndDashboardAPI(t *testing.T) {
	st := trayTestStack(t, "", func(c *config.Config) {
		c.Policy = policy.Config{AskTimeout: "30s", Rules: []policy.RuleSpec{{Tool: "file_write", Action: "ask"}}}
	})
	c, view, shell, ctx := runTray(t, st)
	view.waitFor(t, "initial menu", menuHas(tray.LabelOpenDashboard))

	srv := httptest.NewServer(newDashboardServer(NewController(st, "test"), "dash-token").Handler())
	defer srv.Close()
	api := func(method, path, token string, body any) (int, map[string]any) {
		t.Helper()
		return dashAPI(t, srv.URL, token, method, path, body)
	}

	ct, srvT := sdk.NewInMemoryTransports()
	if _, err := st.Service.Server().Connect(ctx, srvT, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "no-elicitation", Version: "1"}, &sdk.ClientOptions{Capabilities: &sdk.ClientCapabilities{}}).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
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

// The hub follows the config file: a rule added while it runs denies the next call; a broken
// edit keeps the last good policy and says why.
func TestStackReloadsPolicyFromConfigFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	ws := filepath.Join(dir, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("data_dir = \"" + filepath.Join(dir, "data") + "\"\n")
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Workspace = ws
	st, err := BuildStack(cfg, "test", StackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.CloseBounded()
	ctx := context.Background()
	ct, srvT := sdk.NewInMemoryTransports()
	if _, err := st.Service.Server().Connect(ctx, srvT, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "c", Version: "1"}, &sdk.ClientOptions{Capabilities: &sdk.ClientCapabilities{}}).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	callText := func() string {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "lang_list", Arguments: map[string]any{}})
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError {
			return ""
		}
		return res.Content[0].(*sdk.TextContent).Text
	}
	if msg := callText(); msg != "" {
		t.Fatal(msg)
	}
	// Each reload of the file is announced; the next call after it follows the file.
	reloads := make(chan policy.Status, 16)
	defer st.Policy.Subscribe(func(s policy.Status) {
		select {
		case reloads <- s:
		default:
		}
	})()
	awaitReload := func(what string, done func(policy.Status) bool) {
		t.Helper()
		for !done(testutil.Receive(t, reloads, what)) { // an earlier reload: wait for the next
			continue
		}
	}
	write("data_dir = \"" + filepath.Join(dir, "data") + "\"\n[[policy.rules]]\ntool = \"lang_*\"\naction = \"deny\"\n")
	awaitReload("the hub to reload the new rule", func(s policy.Status) bool { return s.Rules == 1 })
	if msg := callText(); !strings.Contains(msg, `denied by rule 1 (tool="lang_*" → deny)`) {
		t.Errorf("deny message: %s", msg)
	}
	write("[policy]\ndefault = \"sometimes\"\n")
	awaitReload("the hub to notice the broken file", func(s policy.Status) bool { return s.Error != "" })
	if e := st.Policy.Status().Error; !strings.Contains(e, "policy.default") {
		t.Errorf("status error: %s", e)
	}
	if msg := callText(); !strings.Contains(msg, "denied") {
		t.Errorf("broken file must keep the last good policy: %q", msg)
	}
	// doctor reads the same file and names the key at fault.
	if c := policyCheck(mustLoad(t, path)); c.ok || !strings.Contains(c.detail, "policy.default") {
		t.Errorf("doctor: %+v", c)
	}
}

func mustLoad(t *testing.T, path string) config.Config {
	t.Helper()
	c, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestPolicyCheckCommand(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte("[policy]\ndefault = \"allow\"\n[[policy.rules]]\ntool = \"file_delete\"\naction = \"deny\"\n[[policy.rules]]\ntool = \"exec\"\nargs = { command = \"rm\" }\nclient = \"*\"\naction = \"ask\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, error) {
		cmd := NewRootCommand("test")
		var out bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		cmd.SetArgs(append([]string{"--config", path}, args...))
		err := cmd.Execute()
		return out.String(), err
	}
	out, err := run("policy", "check", "exec", "--args", `{"command":"rm","args":["-rf","x"]}`)
	if err != nil || !strings.Contains(out, "decision: ask\n") || !strings.Contains(out, `rule 2 (tool="exec" args.command="rm" client="*" → ask)`) {
		t.Errorf("exec rm: %v\n%s", err, out)
	}
	out, err = run("policy", "check", "file_read", "--args", `{"path":"x"}`)
	if err != nil || !strings.Contains(out, "decision: allow\n") || !strings.Contains(out, "default policy (allow)") {
		t.Errorf("file_read: %v\n%s", err, out)
	}
	if _, err := run("policy", "check", "x", "--args", `[1]`); err == nil || !strings.Contains(err.Error(), "--args") {
		t.Errorf("bad --args: %v", err)
	}
}
