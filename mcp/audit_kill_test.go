package mcp

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/audit"
	"github.com/switchboard-hub/switchboard/internal/process"
	"github.com/switchboard-hub/switchboard/mcp/tools"
)

// TestAuditStartedSurvivesHubKill runs a real hub process (this test binary re-executed) over
// stdio, and calls exec with a command that SIGKILLs the hub. The hub dies mid-call, before it
// could write the outcome; the audit file must still hold the "started" line with the whole
// command.
func TestAuditStartedSurvivesHubKill(t *testing.T) {
	if dir := os.Getenv("SWITCHBOARD_TEST_AUDIT_HUB"); dir != "" {
		runAuditHub(t, dir)
		return
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestAuditStartedSurvivesHubKill$", "-test.count=1")
	cmd.Env = append(os.Environ(), "SWITCHBOARD_TEST_AUDIT_HUB="+dir)
	cmd.Stderr = os.Stderr
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "killer", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	marker := "tail-marker-" + strings.Repeat("z", 500)
	_, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "exec", Arguments: map[string]any{
		"command": "sh", "args": []string{"-c", "kill -KILL $PPID; sleep 5; : " + marker}}})
	if err == nil {
		t.Fatal("exec that kills the hub returned a result")
	}
	_ = cs.Close() // the transport reaps the dead hub
	b, err := os.ReadFile(filepath.Join(dir, "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	var started bool
	for _, ln := range strings.Split(string(b), "\n") {
		if !strings.Contains(ln, `"tool":"exec"`) {
			continue
		}
		if !strings.Contains(ln, `"outcome":"started"`) {
			// The hub died inside the call: it never wrote an outcome. If it did, the command did
			// not kill it and the test proves nothing.
			t.Fatalf("the exec call has an outcome line, so the hub was not killed mid-call: %s", ln)
		}
		if strings.Contains(ln, marker) && strings.Contains(ln, `"level":"SECURITY"`) {
			started = true
		}
	}
	if !started {
		t.Fatalf("no started line for the exec that killed the hub; audit log:\n%s", b)
	}
}

func runAuditHub(t *testing.T, dir string) {
	al, err := audit.New(audit.Options{File: filepath.Join(dir, "audit.log")})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(WithWorkspaceRoot(dir), WithAudit(al), WithProcessService(process.New(process.Options{})))
	if err != nil {
		t.Fatal(err)
	}
	_ = s.ServeStdio(context.Background())
}

// A long command reaches the audit file whole (its tail included); the activity feed carries a
// bounded head that says where the rest is.
func TestAuditKeepsLongCommandActivityStaysSmall(t *testing.T) {
	file := filepath.Join(t.TempDir(), "audit.log")
	al, err := audit.New(audit.Options{File: file})
	if err != nil {
		t.Fatal(err)
	}
	s := newTestService(t, WithAudit(al), WithProcessService(process.New(process.Options{})))
	cs := connect(t, s)
	script := "echo " + strings.Repeat("a", 3000) + " >/dev/null; echo tail-that-matters"
	var out tools.ExecOutput
	mustCall(t, cs, "exec", map[string]any{"command": "sh", "args": []string{"-c", script}, "stdin": "typed secret"}, &out)
	al.Flush()
	b, _ := os.ReadFile(file)
	if n := strings.Count(string(b), "tail-that-matters"); n != 2 { // started and outcome lines
		t.Fatalf("the command's tail is in %d audit lines, want 2:\n%.300s", n, b)
	}
	if strings.Contains(string(b), "typed secret") || !strings.Contains(string(b), "stdin=<12 bytes sha256=") {
		t.Fatalf("stdin not recorded as size and sha256:\n%.300s", b)
	}
	act := s.Activity()
	last := act[len(act)-1]
	if len(last.Args) > activityArgsCap+100 || !strings.Contains(last.Args, "whole in the audit log") {
		t.Fatalf("activity args (%d bytes): %.200s", len(last.Args), last.Args)
	}
}
