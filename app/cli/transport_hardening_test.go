package cli

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	mcpclient "github.com/mark3labs/mcp-go/client"
	mgo "github.com/mark3labs/mcp-go/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/app/apptest"
	"github.com/switchboard-hub/switchboard/internal/testutil"
)

// sdkCall connects a go-sdk client over conn and calls lang_detect.
func sdkCall(conn net.Conn) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "probe", Version: "1"}, nil).Connect(ctx, &sdk.IOTransport{Reader: conn, Writer: conn}, nil)
	if err != nil {
		return err
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "lang_detect", Arguments: map[string]any{"path": "a.go"}})
	if err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("tool error: %+v", res.Content)
	}
	return nil
}

// TestListenersSurviveDescriptorExhaustion runs the real binary under `ulimit -n 64` and opens
// far more connections than it has descriptors. Accept fails with EMFILE meanwhile; once the
// attackers leave, both the Unix socket and TCP serve again (before, Serve stopped on the first
// accept error and removed the socket for good).
func TestListenersSurviveDescriptorExhaustion(t *testing.T) {
	bin := apptest.Binary(t)
	sock := filepath.Join(apptest.ShortDir(t), "hub.sock")
	addr := apptest.FreeAddr(t)
	cmd := exec.Command("sh", "-c", `ulimit -n 64 && exec "$0" "$@"`, bin, "serve", "--no-hub", "--unix", sock, "--tcp", addr, "--workspace", t.TempDir())
	cmd.Env = apptest.Env(t)
	stderr, _ := cmd.StderrPipe()
	w := &apptest.LineWatcher{}
	go w.Run(stderr)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	w.Wait(t, regexp.MustCompile(`tcp listening on`))

	var attackers []net.Conn
	for i := 0; i < 150; i++ {
		for _, target := range [][2]string{{"unix", sock}, {"tcp", addr}} {
			if c, err := net.DialTimeout(target[0], target[1], time.Second); err == nil {
				attackers = append(attackers, c)
			}
		}
	}
	w.Wait(t, regexp.MustCompile(`accept failed; retrying.*too many open files`))
	for _, c := range attackers {
		c.Close()
	}
	for _, target := range [][2]string{{"unix", sock}, {"tcp", addr}} {
		var err error
		if !testutil.Poll(20*time.Second, func() bool {
			conn, derr := net.DialTimeout(target[0], target[1], time.Second)
			if err = derr; err == nil {
				err = sdkCall(conn)
				conn.Close()
			}
			return err == nil
		}) {
			t.Fatalf("%s does not serve after the attackers left: %v\n%s", target[0], err, strings.Join(w.Lines(), "\n"))
		}
	}
	if _, err := os.Lstat(sock); err != nil {
		t.Errorf("socket file gone: %v", err)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
}

// TestMCPGoClientOverStdio drives `switchboard serve --stdio` with the mark3labs/mcp-go stdio
// client and its default options (it probes server/discover first).
func TestMCPGoClientOverStdio(t *testing.T) {
	bin := apptest.Binary(t)
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "hello.txt"), []byte("hi from mcp-go"), 0o644)
	c, err := mcpclient.NewStdioMCPClient(bin, apptest.Env(t), "serve", "--stdio", "--no-hub", "--workspace", ws)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := c.Initialize(ctx, mgo.InitializeRequest{Params: mgo.InitializeParams{ClientInfo: mgo.Implementation{Name: "mcp-go", Version: "1.2.1"}}})
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if res.ServerInfo.Name != "switchboard" && res.ProtocolVersion == "" {
		t.Errorf("initialize: %+v", res)
	}
	r, err := c.CallTool(ctx, mgo.CallToolRequest{Params: mgo.CallToolParams{Name: "file_read", Arguments: map[string]any{"path": "hello.txt"}}})
	if err != nil || r.IsError {
		t.Fatalf("file_read over stdio: %v %+v", err, r)
	}
	if txt, ok := r.Content[0].(mgo.TextContent); !ok || !strings.Contains(txt.Text, "hi from mcp-go") {
		t.Errorf("file_read: %+v", r.Content)
	}
}

// TestConnectTCPSendsToken: `switchboard connect --tcp` presents the stored client token to a hub
// whose TCP transport requires one, so any stdio client gets through; without it the hub refuses.
func TestConnectTCPSendsToken(t *testing.T) {
	bin := apptest.Binary(t)
	env := apptest.Env(t)
	cfgFile := filepath.Join(t.TempDir(), "config.toml")
	os.WriteFile(cfgFile, []byte("[tcp]\nrequire_token = true\n"), 0o600)
	addr := apptest.FreeAddr(t)
	serve := exec.Command(bin, "--config", cfgFile, "serve", "--no-hub", "--tcp", addr, "--workspace", t.TempDir())
	serve.Env = env
	stderr, _ := serve.StderrPipe()
	w := &apptest.LineWatcher{}
	go w.Run(stderr)
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	defer serve.Process.Kill()
	w.Wait(t, regexp.MustCompile(`tcp listening on`))

	// Straight to the port, no token: refused.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	if err := sdkCall(c); err == nil {
		t.Error("a client without the token was served")
	}
	c.Close()

	// Through connect: served.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn := exec.CommandContext(ctx, bin, "--config", cfgFile, "connect", "--tcp", addr)
	conn.Env = env
	in, _ := conn.StdinPipe()
	out, _ := conn.StdoutPipe()
	if err := conn.Start(); err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "via-connect", Version: "1"}, nil).Connect(ctx, &sdk.IOTransport{Reader: out, Writer: in}, nil)
	if err != nil {
		t.Fatalf("through connect --tcp: %v", err)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "lang_detect", Arguments: map[string]any{"path": "a.ts"}})
	if err != nil || res.IsError {
		t.Fatalf("call through connect --tcp: %v %+v", err, res)
	}
	cs.Close()
	conn.Wait()
}
