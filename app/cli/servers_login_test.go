//go:build linux

package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/app/apptest"
	"github.com/switchboard-hub/switchboard/internal/oauthclient/oauthtest"
	"github.com/switchboard-hub/switchboard/internal/secrets/secretstest"
	"github.com/switchboard-hub/switchboard/internal/testutil"
	"github.com/switchboard-hub/switchboard/internal/upstream"
)

// protectedEcho is a go-sdk MCP server with an echo tool behind the test AS's tokens.
func protectedEcho(t *testing.T, as *oauthtest.AS) *oauthtest.Resource {
	srv := sdk.NewServer(&sdk.Implementation{Name: "protected", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "echo", Description: "echoes"}, func(_ context.Context, _ *sdk.CallToolRequest, in struct {
		Message string `json:"message"`
	}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "Echo: " + in.Message}}}, nil, nil
	})
	return oauthtest.NewResource(t, as, sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
}

// TestServersLoginThroughRunningHub: a remote server that asks for OAuth waits in "signin"
// under a running hub, its tools answering with how to sign in; `servers login` prints the page
// (the test's browser follows it), stores the grant in the real keyring and tells the hub, whose
// server then runs and serves calls; `servers logout` puts it back. No token shows in any file
// under the hub's home, its stderr, `servers list --json`, `servers logs` or a call's answer.
func TestServersLoginThroughRunningHub(t *testing.T) {
	secretstest.Start(t)
	as := oauthtest.NewAS(t)
	res := protectedEcho(t, as)
	bin := apptest.Binary(t)
	env := apptest.Env(t)
	cfgDir := hubConfigDir(t, env)
	if err := os.WriteFile(filepath.Join(cfgDir, "config.toml"), []byte("[[servers]]\nname = \"remote\"\nurl = \""+res.URL+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(apptest.EnvValue(env, "XDG_RUNTIME_DIR"), "switchboard", "mcp.sock")
	ws := t.TempDir()
	hub, _ := apptest.Start(t, bin, env, "", unixListening, "serve", "--unix", sock, "--workspace", ws)
	var seen []string // everything the CLI printed
	run := func(wantErr bool, args ...string) string {
		t.Helper()
		out, errOut, err := runCLI(t, bin, env, ws, args...)
		seen = append(seen, out, errOut)
		if (err != nil) != wantErr {
			t.Fatalf("switchboard %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, out, errOut)
		}
		return out + errOut
	}
	state := func() (string, string) {
		var list app.ServerList
		if err := json.Unmarshal([]byte(run(false, "servers", "list", "--json")), &list); err != nil || len(list.Servers) != 1 {
			t.Fatalf("servers list: %v %+v", err, list)
		}
		return list.Servers[0].State, list.Servers[0].LastError
	}
	waitFor := func(want string) {
		t.Helper()
		var got, why string
		if !testutil.Poll(30*time.Second, func() bool { got, why = state(); return got == want }) {
			t.Fatalf("state %q (%s), want %q", got, why, want)
		}
	}
	// Approving the command starts it: the server answers 401, and the hub waits for the user.
	out := run(true, "servers", "approve", "remote", "--yes")
	if !strings.Contains(out, "Approved the command of remote") || !strings.Contains(out, "needs you to sign in") {
		t.Fatalf("approve before sign-in:\n%s", out)
	}
	waitFor("signin")
	if out := run(false, "servers", "list"); !strings.Contains(out, "signin") || !strings.Contains(out, "switchboard servers login remote") {
		t.Fatalf("servers list does not say how to sign in:\n%s", out)
	}

	if out, _, _ := runCLI(t, bin, env, ws, "doctor"); !strings.Contains(out, "[warn] server remote") || !strings.Contains(out, "switchboard servers login remote") {
		t.Errorf("doctor does not say remote needs a sign-in:\n%s", out)
	}

	// Sign in from the CLI, the browser being an HTTP client that follows the printed page.
	login := exec.Command(bin, "servers", "login", "remote", "--no-browser")
	login.Env, login.Dir = env, ws
	stdout, _ := login.StdoutPipe()
	var loginErr strings.Builder
	login.Stderr = &loginErr
	if err := login.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	var printed strings.Builder
	for sc.Scan() {
		line := sc.Text()
		printed.WriteString(line + "\n")
		if u := strings.TrimSpace(line); strings.HasPrefix(u, as.URL+"/authorize?") {
			_ = oauthtest.Browser(t)(u)
		}
	}
	if err := login.Wait(); err != nil {
		t.Fatalf("servers login: %v\n%s\n%s", err, printed.String(), loginErr.String())
	}
	seen = append(seen, printed.String(), loginErr.String())
	if !strings.Contains(printed.String(), "Signed in to remote with "+as.URL) {
		t.Fatalf("servers login printed:\n%s", printed.String())
	}
	waitFor("running")
	run(false, "servers", "approve", "remote", "--yes")
	if out := run(false, "call", "remote__echo", "--args", `{"message":"signed in"}`); !strings.Contains(out, "Echo: signed in") {
		t.Fatalf("call after sign-in:\n%s", out)
	}
	run(false, "servers", "logs", "remote")

	// Sign out: the grant is forgotten and revoked, calls answer with how to sign in again.
	if out := run(false, "servers", "logout", "remote"); !strings.Contains(out, "Signed out of remote") {
		t.Fatalf("logout:\n%s", out)
	}
	waitFor("signin")
	if out := run(true, "call", "remote__echo", "--args", `{"message":"x"}`); !strings.Contains(out, "server remote needs you to sign in: run `switchboard servers login remote` or click Sign in in the Servers view") {
		t.Fatalf("call after logout:\n%s", out)
	}
	if !strings.Contains(strings.Join(as.Requests(), " "), "POST /revoke") {
		t.Error("logout did not revoke the grant at the authorization server")
	}

	// Tokens sought in every file under the hub's home and runtime dir, its stderr and the
	// CLI's output.
	home := apptest.EnvValue(env, "HOME")
	var everything strings.Builder
	for _, root := range []string{home, apptest.EnvValue(env, "XDG_RUNTIME_DIR"), ws} {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				b, _ := os.ReadFile(p)
				everything.Write(b)
			}
			return nil
		})
	}
	everything.WriteString(strings.Join(hub.Stderr.Lines(), "\n"))
	everything.WriteString(strings.Join(seen, "\n"))
	issued := as.Issued()
	if len(issued) < 2 {
		t.Fatalf("the AS issued %d tokens", len(issued))
	}
	for _, tok := range issued {
		if strings.Contains(everything.String(), tok) {
			t.Errorf("token %q found in a file, log or output", tok)
		}
	}
}

// Without a running hub, `servers login` checks the approvals file, signs in and stores the
// grant in the keyring, where `servers approve` (a private manager) finds it; `servers logout`
// revokes and forgets it, and doctor then says to sign in. A server whose command is not
// approved is not contacted at all.
func TestServersLoginWithoutHub(t *testing.T) {
	secretstest.Start(t)
	as := oauthtest.NewAS(t)
	res := protectedEcho(t, as)
	bin := apptest.Binary(t)
	env := apptest.Env(t) // no hub runs on its socket
	cfgDir := hubConfigDir(t, env)
	spec := upstream.Spec{Name: "remote", URL: res.URL}
	data, err := upstream.AddServer(nil, spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfgDir, "config.toml"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	if out, errOut, err := runCLI(t, bin, env, ws, "servers", "login", "remote", "--no-browser"); err == nil || !strings.Contains(errOut, "its command (") || !strings.Contains(errOut, "is not approved") {
		t.Fatalf("login before approval: %v\n%s\n%s", err, out, errOut)
	}
	if len(res.Seen()) != 0 || len(as.Requests()) != 0 {
		t.Fatalf("contacted before approval: %v %v", res.Seen(), as.Requests())
	}
	apptest.ApproveCommands(t, env, spec)
	login := exec.Command(bin, "servers", "login", "remote", "--no-browser")
	login.Env, login.Dir = env, ws
	stdout, _ := login.StdoutPipe()
	var errOut strings.Builder
	login.Stderr = &errOut
	if err := login.Start(); err != nil {
		t.Fatal(err)
	}
	var printed strings.Builder
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		printed.WriteString(sc.Text() + "\n")
		if u := strings.TrimSpace(sc.Text()); strings.HasPrefix(u, as.URL+"/authorize?") {
			_ = oauthtest.Browser(t)(u)
		}
	}
	if err := login.Wait(); err != nil || !strings.Contains(printed.String(), "Signed in to remote") {
		t.Fatalf("login: %v\n%s\n%s", err, printed.String(), errOut.String())
	}
	// Approving without a hub starts the server in a private manager: it connects with the grant
	// from the keyring and its tools are pinned.
	if out, errOut, err := runCLI(t, bin, env, ws, "servers", "approve", "remote", "--yes"); err != nil || !strings.Contains(out, "remote__echo") {
		t.Fatalf("approve: %v\n%s\n%s", err, out, errOut)
	}
	if out, errOut, err := runCLI(t, bin, env, ws, "servers", "logout", "remote"); err != nil || !strings.Contains(out, "Signed out of remote.") {
		t.Fatalf("logout: %v\n%s\n%s", err, out, errOut)
	}
	if out, _, _ := runCLI(t, bin, env, ws, "doctor"); !strings.Contains(out, "switchboard servers login remote") {
		t.Errorf("doctor after logout:\n%s", out)
	}
	if !strings.Contains(strings.Join(as.Requests(), " "), "POST /revoke") {
		t.Error("logout did not revoke")
	}
}
