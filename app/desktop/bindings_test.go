package desktop

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/app/apptest"
	"github.com/switchboard-hub/switchboard/internal/process"
	"github.com/switchboard-hub/switchboard/internal/testutil"
	"github.com/switchboard-hub/switchboard/internal/upstream"
	"github.com/switchboard-hub/switchboard/mcp"
)

// TestAppMirrorsFrontendBindings keeps the bound struct and the frontend in step: every method
// the dashboard calls on window.go.desktop.App (interface WailsApp, generated from the control table
// into frontend/src/lib/generated/control.ts) exists on App with the same number of arguments,
// and App exposes nothing else — which catches a binding written by hand (Bootstrap,
// PickProject) that drifted from its declaration, and a method added to App outside the table.
func TestAppMirrorsFrontendBindings(t *testing.T) {
	src, err := os.ReadFile("../../frontend/src/lib/generated/control.ts")
	if err != nil {
		t.Fatalf("read the frontend's binding interface: %v", err)
	}
	body := regexp.MustCompile(`(?s)export interface WailsApp \{(.*?)\n\}`).FindSubmatch(src)
	if body == nil {
		t.Fatal("frontend/src/lib/generated/control.ts has no `export interface WailsApp { ... }`; run `go run ./build/gencontrols`")
	}
	want := map[string]int{}
	for _, m := range regexp.MustCompile(`(?m)^\s*(\w+)\(([^)]*)\)`).FindAllSubmatch(body[1], -1) {
		args := strings.TrimSpace(string(m[2]))
		n := 0
		if args != "" {
			n = strings.Count(args, ",") + 1
		}
		want[string(m[1])] = n
	}
	if len(want) == 0 {
		t.Fatal("no methods found in WailsApp")
	}
	got := map[string]int{}
	typ := reflect.TypeOf(&App{})
	for i := 0; i < typ.NumMethod(); i++ {
		m := typ.Method(i)
		got[m.Name] = m.Type.NumIn() - 1 // minus the receiver
	}
	names := func(m map[string]int) []string {
		var out []string
		for k, v := range m {
			out = append(out, fmt.Sprintf("%s/%d", k, v))
		}
		sort.Strings(out)
		return out
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("App methods/arity:\n got %v\nwant %v (from WailsApp)", names(got), names(want))
	}
}

// bindingJSON JSON-encodes a binding result as Wails does and decodes it generically.
func bindingJSON(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("binding result is not JSON-able: %v", err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("binding result %s is not a JSON object: %v", b, err)
	}
	return out
}

func TestAppBindingsOnRealStack(t *testing.T) {
	st := apptest.Stack(t, "")
	firstCalls := 0
	a := newApp(app.NewController(st, "test"), func() { firstCalls++ })

	for range 2 {
		b, err := a.Bootstrap()
		if err != nil {
			t.Fatal(err)
		}
		j := bindingJSON(t, b)
		if url, _ := j["hubUrl"].(string); !strings.HasPrefix(url, "ws://127.0.0.1:") || j["hubToken"] == "" || j["workspace"] != st.Config.Workspace {
			t.Errorf("bootstrap = %v", j)
		}
	}
	if firstCalls != 1 {
		t.Errorf("first-Bootstrap hook ran %d times, want once", firstCalls)
	}

	list, err := a.SetTransport(mcp.TransportTCP, true)
	if err != nil {
		t.Fatal(err)
	}
	addr := st.Transports.Addr(mcp.TransportTCP)
	if conn, err := net.DialTimeout("tcp", addr, 2*time.Second); err != nil {
		t.Errorf("SetTransport(tcp, true) but %q refuses: %v", addr, err)
	} else {
		conn.Close()
	}
	if ts, _ := bindingJSON(t, list)["transports"].([]any); len(ts) != 4 {
		t.Errorf("transports = %v, want 4", ts)
	}
	if _, err := a.SetTransport(mcp.TransportWS, false); err == nil || !strings.Contains(err.Error(), "ws:") {
		t.Errorf("switching the dashboard's own hub off: err = %v, want a ws: error", err)
	}

	info, err := a.StartProcess("cat", nil)
	if err != nil {
		t.Fatal(err)
	}
	if j := bindingJSON(t, info); j["status"] != "running" || j["id"] == "" {
		t.Errorf("StartProcess = %v", j)
	}
	res, err := a.SendInput(info.ID, "hello tray\n")
	if err != nil || !res.Success {
		t.Fatalf("SendInput = %+v, %v", res, err)
	}
	if j := bindingJSON(t, res); j["success"] != true {
		t.Errorf("SendInput JSON = %v, want {success: true} like the HTTP API", j)
	}
	var out process.Output
	if !testutil.Poll(testutil.Patience, func() bool {
		out, err = st.Processes.Output(info.ID, process.OutputQuery{})
		return err == nil && strings.Contains(out.Text, "hello tray")
	}) {
		t.Fatalf("cat never echoed the input: %q, %v", out.Text, err)
	}
	killed, err := a.KillProcess(info.ID)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if final, err := st.Processes.Wait(ctx, killed.ID); err != nil || final.Status != process.StatusKilled {
		t.Errorf("after KillProcess: %+v, %v", final, err)
	}
	if _, err := a.StopProcess("p-does-not-exist"); err == nil {
		t.Error("StopProcess of an unknown id succeeded")
	}
	if _, err := a.SendInput(info.ID, ""); err == nil || !strings.Contains(err.Error(), "input") {
		t.Errorf("empty input: err = %v, want it to name the field", err)
	}

	snippets, err := a.ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg := bindingJSON(t, snippets)
	if _, ok := cfg["unix"]; !ok {
		t.Errorf("client config lacks the unix snippet: %v", cfg)
	}
	// The typed snippets keep the shape clients paste: {"mcpServers":{"switchboard":{...}}}, a
	// command for stdio-style transports, type/url/headers for HTTP, nothing else.
	if _, err := a.SetTransport(mcp.TransportHTTP, true); err != nil {
		t.Fatal(err)
	}
	server := func(cfg map[string]any, kind string) map[string]any {
		t.Helper()
		snip, _ := cfg[kind].(map[string]any)
		servers, _ := snip["mcpServers"].(map[string]any)
		srv, _ := servers["switchboard"].(map[string]any)
		if len(snip) != 1 || len(servers) != 1 || srv == nil {
			t.Fatalf("client config %s = %v, want {mcpServers: {switchboard: {...}}}", kind, cfg[kind])
		}
		return srv
	}
	if snippets, err = a.ClientConfig(); err != nil {
		t.Fatal(err)
	}
	cfg = bindingJSON(t, snippets)
	if stdio := server(cfg, "stdio"); len(stdio) != 2 || stdio["command"] == "" || stdio["args"].([]any)[0] != "serve" {
		t.Errorf("stdio snippet = %v, want only command and args", stdio)
	}
	httpSrv := server(cfg, "http")
	hdr, _ := httpSrv["headers"].(map[string]any)
	if len(httpSrv) != 3 || httpSrv["type"] != "http" || !strings.HasSuffix(httpSrv["url"].(string), "/mcp") ||
		len(hdr) != 1 || !strings.HasPrefix(hdr["Authorization"].(string), "Bearer ") {
		t.Errorf("http snippet = %v, want type, url and an Authorization header", httpSrv)
	}
	if _, err := a.CreateIDESession(""); err == nil {
		t.Error("CreateIDESession without a name succeeded")
	}
	if _, err := a.SendChat("", ""); err == nil {
		t.Error("SendChat without session and message succeeded")
	}
}

// TestAppServerBindingsOnRealStack drives the Servers view's bindings on a real hub with the
// fixture server (test/node/upstream-fixture.mjs): added quarantined, its log, approved (tools
// pinned), disabled and removed — the same JSON the headless API answers with.
func TestAppServerBindingsOnRealStack(t *testing.T) {
	sdkDir := testutil.NodeModule(t, "@modelcontextprotocol/sdk")
	fixture := filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(sdkDir))), "upstream-fixture.mjs")
	cfg := apptest.Config(t)
	cfg.Path = filepath.Join(t.TempDir(), "config.toml")
	st, err := app.BuildStack(cfg, "test", app.StackOptions{WithHub: true, EagerServers: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if err := st.Close(ctx); err != nil {
			t.Errorf("close stack: %v", err)
		}
	})
	a := newApp(app.NewController(st, "test"), nil)

	if _, err := a.AddServer(upstream.Spec{Name: "fixture"}); err == nil || !strings.Contains(err.Error(), "command:") {
		t.Fatalf("AddServer without a command: err = %v, want it to name the field", err)
	}
	change, err := a.AddServer(upstream.Spec{Name: "fixture", Command: "node", Args: []string{fixture}})
	if err != nil {
		t.Fatal(err)
	}
	if j := bindingJSON(t, change); !strings.Contains(j["diff"].(string), `+name = "fixture"`) || j["path"] != cfg.Path {
		t.Errorf("AddServer = %v", j)
	}
	var srv, listed map[string]any
	if !testutil.Poll(60*time.Second, func() bool {
		list, err := a.ListServers()
		if err != nil {
			t.Fatal(err)
		}
		listed = bindingJSON(t, list)
		servers, _ := listed["servers"].([]any)
		if len(servers) != 1 {
			return false
		}
		srv, _ = servers[0].(map[string]any)
		return srv["state"] == "running"
	}) {
		t.Fatalf("fixture not running: %v", listed)
	}
	if srv["approved"] != false || len(srv["tools"].([]any)) != 3 {
		t.Fatalf("new server = %v, want quarantined with 3 tools", srv)
	}

	log, err := a.ServerLogs("fixture", 0)
	if err != nil {
		t.Fatal(err)
	}
	text := fmt.Sprint(bindingJSON(t, log)["lines"])
	if !strings.Contains(text, "started node") || !strings.Contains(text, "fixture starting") {
		t.Errorf("log = %s", text)
	}

	approved, err := a.ApproveServer("fixture", nil)
	if err != nil {
		t.Fatal(err)
	}
	j := bindingJSON(t, approved)
	if j["approved"] != true || j["held"] != float64(0) {
		t.Errorf("ApproveServer = %v", j)
	}
	for _, tool := range j["tools"].([]any) {
		if tool.(map[string]any)["state"] != "approved" {
			t.Errorf("tool after approval: %v", tool)
		}
	}
	if _, err := a.ApproveServer("fixture", []string{"nope"}); err == nil || !strings.Contains(err.Error(), `no tool "nope"`) {
		t.Errorf("approving an unknown tool: err = %v", err)
	}

	off, err := a.SetServerEnabled("fixture", false)
	if err != nil {
		t.Fatal(err)
	}
	if s := bindingJSON(t, off)["servers"].([]any)[0].(map[string]any); s["state"] != "disabled" || s["enabled"] != false {
		t.Errorf("after SetServerEnabled(false): %v", s)
	}
	gone, err := a.RemoveServer("fixture")
	if err != nil {
		t.Fatal(err)
	}
	if s := bindingJSON(t, gone)["servers"].([]any); len(s) != 0 {
		t.Errorf("after RemoveServer: %v", s)
	}
	if _, err := a.RestartServer("fixture"); err == nil {
		t.Error("RestartServer of a removed server succeeded")
	}
}
