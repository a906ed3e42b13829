//go:build unix

package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/app/apptest"
)

// runCLI runs the switchboard binary with env in dir and returns stdout and stderr.
func runCLI(t *testing.T, bin string, env []string, dir string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env, cmd.Dir = env, dir
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}

// TestCallUsesRunningHub: with a hub on the default socket ($XDG_RUNTIME_DIR/switchboard/mcp.sock),
// `call` without --socket goes through it: a process one call starts is listed by the next call,
// which a private hub per call could not do; `tools` lists what that hub serves. Neither says
// anything on stderr.
func TestCallUsesRunningHub(t *testing.T) {
	bin := apptest.Binary(t)
	env := apptest.Env(t)
	sock := filepath.Join(apptest.EnvValue(env, "XDG_RUNTIME_DIR"), "switchboard", "mcp.sock")
	ws := t.TempDir()
	startUnixHub(t, bin, env, "serve", "--unix", sock, "--workspace", ws)
	elsewhere := t.TempDir() // the calls' working directory: not the hub's workspace

	out, errOut, err := runCLI(t, bin, env, elsewhere, "call", "process_start", "--args", `{"command":"sleep","args":["30"]}`)
	if err != nil || errOut != "" {
		t.Fatalf("call process_start: %v\nstdout: %s\nstderr: %s", err, out, errOut)
	}
	var started struct {
		ID  string `json:"id"`
		PID int    `json:"pid"`
	}
	if err := json.Unmarshal([]byte(out), &started); err != nil || started.ID == "" {
		t.Fatalf("process_start result %q: %v", out, err)
	}
	if err := syscall.Kill(started.PID, 0); err != nil {
		t.Fatalf("the started process %d is not running after its call ended: %v (a private hub would have stopped it)", started.PID, err)
	}

	out, errOut, err = runCLI(t, bin, env, elsewhere, "call", "process_list")
	if err != nil || errOut != "" {
		t.Fatalf("call process_list: %v\nstdout: %s\nstderr: %s", err, out, errOut)
	}
	var list struct {
		Processes []struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		} `json:"processes"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("process_list result %q: %v", out, err)
	}
	found := false
	for _, p := range list.Processes {
		found = found || p.ID == started.ID
	}
	if !found {
		t.Errorf("process_list through the hub does not show %s started by the previous call: %s", started.ID, out)
	}

	// --socket still names the socket; the same hub answers.
	out, _, err = runCLI(t, bin, env, elsewhere, "call", "process_stop", "--socket", sock, "--args", `{"id":"`+started.ID+`"}`)
	if err != nil || !strings.Contains(out, started.ID) {
		t.Errorf("call process_stop --socket: %v: %s", err, out)
	}

	out, errOut, err = runCLI(t, bin, env, elsewhere, "tools")
	if err != nil || errOut != "" || !strings.Contains(out, "process_start") || strings.Contains(out, ", off]") {
		t.Errorf("tools with a running hub: %v\nstdout: %s\nstderr: %s", err, out, errOut)
	}
}

// TestCallWithoutHubIsPrivate: with nothing on the default socket, `call` builds a private
// in-process hub with the current directory as its workspace, as before; --socket at a socket
// nobody listens on is an error, not a silent fallback.
func TestCallWithoutHubIsPrivate(t *testing.T) {
	bin := apptest.Binary(t)
	env := apptest.Env(t)
	dir := t.TempDir()
	start := time.Now()
	out, errOut, err := runCLI(t, bin, env, dir, "call", "file_write", "--args", `{"path":"p.txt","content":"private"}`)
	if err != nil {
		t.Fatalf("call file_write without a hub: %v\nstdout: %s\nstderr: %s", err, out, errOut)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "p.txt")); string(b) != "private" {
		t.Errorf("file written by the private hub = %q", b)
	}
	out, _, err = runCLI(t, bin, env, dir, "call", "process_list")
	if err != nil || !strings.Contains(out, `"total": 0`) {
		t.Errorf("process_list on a private hub: %v: %s", err, out)
	}
	t.Logf("two private calls took %v", time.Since(start))

	sock := filepath.Join(apptest.EnvValue(env, "XDG_RUNTIME_DIR"), "nobody.sock")
	_, errOut, err = runCLI(t, bin, env, dir, "call", "process_list", "--socket", sock)
	if err == nil || !strings.Contains(errOut, "--socket "+sock) {
		t.Errorf("call --socket at a dead socket: err %v, stderr %q; want an error naming the socket", err, errOut)
	}
}
