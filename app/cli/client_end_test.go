package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/app/apptest"
	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/internal/testutil"
)

// stdioHub starts `serve --stdio` and opens a session the way Claude Code does: initialize, then
// a subscriptions/listen stream that stays open. It returns once the listen is acknowledged.
func stdioHub(t *testing.T, extra ...string) (cmd *exec.Cmd, stdin io.WriteCloser, out *bufio.Scanner) {
	t.Helper()
	cmd = exec.Command(apptest.Binary(t), "serve", "--stdio", "--workspace", t.TempDir())
	cmd.Env = apptest.Env(t)
	stdin, _ = cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := []string{
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"listener","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true}}}`,
	}
	lines = append(lines, extra...)
	if _, err := io.WriteString(stdin, strings.Join(lines, "\n")+"\n"); err != nil {
		t.Fatal(err)
	}
	out = bufio.NewScanner(stdout)
	out.Buffer(make([]byte, 1<<20), 1<<20)
	for out.Scan() {
		if strings.Contains(out.Text(), "subscriptions/acknowledged") {
			return cmd, stdin, out
		}
	}
	t.Fatalf("the hub never acknowledged the listen request (%v)", out.Err())
	return
}

// exitWithin waits for the hub to exit and returns its exit code, failing after limit.
func exitWithin(t *testing.T, cmd *exec.Cmd, limit time.Duration) (code int, took time.Duration) {
	t.Helper()
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode(), time.Since(start)
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0, time.Since(start)
	case <-time.After(limit):
		t.Fatalf("the hub was still running %s later", limit)
	}
	return -1, 0
}

// TestStdioHubEndsWhenClientCloses: a client that goes away (stdin EOF) ends its stdio hub within
// a second with exit code 0, even with a subscriptions/listen stream and a long call still open.
func TestStdioHubEndsWhenClientCloses(t *testing.T) {
	// The long call says when it runs (the marker file), so stdin closes while it is running.
	started := filepath.Join(t.TempDir(), "started")
	long := fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"exec","arguments":{"command":"sh","args":["-c","echo > %s; exec sleep 30"]}}}`, started)
	for name, extra := range map[string][]string{"listen only": nil, "listen and a long call": {long}} {
		t.Run(name, func(t *testing.T) {
			cmd, stdin, _ := stdioHub(t, extra...)
			if extra != nil {
				testutil.Eventually(t, "the long call to start", func() bool { _, err := os.Stat(started); return err == nil })
			}
			stdin.Close()
			// 1 s is the promise; the margin is for a loaded machine's process exit.
			if code, took := exitWithin(t, cmd, 3*time.Second); code != 0 || took > 1500*time.Millisecond {
				t.Errorf("exit code %d after %s; want 0 within about 1 s of stdin closing", code, took)
			}
		})
	}
}

// TestStdioHubSIGTERMWithOnlySubscriptions: SIGTERM with only a listen stream open exits 0 at
// once instead of waiting out the drain and failing with "server is closing".
func TestStdioHubSIGTERMWithOnlySubscriptions(t *testing.T) {
	cmd, _, _ := stdioHub(t)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code, took := exitWithin(t, cmd, 8*time.Second); code != 0 || took > 3*time.Second {
		t.Errorf("exit code %d after %s; want 0 well within the 10 s drain", code, took)
	}
}

// TestRelayExitsWhenItsClientGoes: a client dies while its call waits for approval. Its
// `switchboard connect` relay exits within a second or two (not after ask_timeout), and the
// hub's question is withdrawn, not left for someone to click Allow on a dead client's call.
func TestRelayExitsWhenItsClientGoes(t *testing.T) {
	bin := apptest.Binary(t)
	env := apptest.Env(t)
	ws := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(cfg, []byte("[policy]\nask_timeout = \"120s\"\n[[policy.rules]]\ntool = \"file_write\"\naction = \"ask\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(apptest.ShortDir(t), "hub.sock")
	startUnixHub(t, bin, env, "--config", cfg, "serve", "--unix", sock, "--no-hub", "--workspace", ws)

	connect := exec.Command(bin, "connect", "--socket", sock)
	connect.Env = env
	connect.Dir = ws
	stdin, _ := connect.StdinPipe()
	stdout, _ := connect.StdoutPipe()
	if err := connect.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = connect.Process.Kill() }()
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"doomed","version":"1"}}}`+"\n")
	r := bufio.NewReader(stdout)
	if line, err := r.ReadString('\n'); err != nil || !strings.Contains(line, `"serverInfo"`) {
		t.Fatalf("initialize through connect: %q %v", line, err)
	}
	io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	// With a progress token, the hub reports every second while its question waits: the first
	// report says the question is asked.
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"file_write","_meta":{"progressToken":"p1"},"arguments":{"path":"late.txt","content":"x"}}}`+"\n")
	for {
		line, err := r.ReadString('\n')
		if err != nil || strings.Contains(line, `"id":1`) {
			t.Fatalf("want a progress report while the question waits; got %q %v", line, err)
		}
		if strings.Contains(line, `"notifications/progress"`) && strings.Contains(line, "waiting for the user to approve") {
			break
		}
	}
	stdin.Close() // the client dies
	code, took := exitWithin(t, connect, 10*time.Second)
	if code != 0 || took > 2500*time.Millisecond {
		t.Errorf("relay exit %d after %s; want 0 within about a second of its client going away", code, took)
	}
	if _, err := os.Stat(filepath.Join(ws, "late.txt")); err == nil {
		t.Error("the dead client's call ran")
	}
}

// startUnixHub starts `switchboard ARGS` (a serve with --unix) and returns once it listens; it
// is stopped (SIGTERM) when the test ends.
func startUnixHub(t *testing.T, bin string, env []string, args ...string) *exec.Cmd {
	t.Helper()
	p, _ := apptest.Start(t, bin, env, "", unixListening, args...)
	return p.Cmd
}

// unixListening is the line `serve --unix` prints once its socket accepts connections.
var unixListening = regexp.MustCompile(`unix listening on unix://`)

// TestTerminalGetsNoAuditEcho: the desktop app and its headless mode keep the terminal for what
// a person needs — tool calls go to the audit log, not to stderr; `serve` on sockets still
// echoes them (the operator's console).
func TestTerminalGetsNoAuditEcho(t *testing.T) {
	for _, echo := range []bool{false, true} {
		var stderr testutil.SyncBuffer
		cfg := config.Default()
		dir := t.TempDir()
		cfg.Workspace, cfg.DataDir = t.TempDir(), filepath.Join(dir, "data")
		st, err := app.BuildStack(cfg, "test", app.StackOptions{LogSink: &stderr, AuditEcho: echo})
		if err != nil {
			t.Fatal(err)
		}
		ct, srvT := sdk.NewInMemoryTransports()
		if _, err := st.Service.Server().Connect(context.Background(), srvT, nil); err != nil {
			t.Fatal(err)
		}
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "echo-test", Version: "1"}, nil).Connect(context.Background(), ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "file_write", Arguments: map[string]any{"path": "a.txt", "content": "x"}})
		if err != nil || res.IsError {
			t.Fatalf("file_write: %v %+v", err, res)
		}
		cs.Close()
		st.Close(context.Background())
		got := strings.Contains(stderr.String(), "file_write")
		if got != echo {
			t.Errorf("auditEcho=%v: the terminal shows the call: %v\n%s", echo, got, stderr.String())
		}
		audit, _ := os.ReadFile(filepath.Join(cfg.LogDir(), "audit.log"))
		if !strings.Contains(string(audit), "file_write") {
			t.Errorf("auditEcho=%v: the audit log lacks the call", echo)
		}
	}
}
