// Package apptest holds the helpers the tests of package app and its front ends (app/cli,
// app/desktop, app/dashboard) share: a real Stack on loopback and temporary directories, the built
// switchboard binary and its stderr, MCP clients of a hub, calls of the dashboard's /api. It is
// imported by tests only.
package apptest

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/internal/config"
)

// ConnectClient connects an MCP client named name (without elicitation) over the stack's Unix
// socket, so that it has a session like any client.
func ConnectClient(t *testing.T, st *app.Stack, name string) *sdk.ClientSession {
	t.Helper()
	conn, err := net.Dial("unix", st.Config.Unix.Path)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: name, Version: "1"}, &sdk.ClientOptions{Capabilities: &sdk.ClientCapabilities{}}).Connect(t.Context(), &sdk.IOTransport{Reader: conn, Writer: conn}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// CallTool calls a tool; an error of the protocol (not of the tool) fails the test.
func CallTool(t *testing.T, cs *sdk.ClientSession, tool string, args map[string]any) *sdk.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return res
}

// InMemoryClient connects an MCP client named name to the stack's hub over in-memory transports,
// closed when the test ends.
func InMemoryClient(t *testing.T, st *app.Stack, name string) *sdk.ClientSession {
	t.Helper()
	ct, srvT := sdk.NewInMemoryTransports()
	ss, err := st.Service.Server().Connect(t.Context(), srvT, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: name, Version: "1"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// EnvValue is the last value of key in env (name=value entries), "" when it is not set.
func EnvValue(env []string, key string) string {
	v := ""
	for _, e := range env {
		if k, val, ok := strings.Cut(e, "="); ok && k == key {
			v = val
		}
	}
	return v
}

// FreePort is a loopback TCP port nothing listens on (at the time of the call).
func FreePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// FreeAddr is a loopback host:port nothing listens on (at the time of the call).
func FreeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// Stack builds a real stack on loopback ports and a temp socket, with the desktop's
// default transports (hub + Unix socket) running. ideURL "" points the bridge at a closed port;
// tweak, if not nil, adjusts the config.
func Stack(t *testing.T, ideURL string, tweak ...func(*config.Config)) *app.Stack {
	t.Helper()
	return StackWith(t, ideURL, app.StackOptions{}, tweak...)
}

// StackWith is Stack with more StackOptions (WithHub and StartIDE are set as Stack sets them).
func StackWith(t *testing.T, ideURL string, so app.StackOptions, tweak ...func(*config.Config)) *app.Stack {
	t.Helper()
	dir := t.TempDir()
	cfg := config.Default()
	cfg.Workspace = filepath.Join(dir, "ws")
	cfg.DataDir = filepath.Join(dir, "data")
	cfg.Unix.Path = filepath.Join(dir, "mcp.sock")
	cfg.TCP.Addr = "127.0.0.1:0"
	cfg.HTTP.Addr = "127.0.0.1:0"
	cfg.HTTP.Token = "test-token"
	cfg.Hub.Addr = "127.0.0.1:0"
	if ideURL != "" {
		cfg.SetIDEURL(ideURL) // configured: the ide toolset is on
	} else {
		cfg.IDE.URL = "ws://127.0.0.1:1/ws"
	}
	for _, f := range tweak {
		f(&cfg)
	}
	if err := os.MkdirAll(cfg.Workspace, 0o755); err != nil {
		t.Fatal(err)
	}
	so.WithHub, so.StartIDE = true, ideURL != ""
	st, err := app.BuildStack(cfg, "test", so)
	if err != nil {
		t.Fatalf("BuildStack: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if err := st.Close(ctx); err != nil {
			t.Errorf("close stack: %v", err)
		}
	})
	if err := st.StartDefaultTransports(); err != nil {
		t.Fatalf("start transports: %v", err)
	}
	return st
}

// Config is a default config confined to temp dirs, so tests never touch the user's files.
func Config(t *testing.T) config.Config {
	t.Helper()
	cfg := config.Default()
	cfg.Workspace = t.TempDir()
	cfg.DataDir = t.TempDir()
	dir, err := os.MkdirTemp("", "sb-") // short: Unix socket paths are limited to 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	cfg.Unix.Path = filepath.Join(dir, "mcp.sock")
	cfg.TCP.Addr = "127.0.0.1:0"
	cfg.HTTP.Addr = "127.0.0.1:0"
	cfg.IDE.URL = "ws://127.0.0.1:1/ws" // nothing listens: the bridge just retries
	return cfg
}

// RealDir is dir with symlinks resolved (as the hub reports a folder), or dir cleaned when it
// cannot be resolved.
func RealDir(dir string) string {
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		return r
	}
	return filepath.Clean(dir)
}
