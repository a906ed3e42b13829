//go:build unix

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/app/apptest"
	"github.com/switchboard-hub/switchboard/internal/config"
)

// claudeEntry reads the switchboard entry `clients connect claude-code` wrote in ~/.claude.json.
func claudeEntry(t *testing.T, home string) (command string, args []string, token string) {
	t.Helper()
	path := filepath.Join(home, ".claude.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("%s holds a token: mode %v, want 0600", path, fi.Mode().Perm())
	}
	var f struct {
		MCPServers map[string]struct {
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	e, ok := f.MCPServers["switchboard"]
	if !ok {
		t.Fatalf("no switchboard entry in %s:\n%s", path, b)
	}
	return e.Command, e.Args, e.Env["SWITCHBOARD_CLIENT_TOKEN"]
}

// relayConnect starts the relay an entry names with token in its environment (as the client
// would) and connects a go-sdk client through it.
func relayConnect(t *testing.T, env []string, command string, args []string, token string) (*sdk.ClientSession, error) {
	t.Helper()
	cmd := exec.Command(command, args...)
	cmd.Env = append(env, "SWITCHBOARD_CLIENT_TOKEN="+token)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "claude-code", Version: "2.1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

// relayRefused runs the relay with token and one initialize request, and returns its exit error
// and stderr: what a client configured with that token sees.
func relayRefused(t *testing.T, env []string, command string, args []string, token string) (stderr string, err error) {
	t.Helper()
	cmd := exec.Command(command, args...)
	cmd.Env = append(env, "SWITCHBOARD_CLIENT_TOKEN="+token)
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"claude-code","version":"2.1"}}}` + "\n")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	if strings.Contains(out.String(), `"result"`) {
		t.Errorf("a refused relay was served: %s", out.String())
	}
	return errOut.String(), err
}

// TestClientsConnectGivesTheRelayItsIdentity: `switchboard clients connect claude-code` (the real
// binary, against a running hub) writes an entry whose env carries a token of the client's own;
// the relay that entry starts presents it in its hello over the Unix socket, and the hub serves
// the client as that identity: its Sessions entry names it ("token: claude-code") and its
// workspace is `[clients.claude-code] project`. Connecting again replaces the token: the old
// one is refused with a message saying how to fix it. `clients disconnect` revokes the token:
// the live connection ends and the next relay is refused. The token is in no log, no audit line,
// no hub file and not in what the CLI printed.
func TestClientsConnectGivesTheRelayItsIdentity(t *testing.T) {
	bin := apptest.Binary(t)
	project := apptest.RealDir(t.TempDir())
	if err := os.WriteFile(filepath.Join(project, "marker.txt"), []byte("the claude-code project"), 0o600); err != nil {
		t.Fatal(err)
	}
	st := apptest.Stack(t, "", func(c *config.Config) {
		c.Clients = map[string]config.ClientSettings{"claude-code": {Project: project}}
	})
	env := apptest.Env(t)
	env = append(env, "SWITCHBOARD_SOCKET="+st.Config.Unix.Path, "CLAUDE_CONFIG_DIR=", "PATH=/usr/bin:/bin")
	home := apptest.EnvValue(env, "HOME")

	out, errOut, err := runCLI(t, bin, env, home, "clients", "connect", "claude-code", "--yes")
	if err != nil {
		t.Fatalf("clients connect: %v\n%s%s", err, out, errOut)
	}
	command, args, token := claudeEntry(t, home)
	if !strings.HasPrefix(token, "sbc_") {
		t.Fatalf("the entry carries no client token: %q", token)
	}
	printed := out + errOut

	cs, err := relayConnect(t, env, command, args, token)
	if err != nil {
		t.Fatalf("relay with the client's token: %v", err)
	}
	if text, isErr := apptest.ToolText(t, cs, "file_read", map[string]any{"path": "marker.txt"}); isErr || !strings.Contains(text, "the claude-code project") {
		t.Errorf("file_read in the client's project: %v %s", isErr, text)
	}
	shown := false
	for _, si := range st.Service.Sessions().List() {
		shown = shown || (si.Identity == "claude-code" && !si.Stateless && si.Transport == "unix" && si.WorkspaceFrom == "client")
	}
	if !shown {
		t.Errorf("no Sessions entry for the relay with identity claude-code and its project: %+v", st.Service.Sessions().List())
	}

	// Connecting again replaces the token; the old one is refused, saying how to fix it.
	out, errOut, err = runCLI(t, bin, env, home, "clients", "connect", "claude-code", "--yes")
	if err != nil {
		t.Fatalf("clients connect again: %v\n%s%s", err, out, errOut)
	}
	printed += out + errOut
	_, _, token2 := claudeEntry(t, home)
	if token2 == token || !strings.HasPrefix(token2, "sbc_") {
		t.Fatalf("reconnecting kept the token (%q → %q)", token, token2)
	}
	if stderr, err := relayRefused(t, env, command, args, token); err == nil || !strings.Contains(stderr, "switchboard clients connect NAME") {
		t.Errorf("relay with the replaced token: %v\n%s", err, stderr)
	}
	if stderr, err := relayRefused(t, env, command, args, "sbc_"+strings.Repeat("0", 64)); err == nil || !strings.Contains(stderr, "client token refused") {
		t.Errorf("relay with an unknown token: %v\n%s", err, stderr)
	}
	cs2, err := relayConnect(t, env, command, args, token2)
	if err != nil {
		t.Fatalf("relay with the new token: %v", err)
	}
	if _, isErr := apptest.ToolText(t, cs2, "file_read", map[string]any{"path": "marker.txt"}); isErr {
		t.Error("file_read with the new token failed")
	}

	// Disconnecting revokes the token: the live connection ends, the next relay is refused.
	out, errOut, err = runCLI(t, bin, env, home, "clients", "disconnect", "claude-code", "--yes")
	if err != nil {
		t.Fatalf("clients disconnect: %v\n%s%s", err, out, errOut)
	}
	printed += out + errOut
	done := make(chan error, 1)
	go func() { done <- cs2.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Error("the revoked client's connection is still open")
	}
	if stderr, err := relayRefused(t, env, command, args, token2); err == nil || !strings.Contains(stderr, "client token refused") {
		t.Errorf("relay after disconnect: %v\n%s", err, stderr)
	}

	// Never in plain text: the CLI's output, the hub's data (audit log, token digests, logs).
	for _, tok := range []string{token, token2} {
		if strings.Contains(printed, tok) {
			t.Errorf("clients connect printed the token")
		}
		_ = filepath.WalkDir(st.Config.DataDir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			if b, err := os.ReadFile(path); err == nil && strings.Contains(string(b), tok) {
				t.Errorf("the client token is in %s in plain text", path)
			}
			return nil
		})
	}
}
