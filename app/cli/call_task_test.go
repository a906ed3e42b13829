//go:build unix

package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/switchboard-hub/switchboard/app/apptest"
)

// TestCallFollowsATask: `call` of a tool that runs past the hub's task_after (1s here) prints the
// call's own result once it ends, not the task handle the hub answered with meanwhile.
func TestCallFollowsATask(t *testing.T) {
	bin := apptest.Binary(t)
	env := apptest.Env(t)
	cfgDir := filepath.Join(apptest.EnvValue(env, "XDG_CONFIG_HOME"), "switchboard")
	if err := os.MkdirAll(cfgDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfgDir, "config.toml"), []byte("task_after = \"1s\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(apptest.EnvValue(env, "XDG_RUNTIME_DIR"), "switchboard", "mcp.sock")
	startUnixHub(t, bin, env, "serve", "--unix", sock, "--workspace", t.TempDir())

	out, errOut, err := runCLI(t, bin, env, t.TempDir(), "call", "exec", "--args", `{"command":"sh","args":["-c","sleep 3; echo after-the-handle"]}`)
	if err != nil || errOut != "" {
		t.Fatalf("call exec: %v\nstdout: %s\nstderr: %s", err, out, errOut)
	}
	var res struct {
		Stdout   string `json:"stdout"`
		ExitCode int    `json:"exit_code"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Stdout != "after-the-handle\n" {
		t.Fatalf("call printed %q (%v), want exec's own result", out, err)
	}
}
