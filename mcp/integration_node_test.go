//go:build unix

package mcp_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/procgroup"
)

// These tests drive a freshly built switchboard binary with clients we did not write: the
// official TypeScript MCP SDK (test/node/client.mjs, over stdio, the Unix socket directly and via
// `switchboard connect`, and Streamable HTTP) and the official MCP conformance suite
// (test/node/conformance.mjs, against `switchboard-dev conformance`). Go tests elsewhere use go-sdk on both ends, which cannot catch a
// wire-format mistake both halves of one SDK share. They need `npm ci` in test/node (`make
// node-deps`); without it they skip, so `go test ./...` works on a machine without npm packages.

// nodeTestDir returns test/node when its npm dependencies are installed, or skips the test.
func nodeTestDir(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: skipping tests that build the binary and run Node clients")
	}
	dir, err := filepath.Abs(filepath.Join("..", "test", "node"))
	if err != nil {
		t.Fatal(err)
	}
	skip := t.Skipf
	if os.Getenv("CI") == "true" {
		skip = t.Fatalf // under CI a missing dependency is a failure, never a skip
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		skip("test/node/node_modules is absent: run `make node-deps` (npm ci in test/node) to run the TypeScript SDK client and the conformance suite (%v)", err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		skip("node is not on PATH (needed for test/node): %v", err)
	}
	return dir
}

// buildBinary builds the pure-Go switchboard binary into a temp dir.
func buildBinary(t *testing.T) string { return buildPackage(t, ".", "switchboard") }

// buildPackage builds a command of this module (pkg relative to the module root) into a temp dir.
func buildPackage(t *testing.T, pkg, name string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, pkg)
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// runNode runs a script under test/node and returns its combined output. The script runs in its
// own process group so a timeout also stops the servers it spawned.
func runNode(t *testing.T, dir string, timeout time.Duration, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Dir = dir
	cmd.SysProcAttr = procgroup.GroupAttr()
	cmd.Cancel = func() error { return procgroup.Signal(cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Errorf("node %s: timed out after %s", strings.Join(args, " "), timeout)
	}
	return out.String(), err
}

var tapFailure = regexp.MustCompile(`(?m)^not ok \d+ - .*$`)

func TestTypeScriptSDKClient(t *testing.T) {
	dir := nodeTestDir(t)
	bin := buildBinary(t)
	out, err := runNode(t, dir, 3*time.Minute, "client.mjs", bin)
	if err != nil {
		t.Fatalf("node client.mjs: %v\nfailed checks:\n%s\n\nfull output:\n%s",
			err, strings.Join(tapFailure.FindAllString(out, -1), "\n"), out)
	}
	// Guard against a client that passes by running nothing: every transport must have run.
	for _, label := range []string{"stdio:", "unix (via switchboard connect):", "unix (raw socket):", "http:", "unix (connect --tools-mode search):"} {
		if !strings.Contains(out, " - "+label) {
			t.Errorf("no checks ran for transport %q; output:\n%s", label, out)
		}
	}
	// Progress, cancellation and logging through the TypeScript SDK, on every transport.
	for _, label := range []string{"stdio:", "unix (via switchboard connect):", "unix (raw socket):", "http:"} {
		for _, what := range []string{"sends progress at least every 2 s", "cancelling exec", "logging: after logging/setLevel"} {
			if !regexp.MustCompile(`(?m)^ok \d+ - ` + regexp.QuoteMeta(label) + ` .*` + regexp.QuoteMeta(what)).MatchString(out) {
				t.Errorf("%s %q did not pass; output:\n%s", label, what, out)
			}
		}
	}
	if m := regexp.MustCompile(`(?m)^# pass (\d+)$`).FindStringSubmatch(out); m == nil || m[1] == "0" {
		t.Errorf("no passing checks reported; output:\n%s", out)
	} else {
		t.Logf("TypeScript SDK client: %s checks passed over stdio, unix (relay and raw) and http", m[1])
	}
}

func TestMCPConformance(t *testing.T) {
	dir := nodeTestDir(t)
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "conformance")); err != nil && os.Getenv("CI") == "true" {
		t.Fatalf("conformance suite not installed in test/node (CI=true): %v", err)
	} else if err != nil {
		t.Skipf("conformance suite not installed in test/node: %v", err)
	}
	bin := buildPackage(t, "./cmd/switchboard-dev", "switchboard-dev")
	out, err := runNode(t, dir, 5*time.Minute, "conformance.mjs", bin)
	if err != nil {
		t.Fatalf("node conformance.mjs: %v\n%s", err, out)
	}
	// Guard against a run that passes by running nothing: every active scenario must pass, with
	// no expected failures (test/node/conformance-baseline.yml is empty).
	for _, scenario := range []string{"server-initialize", "ping", "logging-set-level", "tools-list", "dns-rebinding-protection", "server-sse-multiple-streams",
		"tools-call-with-progress", "tools-call-with-logging", "tools-call-sampling", "tools-call-elicitation", "prompts-get-with-args",
		"resources-templates-read", "resources-subscribe", "completion-complete"} {
		if !regexp.MustCompile(`(?m)^PASS\s+` + regexp.QuoteMeta(scenario) + ` `).MatchString(out) {
			t.Errorf("scenario %s did not pass; output:\n%s", scenario, out)
		}
	}
	if regexp.MustCompile(`(?m)^(XFAIL|FAIL) `).MatchString(out) {
		t.Errorf("a scenario failed or was an expected failure; the baseline must stay empty:\n%s", out)
	}
	if m := regexp.MustCompile(`(?m)^# (\d+) passed, 0 expected failures`).FindStringSubmatch(out); m == nil {
		t.Errorf("no summary with 0 expected failures:\n%s", out)
	} else if n, _ := strconv.Atoi(m[1]); n < 30 {
		t.Errorf("only %d scenarios passed; the active suite has 30", n)
	}
	t.Logf("conformance:\n%s", out)
}
