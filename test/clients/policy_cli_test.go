//go:build linux

package clients_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/testutil"
)

// askScenario: the model calls a denied tool, then one the policy asks about, then answers.
//
//	turn 1: file_delete {path: keep.txt}          (rule: deny)
//	turn 2: file_write {path: asked.txt, content} (rule: ask)
//	turn 3: project_run {action: build}           (its exec call: rule ask, an inner question)
//	turn 4: final text
func askScenario(nonce string) *scenario {
	return &scenario{anchor: "file_delete", load: []string{"file_delete", "file_write", "project_run"},
		step: func(m *modelStub, tools []string, results []toolResult) (string, map[string]any, string) {
			switch len(results) {
			case 0:
				return pickTool(tools, "file_delete"), map[string]any{"path": "keep.txt"}, ""
			case 1:
				return pickTool(tools, "file_write"), map[string]any{"path": "asked.txt", "content": nonce}, ""
			case 2:
				return pickTool(tools, "project_run"), map[string]any{"action": "build"}, ""
			}
			return "", nil, "done"
		}}
}

// TestCLIsDeniedAndAsked: each agent CLI, in its own era and over each transport, meets the
// policy: a denied call comes back to its model as a normal error result naming the rule (not a
// protocol error that ends the turn), and a call the policy asks about is put to the CLI (an
// elicitation for a 2025-era client that declares it, input_required for a 2026-07-28 one) or,
// for a CLI that cannot answer, fails at once with the fix. What each CLI answers unattended
// (`-p`, `exec`, `--prompt`) is its own choice: the test records it from the hub's audit trail
// and requires the hub to have kept the file untouched unless the CLI approved.
func TestCLIsDeniedAndAsked(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the client matrix builds the binary and runs the agent CLIs")
	}
	for _, c := range []client{claudeCode(t), geminiCLI(t), codex(t)} {
		for _, transport := range []string{"connect", "http"} {
			t.Run(c.name+"/"+transport, func(t *testing.T) {
				skipUnselected(t, c.name, transport)
				runAskRow(t, c, transport)
			})
		}
	}
}

func runAskRow(t *testing.T, c client, transport string) {
	bin := switchboardBinary(t)
	r := newRun(t, "workspace")
	writeFile(t, filepath.Join(r.workspace, "keep.txt"), "kept")
	writeFile(t, filepath.Join(r.workspace, "go.mod"), "module example.com/asked\n\ngo 1.22\n")
	writeFile(t, filepath.Join(r.workspace, "main.go"), "package main\n\nfunc main() {}\n")
	nonce := "nonce-" + randomHex(t, 8)
	r.model = newModelStub(t, nonce)
	r.model.scenario = askScenario(nonce)
	dirs := newHubDirs(t, filepath.Join(r.tmp, "hub"))
	writeFile(t, filepath.Join(dirs.config, "switchboard", "config.toml"),
		"[[policy.rules]]\ntool = \"file_delete\"\naction = \"deny\"\n\n[[policy.rules]]\ntool = \"file_write\"\naction = \"ask\"\n\n"+
			"[[policy.rules]]\ntool = \"exec\"\naction = \"ask\"\n")
	r.srv = hubFor(t, transport, bin, r.workspace, dirs)
	argv, env := c.prepare(t, r)
	out, _, runErr := runCLI(t, r.workspace, argv, env)
	defer func() {
		if t.Failed() {
			t.Logf("%s\n%s output (last 6000 bytes):\n%s", r.model.report(), c.name, tail(out, 6000))
		}
	}()
	if runErr != nil {
		t.Errorf("%s exited with %v", c.name, runErr)
	}
	r.model.mu.Lock()
	results, final := slices.Clone(r.model.results), r.model.final
	r.model.mu.Unlock()
	if !final || len(results) < 3 {
		t.Fatalf("the conversation did not reach its end (%d tool results)", len(results))
	}
	del, ask := results[0], results[1]
	if !strings.Contains(del.Text, "denied") || !strings.Contains(del.Text, "rule 1") {
		t.Errorf("the denied file_delete reached the model as %q (error flag %v), want an error result naming rule 1", del.Text, del.IsError)
	}
	if b, err := os.ReadFile(filepath.Join(r.workspace, "keep.txt")); err != nil || string(b) != "kept" {
		t.Errorf("keep.txt after the denied delete: %q %v", b, err)
	}

	var lines []auditLine
	testutil.Poll(3*time.Second, func() bool {
		lines = readAudit(dirs)
		return slices.ContainsFunc(lines, func(l auditLine) bool { return strings.HasSuffix(l.Tool, "file_write") && l.Decision == "ask" })
	})
	i := slices.IndexFunc(lines, func(l auditLine) bool { return strings.HasSuffix(l.Tool, "file_write") && l.Decision == "ask" })
	if i < 0 {
		t.Fatalf("no audit line for the asked file_write: %+v", lines)
	}
	w := lines[i]
	written, _ := os.ReadFile(filepath.Join(r.workspace, "asked.txt"))
	t.Logf("%s over %s (MCP %s): the ask ended %q by %q; the model got %.300q (error flag %v)", c.name, transport, w.Protocol, w.Approval, w.By, ask.Text, ask.IsError)
	// How each CLI answers unattended, as observed with its pinned release (docs/clients.md):
	// Claude Code (2026-07-28: input_required) cancels, Codex (2025: elicitation) declines,
	// Gemini CLI declares no elicitation, so nobody can answer and the call fails at once.
	wantEnd := map[string]string{"claude-code": "dismissed by client", "codex": "declined by client", "gemini-cli": "unanswerable by nobody"}[c.name]
	if got := w.Approval + " by " + w.By; got != wantEnd {
		t.Errorf("the ask ended %q, want %q", got, wantEnd)
	}
	if !strings.Contains(ask.Text, "rule 2") {
		t.Errorf("the refused file_write reached the model without naming its rule: %.400q", ask.Text)
	}
	switch {
	case w.Approval == "approved":
		if string(written) != nonce {
			t.Errorf("approved, yet asked.txt = %q", written)
		}
	case len(written) != 0:
		t.Errorf("the ask ended %q, yet asked.txt was written", w.Approval)
	case ask.Text == "":
		t.Errorf("the refused file_write reached the model with no text")
	}

	// project_run's exec call asks too: an inner question, which reaches a CLI as its era takes
	// questions (held project_run answering input_required over a session; over stateless HTTP
	// a 2026-07-28 client has no call to hold, so it goes to the dashboard, which nobody opened).
	run := results[2]
	var ex auditLine
	testutil.Poll(3*time.Second, func() bool {
		for _, l := range readAudit(dirs) {
			if strings.HasSuffix(l.Tool, "exec") && l.Parent != "" && l.Decision == "ask" && l.Approval != "" {
				ex = l
				return true
			}
		}
		return false
	})
	t.Logf("%s over %s: project_run's exec question ended %q by %q; the model got %.300q", c.name, transport, ex.Approval, ex.By, run.Text)
	wantInner := wantEnd
	if c.name == "claude-code" && transport == "http" {
		wantInner = "unanswerable by nobody"
	}
	if got := ex.Approval + " by " + ex.By; got != wantInner {
		t.Errorf("project_run's exec question ended %q, want %q", got, wantInner)
	}
	if !strings.Contains(run.Text, "rule 3") {
		t.Errorf("the refused project_run reached the model without naming its rule: %.400q", run.Text)
	}
}
