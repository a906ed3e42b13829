package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/app/apptest"
)

func TestServeUnixConnectCallAndSigterm(t *testing.T) {
	bin := apptest.Binary(t)
	env := apptest.Env(t)
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "hello.txt"), []byte("hi there"), 0o644)
	sock := filepath.Join(apptest.ShortDir(t), "hub.sock")
	serve := exec.Command(bin, "serve", "--unix", sock, "--workspace", ws)
	serve.Env = env
	stderr, _ := serve.StderrPipe()
	var w apptest.LineWatcher
	go w.Run(stderr)
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	defer serve.Process.Kill()
	w.Wait(t, regexp.MustCompile(`unix listening on unix://`))

	// call through the running hub
	out, err := exec.Command(bin, "call", "file_read", "--socket", sock, "--args", `{"path":"hello.txt"}`).CombinedOutput()
	if err != nil || !strings.Contains(string(out), `"content": "hi there"`) {
		t.Fatalf("call --socket: %v\n%s", err, out)
	}
	// a tool error exits 2 and names the problem
	cmd := exec.Command(bin, "call", "file_read", "--socket", sock, "--args", `{"path":"../etc/passwd"}`)
	out, err = cmd.CombinedOutput()
	if ee := (*exec.ExitError)(nil); !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "outside the workspace") {
		t.Fatalf("call with escaping path: %v\n%s", err, out)
	}

	// connect relays a raw client that closes stdin right after its requests: every reply arrives.
	connect := exec.Command(bin, "connect", "--socket", sock)
	connect.Env = env
	var in bytes.Buffer
	in.WriteString(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"relay-test","version":"1"}}}` + "\n")
	in.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	for i := 1; i <= 5; i++ {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"lang_detect","arguments":{"path":"f%d.go"}}}`+"\n", i, i)
	}
	connect.Stdin = &in
	relayed, err := connect.Output()
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	ids := map[float64]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(relayed)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("relay output not JSON: %q", line)
		}
		if id, ok := m["id"].(float64); ok {
			ids[id] = true
		}
	}
	for i := 0; i <= 5; i++ {
		if !ids[float64(i)] {
			t.Errorf("reply %d missing from relay output:\n%s", i, relayed)
		}
	}

	// SIGTERM: clean exit, socket removed.
	serve.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- serve.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve exited with %v after SIGTERM", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not exit after SIGTERM")
	}
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Fatalf("socket left behind after SIGTERM: %v", err)
	}
}

func TestServeHTTPKeepsTokenAcrossRestartsAndStdioDefault(t *testing.T) {
	bin := apptest.Binary(t)
	env := apptest.Env(t)
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	start := func() (*exec.Cmd, *apptest.LineWatcher) {
		serve := exec.Command(bin, "serve", "--http", addr, "--no-hub", "--workspace", t.TempDir())
		serve.Env = env
		stderr, _ := serve.StderrPipe()
		w := &apptest.LineWatcher{}
		go w.Run(stderr)
		if err := serve.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { serve.Process.Kill() })
		w.Wait(t, regexp.MustCompile(`http listening on http://`+regexp.QuoteMeta(addr)+`/mcp`))
		return serve, w
	}
	stop := func(serve *exec.Cmd) {
		serve.Process.Signal(syscall.SIGINT)
		if err := serve.Wait(); err != nil {
			t.Fatalf("serve --http exit after SIGINT: %v", err)
		}
	}
	// status posts an initialize with the given Authorization header.
	status := func(auth string) int {
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", auth)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	serve, w := start()
	m := w.Wait(t, regexp.MustCompile(`created the client token in (\S+)`))
	if strings.Contains(strings.Join(w.Lines(), "\n"), "Bearer") {
		t.Error("the token itself must not be printed on stderr")
	}
	fi, err := os.Stat(m[1])
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file %s: %v %v; want mode 0600", m[1], fi, err)
	}
	raw, _ := os.ReadFile(m[1])
	token := strings.TrimSpace(string(raw))
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(token) {
		t.Fatalf("token = %q", token)
	}
	tokenCmd := func(args ...string) string {
		cmd := exec.Command(bin, append([]string{"token"}, args...)...)
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("switchboard token %v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	if got := tokenCmd(); got != token {
		t.Fatalf("`switchboard token` = %q, file holds %q", got, token)
	}
	for _, auth := range []string{"Bearer " + token, "bearer " + token, "BEARER " + token} {
		if c := status(auth); c != http.StatusOK {
			t.Errorf("Authorization %q: %d, want 200 (the scheme is case-insensitive)", auth[:7], c)
		}
	}
	if c := status("Basic " + token); c != http.StatusUnauthorized {
		t.Errorf("Basic scheme: %d, want 401", c)
	}
	stop(serve)

	// A restart keeps the token: configured clients keep working.
	serve, w = start()
	if c := status("Bearer " + token); c != http.StatusOK {
		t.Fatalf("after restart the stored token got %d", c)
	}
	for _, l := range w.Lines() {
		if strings.Contains(l, "created the client token") {
			t.Errorf("restart created a new token: %s", l)
		}
	}
	stop(serve)

	// --rotate replaces it; the next start uses the new one.
	rotated := tokenCmd("--rotate")
	if rotated == token || len(rotated) != 64 {
		t.Fatalf("rotate gave %q (old %q)", rotated, token)
	}
	if fi, err := os.Stat(m[1]); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("rotated token file mode: %v %v", fi, err)
	}
	serve, _ = start()
	if c := status("Bearer " + token); c != http.StatusUnauthorized {
		t.Errorf("old token after rotation: %d, want 401", c)
	}
	if c := status("Bearer " + rotated); c != http.StatusOK {
		t.Errorf("rotated token: %d, want 200", c)
	}
	stop(serve)

	// No flag: stdio. stdout carries only protocol lines.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stdio := exec.CommandContext(ctx, bin, "serve", "--no-hub", "--workspace", t.TempDir())
	stdio.Env = env
	stdio.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}` + "\n")
	out, err := stdio.Output()
	if err != nil {
		t.Fatalf("serve (stdio default): %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], `"serverInfo"`) || !strings.Contains(lines[0], `"switchboard"`) {
		t.Fatalf("stdout of stdio serve = %q; want exactly one initialize reply", out)
	}
}

func TestDoctorAndVersion(t *testing.T) {
	bin := apptest.Binary(t)
	cmd := exec.Command(bin, "doctor", "--workspace", t.TempDir())
	cmd.Env = apptest.Env(t)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("doctor on a healthy setup: %v\n%s", err, out)
	}
	for _, want := range []string{"[ok  ] workspace", "[ok  ] data dir", "ide backend", "fix: start the agentic backend at that address",
		// Backends the user never set up are calm, with how to (issue 39, item 7).
		"[ok  ] ml ollama      not set up", "[ok  ] influxdb       not set up"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "go run") {
		t.Errorf("doctor points a user at a development command:\n%s", out)
	}
	cmd = exec.Command(bin, "doctor", "--workspace", "/nonexistent/dir")
	cmd.Env = apptest.Env(t)
	out, err = cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "FAIL") || !strings.Contains(string(out), "--workspace") {
		t.Fatalf("doctor with a bad workspace should fail and say how to fix it: %v\n%s", err, out)
	}
	out, _ = exec.Command(bin, "version").Output()
	if !strings.HasPrefix(string(out), "switchboard ") {
		t.Fatalf("version = %q", out)
	}
}

// TestStdioWithGoSDKClient drives `switchboard serve --stdio` as a subprocess with go-sdk's
// CommandTransport, the way Claude Desktop or Cursor start it.
func TestStdioWithGoSDKClient(t *testing.T) {
	bin := apptest.Binary(t)
	ws := t.TempDir()
	cmd := exec.Command(bin, "serve", "--stdio", "--no-hub", "--workspace", ws)
	cmd.Env = apptest.Env(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "stdio-client", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "file_write", Arguments: map[string]any{"path": "d/x.md", "content": "# hi"}})
	if err != nil || res.IsError {
		t.Fatalf("file_write over stdio: %v %+v", err, res)
	}
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "file_read", Arguments: map[string]any{"path": "d/x.md"}})
	if err != nil || res.IsError {
		t.Fatalf("file_read over stdio: %v %+v", err, res)
	}
	b, _ := json.Marshal(res.StructuredContent)
	if !strings.Contains(string(b), `"content":"# hi"`) || !strings.Contains(string(b), `"language":"markdown"`) {
		t.Fatalf("file_read over stdio = %s", b)
	}
	if got, _ := os.ReadFile(filepath.Join(ws, "d", "x.md")); string(got) != "# hi" {
		t.Fatalf("file on disk = %q", got)
	}
}
