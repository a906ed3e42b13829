package app

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/mcp"
)

// TestServeStdioQuiet: `serve --stdio` as clients start it writes nothing to stderr (clients show
// stderr as errors): no token, no audit lines (they go to the audit file), no WebSocket hub until
// ws_start; the ide toolset is off without a configured backend, and the instructions name only
// served tools.
func TestServeStdioQuiet(t *testing.T) {
	bin := binary(t)
	ws := t.TempDir()
	env := append(testEnv(t), "SWITCHBOARD_IDE_URL=")
	cmd := exec.Command(bin, "serve", "--stdio", "--workspace", ws)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "quiet", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	instr := cs.InitializeResult().Instructions
	for _, want := range []string{"exec", "file_*", "dir_*", "process table"} {
		if !strings.Contains(instr, want) {
			t.Errorf("instructions lack %q: %s", want, instr)
		}
	}
	for _, absent := range []string{"ide_", "IDE"} {
		if strings.Contains(instr, absent) {
			t.Errorf("instructions mention %q, which is not served: %s", absent, instr)
		}
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	if slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "ide_") }) || !slices.Contains(names, "ws_start") {
		t.Errorf("default toolsets without an IDE backend: tools %v", names)
	}
	call := func(name string, args map[string]any) map[string]any {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", name, err, res)
		}
		b, _ := json.Marshal(res.StructuredContent)
		var m map[string]any
		json.Unmarshal(b, &m)
		return m
	}
	if info := call("ws_info", nil); info["running"] != false {
		t.Errorf("WebSocket hub running before ws_start: %v", info)
	}
	call("exec", map[string]any{"command": "echo", "args": []string{"audited"}})
	call("file_write", map[string]any{"path": "a.txt", "content": "x"})
	if info := call("ws_start", nil); info["url"] == nil && info["addr"] == nil {
		t.Errorf("ws_start: %v", info)
	}
	cs.Close()
	if s := stderr.String(); s != "" {
		t.Errorf("serve --stdio wrote to stderr:\n%s", s)
	}
	audit, err := os.ReadFile(filepath.Join(envValue(env, "XDG_DATA_HOME"), "switchboard", "logs", "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(audit), `"exec"`) || !strings.Contains(string(audit), "file_write") {
		t.Errorf("audit file lacks the calls:\n%s", audit)
	}
}

func envValue(env []string, key string) string {
	v := ""
	for _, e := range env {
		if k, val, ok := strings.Cut(e, "="); ok && k == key {
			v = val
		}
	}
	return v
}

// TestToolsetControls: the dashboard's controls (bindings and the headless HTTP API) switch a
// toolset for a real stack; a connected MCP client gets tools/list_changed and the new list;
// an unknown name is refused with the valid ones.
func TestToolsetControls(t *testing.T) {
	st := trayTestStack(t, "")
	a := newApp(NewController(st, "test"), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	changed := make(chan struct{}, 4)
	ct, srvT := sdk.NewInMemoryTransports()
	ss, err := st.Service.Server().Connect(ctx, srvT, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "c", Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changed <- struct{}{} },
	}).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	served := func() map[string]bool {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]bool{}
		for _, tl := range res.Tools {
			m[tl.Name] = true
		}
		return m
	}
	if got := served(); !got["exec"] || got["ide_session_list"] {
		t.Fatalf("default toolsets without a configured IDE backend: %v", got)
	}
	list, err := a.Toolsets()
	if err != nil {
		t.Fatal(err)
	}
	idx := slices.IndexFunc(list.Toolsets, func(ts mcp.ToolsetStatus) bool { return ts.Name == "ide" })
	if idx < 0 || list.Toolsets[idx].Enabled || len(list.Toolsets[idx].Tools) == 0 {
		t.Fatalf("ide toolset: %+v", list.Toolsets)
	}
	if _, err := a.SetToolset("process", false); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no tools/list_changed after switching process off from the dashboard")
	}
	if got := served(); got["exec"] {
		t.Fatalf("process off but exec still served: %v", got)
	}

	// The headless dashboard's HTTP API does the same.
	srv := httptest.NewServer(newDashboardServer(NewController(st, "test"), "dash-tok").Handler())
	defer srv.Close()
	post := func(name, body string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/toolsets/"+name, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer dash-tok")
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, body := post("ide", `{"enabled":true}`); code != 200 || !strings.Contains(body, `"name":"ide"`) {
		t.Fatalf("POST /api/toolsets/ide: %d %s", code, body)
	}
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no tools/list_changed after switching ide on over the API")
	}
	if got := served(); !got["ide_session_list"] {
		t.Fatalf("ide on but not served: %v", got)
	}
	if code, body := post("nope", `{"enabled":true}`); code != 400 || !strings.Contains(body, "valid: files, process") {
		t.Errorf("unknown toolset: %d %s", code, body)
	}
}

// TestConnectWithoutHubServesPrivateHub: with nothing on the socket, `connect` serves a private
// in-process hub over stdio and says so in one stderr line.
func TestConnectWithoutHubServesPrivateHub(t *testing.T) {
	bin := binary(t)
	ws := t.TempDir()
	sock := filepath.Join(shortDir(t), "nobody.sock")
	cmd := exec.Command(bin, "connect", "--socket", sock, "--workspace", ws)
	cmd.Env = append(testEnv(t), "SWITCHBOARD_IDE_URL=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "private", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect without a hub: %v; stderr:\n%s", err, stderr.String())
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "file_write", Arguments: map[string]any{"path": "p.txt", "content": "private"}})
	if err != nil || res.IsError {
		t.Fatalf("file_write through the private hub: %v %+v", err, res)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "p.txt")); string(b) != "private" {
		t.Errorf("file on disk = %q", b)
	}
	cs.Close()
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "no hub at "+sock) || !strings.Contains(lines[0], "private hub") {
		t.Errorf("stderr = %q; want exactly one notice about the private hub", stderr.String())
	}
}

// TestConnectReportsHubGoingAway: when the hub stops while a client is connected, connect says
// so on stderr and exits non-zero.
func TestConnectReportsHubGoingAway(t *testing.T) {
	bin := binary(t)
	env := testEnv(t)
	sock := filepath.Join(shortDir(t), "hub.sock")
	serve := startUnixHub(t, bin, env, "serve", "--unix", sock, "--no-hub", "--workspace", t.TempDir())
	defer serve.Process.Kill()

	connect := exec.Command(bin, "connect", "--socket", sock)
	connect.Env = env
	stdin, _ := connect.StdinPipe()
	stdout, _ := connect.StdoutPipe()
	var stderr bytes.Buffer
	connect.Stderr = &stderr
	if err := connect.Start(); err != nil {
		t.Fatal(err)
	}
	defer connect.Process.Kill()
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`+"\n")
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.Contains(line, `"serverInfo"`) {
		t.Fatalf("initialize through connect: %q %v", line, err)
	}
	// The hub goes away while the client still has stdin open.
	serve.Process.Signal(syscall.SIGTERM)
	serve.Wait()
	done := make(chan error, 1)
	go func() { done <- connect.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() == 0 {
			t.Errorf("connect exit = %v; want a non-zero status", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("connect kept running after the hub went away")
	}
	if !strings.Contains(stderr.String(), "went away") || !strings.Contains(stderr.String(), sock) {
		t.Errorf("stderr = %q; want it to say the hub at %s went away", stderr.String(), sock)
	}
}

// TestDoctorNamesOnlyServedToolsets: doctor reports the toolsets from the registered tools and
// checks the IDE backend only when the ide toolset is served.
func TestDoctorNamesOnlyServedToolsets(t *testing.T) {
	bin := binary(t)
	cmd := exec.Command(bin, "doctor", "--workspace", t.TempDir())
	cmd.Env = append(testEnv(t), "SWITCHBOARD_IDE_URL=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("doctor: %v\n%s", err, out)
	}
	s := string(out)
	if !regexp.MustCompile(`\[ok  \] toolsets\s+serving files \(\d+\), process \(\d+\), ws \(\d+\), metrics \(\d+\), .*; registered but off: ide`).MatchString(s) {
		t.Errorf("doctor toolsets line:\n%s", s)
	}
	for _, absent := range []string{"ide backend"} {
		if strings.Contains(s, absent) {
			t.Errorf("doctor mentions %q, which is not served:\n%s", absent, s)
		}
	}
	cmd = exec.Command(bin, "doctor", "--workspace", t.TempDir(), "--toolsets", "files")
	cmd.Env = testEnv(t) // an IDE URL is configured, but --toolsets leaves ide out
	out, _ = cmd.CombinedOutput()
	if !strings.Contains(string(out), "serving files (") || strings.Contains(string(out), "ide backend") ||
		strings.Contains(string(out), "rag store") || strings.Contains(string(out), "influxdb") || strings.Contains(string(out), "webview") {
		t.Errorf("doctor --toolsets files:\n%s", out)
	}
}
