package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/app/apptest"
	"github.com/switchboard-hub/switchboard/internal/autostart"
	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/mcp"
)

// settingsConfig is the user's file: a heading, comments on keys, a commented-out setting, two
// rules with a comment between them, a server.
const settingsConfig = `# my switchboard
read_only = false  # tools that write are fine

[tcp]
enabled = false  # only while testing clients
# require_token = true

[policy]
default = "allow"

# deletes need a yes
[[policy.rules]]
tool = "file_delete"
action = "ask"

[[policy.rules]]
tool = "git_push"
action = "deny"  # pushes are mine
`

// TestSettingsThroughDashboardAPI drives the Settings view's API on a real stack whose config
// file is a person's: each save is checked first (a bad address, toolset, glob, action, backend
// or directory is a 400 naming the key, and the file stays byte for byte), then written with its
// comments kept, audited, and applied as far as a running hub can — TCP opens on the new port, a
// toolset goes away for a connected MCP client, a new rule denies the very next call, the hub
// moves to a new workspace, the inference backends are replaced (settings_ml_test.go has
// more), RAG is switched (settings_rag_test.go has more); nothing is pending. The Overview's switches
// save too, and "test a call" decides like `switchboard policy check` without saving.
func TestSettingsThroughDashboardAPI(t *testing.T) {
	home, st, chk := settingsHub(t)
	cfgPath, do := chk.path, chk.do
	read, refused, saved := chk.read, chk.refused, chk.saved

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs := apptest.InMemoryClient(t, st, "settings-test")
	served := func(name string) bool {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range res.Tools {
			if tl.Name == name {
				return true
			}
		}
		return false
	}

	// What the view reads: the file's values with the origins of the rules, and the live state.
	code, s := do(http.MethodGet, "/api/settings", nil)
	if code != 200 || s["path"] != cfgPath || s["exists"] != true {
		t.Fatalf("GET /api/settings: %d %v", code, s)
	}
	rules := s["policy"].(map[string]any)["rules"].([]any)
	if len(rules) != 2 || rules[1].(map[string]any)["tool"] != "git_push" || rules[1].(map[string]any)["origin"] != float64(2) {
		t.Fatalf("rules = %v", rules)
	}
	if pend := s["pending"].([]any); len(pend) != 0 {
		t.Fatalf("pending before any save: %v", pend)
	}

	// Transports: checked, then TCP opens on the new port and the file says so.
	refused("/api/settings/transports", map[string]any{"transports": []map[string]any{{"name": "tcp", "enabled": true, "addr": "localhost"}}}, "tcp.addr: \"localhost\" is not host:port")
	refused("/api/settings/transports", map[string]any{"transports": []map[string]any{{"name": "ws", "enabled": true}}}, "ws: the WebSocket hub always starts")
	port := apptest.FreePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	out := saved("/api/settings/transports", map[string]any{"transports": []map[string]any{{"name": "tcp", "enabled": true, "addr": addr}}})
	if conn, err := net.DialTimeout("tcp", addr, 2*time.Second); err != nil {
		t.Fatalf("TCP saved on %s but it refuses: %v", addr, err)
	} else {
		conn.Close()
	}
	want := strings.Replace(settingsConfig, "enabled = false  # only while testing clients\n", "enabled = true  # only while testing clients\naddr = \""+addr+"\"\n", 1)
	if got := read(); got != want {
		t.Fatalf("after saving TCP:\n%s\nwant:\n%s", got, want)
	}
	if !strings.Contains(fmt.Sprint(out["diff"]), "+addr = \""+addr+"\"") || out["applies"] != "now" {
		t.Fatalf("answer: %v", out)
	}
	if fi, _ := os.Stat(cfgPath); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640 kept", fi.Mode().Perm())
	}
	// A port something else holds: refused by the hub, TCP stays where it was, nothing saved.
	holder, _ := net.Listen("tcp", "127.0.0.1:0")
	defer holder.Close()
	refused("/api/settings/transports", map[string]any{"transports": []map[string]any{{"name": "tcp", "enabled": true, "addr": holder.Addr().String()}}}, "tcp.addr: ")
	if got := st.Transports.Addr(mcp.TransportTCP); got != addr {
		t.Fatalf("after a refused move TCP runs on %q, want %s", got, addr)
	}

	// Toolsets: an unknown one is refused; process off goes away for the client and is saved.
	refused("/api/settings/toolsets", map[string]any{"toolsets": []string{"files", "nope"}}, `toolsets: unknown toolset "nope"`)
	def := mcp.DefaultToolsets(false)
	var noProcess []string
	for _, n := range def {
		if n != "process" {
			noProcess = append(noProcess, n)
		}
	}
	saved("/api/settings/toolsets", map[string]any{"toolsets": noProcess})
	if served("exec") || !served("file_read") {
		t.Fatal("process saved off but exec is still served (or files are not)")
	}
	if !strings.Contains(read(), "read_only = false  # tools that write are fine\ntoolsets = [") || strings.Contains(read(), `"process"`) {
		t.Fatalf("toolsets not saved at the top:\n%s", read())
	}
	// The default set again: the key goes.
	saved("/api/settings/toolsets", map[string]any{"toolsets": def})
	if !served("exec") || strings.Contains(read(), "toolsets") {
		t.Fatalf("default toolsets: exec served %v, file:\n%s", served("exec"), read())
	}

	// Policy: a bad glob or action is refused naming the rule; "test a call" decides against the
	// rules being edited without saving; saved, the new rule denies the next call at once.
	rm := map[string]any{"tool": "exec", "args": map[string]string{"command": "rm"}, "action": "deny"}
	del := map[string]any{"tool": "file_delete", "action": "ask", "origin": 1}
	push := map[string]any{"tool": "git_push", "action": "deny", "origin": 2}
	refused("/api/settings/policy", map[string]any{"default": "allow", "rules": []any{del, map[string]any{"tool": "exec[", "action": "deny"}}}, "policy.rules[2].tool: ")
	refused("/api/settings/policy", map[string]any{"default": "allow", "rules": []any{map[string]any{"tool": "exec", "action": "block"}}}, `policy.rules[1].action: "block" is not an action`)
	edited := map[string]any{"default": "allow", "rules": []any{push, rm, del}, "roots": []string{}}
	code, dec := do(http.MethodPost, "/api/settings/policy/test", map[string]any{"policy": edited, "tool": "exec", "args": map[string]any{"command": "rm", "args": []string{"-rf", "x"}}})
	if code != 200 || dec["decision"] != "deny" || dec["ruleIndex"] != float64(2) || !strings.Contains(fmt.Sprint(dec["rule"]), `rule 2 (tool="exec" args.command="rm" → deny)`) {
		t.Fatalf("test a call: %d %v", code, dec)
	}
	// The same args as a string (as typed in the form); no args; a bad one names the field.
	if code, dec := do(http.MethodPost, "/api/settings/policy/test", map[string]any{"policy": edited, "tool": "exec", "args": `{"command":"ls"}`}); code != 200 || dec["decision"] != "allow" || dec["rule"] != "default policy (allow)" {
		t.Fatalf("ls: %d %v", code, dec)
	}
	refused("/api/settings/policy/test", map[string]any{"policy": edited, "tool": "exec", "args": `[1]`}, "args: not a JSON object")
	refused("/api/settings/policy/test", map[string]any{"policy": edited, "tool": ""}, "tool: required")
	if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "exec", Arguments: map[string]any{"command": "rm", "args": []string{"-f", "nothing-here"}}}); err != nil {
		t.Fatal(err)
	}
	if res, _ := cs.CallTool(ctx, &sdk.CallToolParams{Name: "exec", Arguments: map[string]any{"command": "true"}}); res == nil || res.IsError {
		t.Fatalf("exec true before the save: %+v", res)
	}
	saved("/api/settings/policy", edited)
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "exec", Arguments: map[string]any{"command": "rm", "args": []string{"-f", "nothing-here"}}})
	if err != nil || !res.IsError || !strings.Contains(fmt.Sprint(res.Content[0].(*sdk.TextContent).Text), "denied by rule 2") {
		t.Fatalf("exec rm right after saving the rule: %v %+v", err, res)
	}
	got := read()
	for _, keep := range []string{"# my switchboard\n", "# require_token = true\n", "action = \"deny\"  # pushes are mine\n", "# deletes need a yes\n"} {
		if !strings.Contains(got, keep) {
			t.Errorf("the policy save lost %q:\n%s", keep, got)
		}
	}
	if strings.Index(got, `tool = "git_push"`) > strings.Index(got, `tool = "exec"`) || strings.Index(got, `tool = "exec"`) > strings.Index(got, `tool = "file_delete"`) {
		t.Errorf("rules not in the new order:\n%s", got)
	}

	// Workspace, ML and RAG: checked and saved, and in force now.
	refused("/api/settings/workspace", map[string]any{"workspace": "relative/dir"}, `workspace: "relative/dir" is relative`)
	refused("/api/settings/ml", map[string]any{"backends": []any{map[string]any{"name": "gpu", "kind": "llama", "url": "http://gpu:1"}}}, "ml.backends[1].kind: ")
	refused("/api/settings/ml", map[string]any{"defaultBackend": "gpu"}, `ml.default_backend: "gpu" is not a backend`)
	refused("/api/settings/rag", map[string]any{"backend": "chroma"}, `rag.backend: "chroma" is not a backend`)
	refused("/api/settings/rag", map[string]any{"collection": "no spaces"}, `rag.collection: "no spaces" is not a valid name`)
	// The workspace moves the running hub too (its folder was not given by flag or environment).
	other := realTempDir(t)
	if out := saved("/api/settings/workspace", map[string]any{"workspace": other}); out["applies"] != "now" {
		t.Fatalf("workspace answer: %v", out)
	}
	if got := st.Service.WorkspaceDir(); got != other {
		t.Fatalf("running hub's workspace = %q, want %q", got, other)
	}
	if out := saved("/api/settings/ml", map[string]any{"defaultBackend": "gpu", "backends": []any{map[string]any{"name": "gpu", "kind": "openai", "url": "http://gpu-box:8000/v1"}}}); out["applies"] != "now" {
		t.Fatalf("ml answer: %v", out)
	}
	out = saved("/api/settings/rag", map[string]any{"backend": "embedded", "embedder": "offline", "collection": "notes"})
	pend := fmt.Sprint(out["settings"].(map[string]any)["pending"])
	if pend != "[]" || out["applies"] != "now" || st.RunningRAG().Collection != "notes" {
		t.Fatalf("rag answer: applies %v, pending %s; running %+v", out["applies"], pend, st.RunningRAG())
	}
	if cfg, err := config.Load(cfgPath); err != nil || cfg.Workspace != other || cfg.ML.DefaultBackend != "gpu" || cfg.RAG.Collection != "notes" || len(cfg.Policy.Rules) != 3 {
		t.Fatalf("the saved file loads as %+v, %v", cfg, err)
	}

	// The Overview's switches save too.
	saved("/api/transports/tcp", map[string]any{"enabled": false})
	saved("/api/toolsets/git", map[string]any{"enabled": false})
	if cfg, _ := config.Load(cfgPath); cfg.TCP.Enabled || strings.Contains(strings.Join(cfg.Toolsets, ","), "git") || len(cfg.Toolsets) == 0 {
		t.Fatalf("switches not saved: tcp %v toolsets %v", cfg.TCP.Enabled, cfg.Toolsets)
	}

	// Start at login: the entry appears and goes; a file without [desktop] autostart is left alone.
	before := read()
	saved("/api/settings/autostart", map[string]any{"enabled": true})
	entry, _ := autostart.Path(filepath.Join(home, ".config"))
	if _, err := os.Stat(entry); err != nil || read() != before {
		t.Fatalf("autostart on: entry %v, file changed %v", err, read() != before)
	}
	saved("/api/settings/autostart", map[string]any{"enabled": false})
	if _, err := os.Stat(entry); !os.IsNotExist(err) {
		t.Fatalf("autostart off: entry still there (%v)", err)
	}

	// Every save is audited as the dashboard's, refused ones with their error.
	if err := st.Audit.Flush(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(st.Config.LogDir(), "audit.log"))
	for _, action := range []string{"settings_transports", "settings_toolsets", "settings_policy", "settings_workspace", "settings_ml", "settings_rag", "transport_set", "toolset_set", "autostart_set"} {
		found := false
		for _, ln := range strings.Split(string(b), "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(ln), &m) == nil && m["actor"] == "dashboard" && m["tool"] == action && m["outcome"] == "ok" {
				found = true
			}
		}
		if !found {
			t.Errorf("no ok audit line for %s", action)
		}
	}
	if !strings.Contains(string(b), `"tool":"settings_transports"`) || !strings.Contains(string(b), `"outcome":"error"`) {
		t.Errorf("the refused transport move is not audited as an error")
	}
}

// TestSwitchesSurviveRestart: the Overview's TCP and toolset switches, flipped over the real
// headless dashboard's API, are saved in the user's config file (comments kept) and are still
// flipped after the binary restarts: TCP answers on its port and the process toolset stays off.
func TestSwitchesSurviveRestart(t *testing.T) {
	bin := apptest.Binary(t)
	env := append(apptest.Env(t), "DISPLAY=", "WAYLAND_DISPLAY=", "SWITCHBOARD_DASHBOARD_ADDR=127.0.0.1:0")
	cfgPath := filepath.Join(apptest.EnvValue(env, "XDG_CONFIG_HOME"), "switchboard", "config.toml")
	os.MkdirAll(filepath.Dir(cfgPath), 0o700)
	tcpAddr := fmt.Sprintf("127.0.0.1:%d", apptest.FreePort(t))
	orig := "# kept by hand\n\n[tcp]\naddr = \"" + tcpAddr + "\"  # my port\n"
	if err := os.WriteFile(cfgPath, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	start := func() (string, string, func()) {
		t.Helper()
		h := apptest.StartHeadless(t, bin, env, "", "--workspace", ws)
		return h.URL, h.Token, h.Stop
	}
	url, token, stop := start()
	if conn, err := net.DialTimeout("tcp", tcpAddr, time.Second); err == nil {
		conn.Close()
		t.Fatal("TCP is on before it was switched on")
	}
	for _, c := range []struct{ route, body string }{{"/api/transports/tcp", `{"enabled":true}`}, {"/api/toolsets/process", `{"enabled":false}`}} {
		if code, out := apptest.DashAPI(t, url, token, http.MethodPost, c.route, c.body); code != 200 {
			t.Fatalf("POST %s: %d %v", c.route, code, out)
		}
	}
	stop()
	b, _ := os.ReadFile(cfgPath)
	if !strings.HasPrefix(string(b), "# kept by hand\n\n") || !strings.Contains(string(b), "[tcp]\naddr = \""+tcpAddr+"\"  # my port\nenabled = true\n") || !strings.Contains(string(b), "toolsets = [") {
		t.Fatalf("the config file after the switches:\n%s", b)
	}

	url, token, stop = start()
	defer stop()
	if conn, err := net.DialTimeout("tcp", tcpAddr, 2*time.Second); err != nil {
		t.Fatalf("after the restart TCP is off: %v", err)
	} else {
		conn.Close()
	}
	_, ts := apptest.DashAPI(t, url, token, http.MethodGet, "/api/toolsets", nil)
	for _, x := range ts["toolsets"].([]any) {
		m := x.(map[string]any)
		if want := m["name"] != "process"; m["enabled"] != want { // testEnv configures an IDE URL: ide is in the default set
			t.Errorf("after the restart toolset %v enabled = %v, want %v", m["name"], m["enabled"], want)
		}
	}
}
