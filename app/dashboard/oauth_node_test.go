//go:build linux

package dashboard

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/procgroup"
)

// TestTypeScriptSDKOAuthClient: the official TypeScript SDK's OAuth client provider (npm,
// pinned in test/node) through the whole flow against a hub with auth = "oauth":
// registration, authorization approved through DecideApproval, code exchange, tools within the
// grant, the SDK's own refresh on a 401, RevokeGrant and the 401 after it (test/node/oauth-client.mjs).
// It needs `make node-deps`; under CI=true a missing dependency fails.
func TestTypeScriptSDKOAuthClient(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the Node client")
	}
	dir, err := filepath.Abs(filepath.Join("..", "..", "test", "node"))
	if err != nil {
		t.Fatal(err)
	}
	skip := t.Skipf
	if os.Getenv("CI") == "true" {
		skip = t.Fatalf // under CI a missing dependency is a failure, never a skip
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		skip("test/node/node_modules is absent: run `make node-deps` (%v)", err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		skip("node is not on PATH: %v", err)
	}
	h := newOAuthHub(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "oauth-client.mjs", h.mcpURL, h.dashURL, "dash-token")
	cmd.Dir = dir
	cmd.SysProcAttr = procgroup.GroupAttr()
	cmd.Cancel = func() error { return procgroup.Signal(cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	if err != nil || regexp.MustCompile(`(?m)^not ok`).MatchString(out.String()) {
		t.Fatalf("node oauth-client.mjs: %v\n%s", err, out.String())
	}
	if m := regexp.MustCompile(`(?m)^# pass (\d+)$`).FindStringSubmatch(out.String()); m == nil || m[1] == "0" || !strings.Contains(out.String(), "after RevokeGrant") {
		t.Fatalf("the flow did not run to its end:\n%s", out.String())
	}
	t.Logf("TypeScript SDK OAuth client:\n%s", out.String())
}
