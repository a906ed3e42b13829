//go:build unix

package mcp_test

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestTypeScriptSDKTrust drives policy, approvals and roots with the official TypeScript SDK
// (test/node/trust.mjs): a client that declares elicitation and roots over stdio and Streamable
// HTTP, and one that declares neither over the Unix socket, answered through the headless
// dashboard's /api.
func TestTypeScriptSDKTrust(t *testing.T) {
	dir := nodeTestDir(t)
	bin := buildBinary(t)
	out, err := runNode(t, dir, 3*time.Minute, "trust.mjs", bin)
	if err != nil {
		t.Fatalf("node trust.mjs: %v\nfailed checks:\n%s\n\nfull output:\n%s",
			err, strings.Join(tapFailure.FindAllString(out, -1), "\n"), out)
	}
	for _, label := range []string{"stdio: ask → decline", "http: roots declined", "unix, no elicitation: dashboard approval", "policy reload"} {
		if !strings.Contains(out, " - "+label) {
			t.Errorf("check %q did not run; output:\n%s", label, out)
		}
	}
	if m := regexp.MustCompile(`(?m)^# pass (\d+)$`).FindStringSubmatch(out); m == nil || m[1] == "0" {
		t.Errorf("no passing checks; output:\n%s", out)
	}
}
