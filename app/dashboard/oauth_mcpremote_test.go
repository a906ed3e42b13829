//go:build linux

package dashboard

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/procgroup"
	"github.com/switchboard-hub/switchboard/internal/testutil"
)

// TestMCPRemoteOAuthClient: mcp-remote (npm, pinned in test/node) as an inbound OAuth client of
// a hub with auth = "oauth", the way a stdio-only MCP client reaches a remote hub. The TypeScript
// SDK's client talks stdio to mcp-remote; mcp-remote gets the hub's 401, discovers, registers
// (RFC 7591) and opens the authorization URL through $BROWSER, which a headless Chromium
// (Debian's, driven by playwright-core) loads; the user allows it through the dashboard's
// approvals with the files toolset only; Chromium follows the hub to mcp-remote's loopback
// callback, mcp-remote exchanges the code, and the client lists the hub's tools and calls
// file_write and file_read through it (a process tool is refused: not granted). The grant is
// listed by /api/grants and the file is in the hub's workspace (test/node/mcp-remote.mjs).
// It needs `make node-deps` and /usr/bin/chromium; under CI=true a missing dependency fails.
func TestMCPRemoteOAuthClient(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping mcp-remote and Chromium")
	}
	testutil.NodeModule(t, "mcp-remote")
	testutil.NodeModule(t, "playwright-core")
	testutil.NodeModule(t, "@modelcontextprotocol/sdk")
	chromium := os.Getenv("SWITCHBOARD_E2E_CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	if _, err := os.Stat(chromium); err != nil {
		msg := fmt.Sprintf("%s is missing: run build/setup-deps.sh (Debian's chromium) (%v)", chromium, err)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	dir, err := filepath.Abs(filepath.Join("..", "..", "test", "node"))
	if err != nil {
		t.Fatal(err)
	}
	h := newOAuthHub(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "mcp-remote.mjs", h.mcpURL, h.dashURL, "dash-token")
	cmd.Dir = dir
	cmd.SysProcAttr = procgroup.GroupAttr()
	cmd.Cancel = func() error { return procgroup.Signal(cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	if err != nil || regexp.MustCompile(`(?m)^not ok`).MatchString(out.String()) {
		t.Fatalf("node mcp-remote.mjs: %v\n%s", err, out.String())
	}
	if m := regexp.MustCompile(`(?m)^# pass (\d+)$`).FindStringSubmatch(out.String()); m == nil || m[1] != "9" {
		t.Fatalf("the flow did not run to its end:\n%s", out.String())
	}
	t.Logf("mcp-remote:\n%s", out.String())

	// From the hub's side: the grant in Settings and the file the tool call wrote.
	grants := h.api(t, "GET", "/api/grants", nil)["grants"].([]any)
	if len(grants) != 1 {
		t.Fatalf("grants: %v", grants)
	}
	if g := grants[0].(map[string]any); g["clientName"] != "MCP CLI Proxy" || fmt.Sprint(g["scopes"]) != "[files]" || g["lastUsed"] == nil {
		t.Fatalf("grant: %v", g)
	}
	b, err := os.ReadFile(filepath.Join(h.st.Config.Workspace, "mcp-remote.txt"))
	if err != nil || !strings.Contains(string(b), "written through mcp-remote") {
		t.Fatalf("the file written through mcp-remote: %q %v", b, err)
	}
}
