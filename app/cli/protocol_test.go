package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
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

	"github.com/switchboard-hub/switchboard/app/apptest"
)

// TestServeStdioQuiet: `serve --stdio` as clients start it writes nothing to stderr (clients show
// stderr as errors): no token, no audit lines (they go to the audit file), no WebSocket hub until
// ws_start; the ide toolset is off without a configured backend, and the instructions name only
// served tools.
func TestServeStdioQuiet(t *testing.T) {
	bin := apptest.Binary(t)
	ws := t.TempDir()
	env := append(apptest.Env(t), "SWITCHBOARD_IDE_URL=")
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
	audit, err := os.ReadFile(filepath.Join(apptest.EnvValue(env, "XDG_DATA_HOME"), "switchboard", "logs", "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(audit), `"exec"`) || !strings.Contains(string(audit), "file_write") {
		t.Errorf("audit file lacks the calls:\n%s", audit)
	}
}

// TestConnectWithoutHubServesPrivateHub: with nothing on the socket, `connect` serves a private
// in-process hub over stdio and says so in one stderr line.
func TestConnectWithoutHubServesPrivateHub(t *testing.T) {
	bin := apptest.Binary(t)
	ws := t.TempDir()
	sock := filepath.Join(apptest.ShortDir(t), "nobody.sock")
	cmd := exec.Command(bin, "connect", "--socket", sock, "--workspace", ws)
	cmd.Env = append(apptest.Env(t), "SWITCHBOARD_IDE_URL=")
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
	bin := apptest.Binary(t)
	env := apptest.Env(t)
	sock := filepath.Join(apptest.ShortDir(t), "hub.sock")
	serve := startUnixHub(t, bin, env, "serve", "--unix", sock, "--no-hub", "--workspace", t.TempDir())

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
	bin := apptest.Binary(t)
	cmd := exec.Command(bin, "doctor", "--workspace", t.TempDir())
	cmd.Env = append(apptest.Env(t), "SWITCHBOARD_IDE_URL=")
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
	cmd.Env = apptest.Env(t) // an IDE URL is configured, but --toolsets leaves ide out
	out, _ = cmd.CombinedOutput()
	if !strings.Contains(string(out), "serving files (") || strings.Contains(string(out), "ide backend") ||
		strings.Contains(string(out), "rag store") || strings.Contains(string(out), "influxdb") || strings.Contains(string(out), "webview") {
		t.Errorf("doctor --toolsets files:\n%s", out)
	}
}
