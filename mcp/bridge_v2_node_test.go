//go:build unix

package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/audit"
	"github.com/switchboard-hub/switchboard/internal/testutil"
	"github.com/switchboard-hub/switchboard/internal/upstream"
)

// The real TypeScript SDK v2 server (@modelcontextprotocol/server, pinned in test/node) as an
// upstream of the hub: test/node/upstream-v2.mjs serves one factory's tools over stateless
// Streamable HTTP (createMcpHandler) and over stdio (serveStdio), and asks the way a 2026-era
// server does, by returning input_required. go-sdk v1.8 clients of both eras call it through
// the hub's Unix socket. Beside TestBridgeFourWays, whose 2026-era upstream is go-sdk's.

// v2Upstream is one running upstream-v2.mjs over HTTP and the directory it records in.
type v2Upstream struct {
	url, marks string
}

// v2Script is test/node/upstream-v2.mjs, once the SDK is installed in test/node (a failure
// under CI=true when it is not).
func v2Script(t *testing.T) string {
	t.Helper()
	mod := testutil.NodeModule(t, "@modelcontextprotocol/server")
	return filepath.Join(mod, "..", "..", "..", "upstream-v2.mjs")
}

// startV2HTTP runs the fixture over HTTP on a free port; it is stopped when the test ends.
func startV2HTTP(t *testing.T, script string) *v2Upstream {
	t.Helper()
	u := &v2Upstream{marks: t.TempDir()}
	cmd := exec.Command("node", script)
	cmd.Dir = filepath.Dir(script)
	cmd.Env = append(os.Environ(), "PORT=0", "MARK_DIR="+u.marks)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := make(chan string, 1)
	go func() { // ends with the process's stdout
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "listening on "); ok {
				lines <- rest
			}
		}
	}()
	select {
	case u.url = <-lines:
	case <-time.After(testutil.Patience):
		t.Fatal("upstream-v2.mjs did not say where it listens")
	}
	return u
}

// v2Call is one call as the fixture recorded it.
type v2Call struct {
	Tool, Era, Protocol, Tag string
	Round                    int
	ProgressToken            any
}

func v2Calls(t *testing.T, marks string) []v2Call {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(marks, "calls.jsonl"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var calls []v2Call
	for line := range strings.Lines(string(raw)) {
		var c v2Call
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatalf("calls.jsonl: %v: %q", err, line)
		}
		calls = append(calls, c)
	}
	return calls
}

// v2Hub is a hub with the fixture as two upstreams, "tsv2" (HTTP) and "tsv2stdio" (stdio), both
// approved, on a Unix socket.
func v2Hub(t *testing.T, opts ...Option) (h *bridgeHub, httpUp *v2Upstream, stdioMarks string) {
	t.Helper()
	script := v2Script(t)
	httpUp = startV2HTTP(t, script)
	// The stdio server runs confined (internal/upstream/confine.go): it may write in the
	// servers' workspace, so it records there.
	upWorkspace := t.TempDir()
	stdioMarks = filepath.Join(upWorkspace, "marks")
	if err := os.Mkdir(stdioMarks, 0o700); err != nil {
		t.Fatal(err)
	}
	h = &bridgeHub{workspace: t.TempDir()}
	m, err := upstream.New(upstream.Options{ApprovalsFile: filepath.Join(t.TempDir(), "a.json"), Workspace: upWorkspace, Reserved: ToolsetNames()})
	if err != nil {
		t.Fatal(err)
	}
	al := audit.Discard()
	al.OnRecord(func(e audit.Entry) { h.auditMu.Lock(); h.audited = append(h.audited, e); h.auditMu.Unlock() })
	h.s = newTestService(t, append([]Option{WithWorkspaceRoot(h.workspace), WithAudit(al), WithUpstreams(m)}, opts...)...)
	h.m = m
	specs := []upstream.Spec{
		{Name: "tsv2", URL: httpUp.url},
		{Name: "tsv2stdio", Command: "node", Args: []string{script, "--stdio"}, Env: map[string]string{"MARK_DIR": stdioMarks}},
	}
	if err := approveSync(m, specs); err != nil {
		t.Fatal(err)
	}
	for _, sp := range specs {
		waitUpstream(t, m, sp.Name, func(st upstream.Status) bool { return st.State == upstream.StateRunning })
		if _, err := m.Approve(t.Context(), sp.Name); err != nil {
			t.Fatal(err)
		}
		waitUpstream(t, m, sp.Name, func(upstream.Status) bool { return hasTool(h.s, sp.Name+"__slow") })
	}
	h.sock = serveUnix(t, h.s)
	return h, httpUp, stdioMarks
}

// TestBridgeTypeScriptV2Upstream: the TypeScript SDK v2 server, over stateless HTTP and over
// stdio, under a 2025-11-25 and a 2026-07-28 client: its tools are listed, a plain call
// answers, its elicitation and sampling (input_required) are put to the calling client and the
// answers reach it, its roots request is answered with the client's workspace, its progress
// reaches the client with the client's token, a client's cancellation reaches its handler, and
// a tool it adds reaches clients of both eras once approved.
func TestBridgeTypeScriptV2Upstream(t *testing.T) {
	h, httpUp, stdioMarks := v2Hub(t)
	clients := []*bridgeClient{
		dialBridge(t, h.sock, "client-2025", "2025-11-25", clientCaps{elicit: true, sample: true}),
		dialBridge(t, h.sock, "client-2026", "", clientCaps{elicit: true, sample: true}),
	}
	ups := []struct{ name, marks string }{{"tsv2", httpUp.marks}, {"tsv2stdio", stdioMarks}}
	for _, c := range clients {
		for _, u := range ups {
			t.Run(u.name+", "+c.name, func(t *testing.T) {
				names := toolNames(t, c.cs)
				for _, tool := range []string{"echo", "ask", "sample", "roots", "slow"} {
					if !slices.Contains(names, u.name+"__"+tool) {
						t.Fatalf("tools/list lacks %s__%s: %v", u.name, tool, names)
					}
				}
				if got, want := callText(t, c.cs, u.name+"__echo", map[string]any{"text": "hi " + c.name}), "echo: hi "+c.name; got != want {
					t.Fatalf("plain call: %q, want %q", got, want)
				}
				// The hub speaks 2026-07-28 to this server on both transports, whatever the
				// client's era: every call carried the envelope and was served by a modern
				// instance (the SDK's 2025 fallback never ran).
				calls := v2Calls(t, u.marks)
				if last := calls[len(calls)-1]; last.Tool != "echo" || last.Era != "modern" || last.Protocol != "2026-07-28" {
					t.Errorf("the upstream saw %+v, want a modern 2026-07-28 echo", last)
				}

				before := len(h.asked(u.name))
				q := fmt.Sprintf("May %s go on, %s?", u.name, c.name)
				if got, want := callText(t, c.cs, u.name+"__ask", map[string]any{"question": q}), "answered: accept yes from "+c.name; got != want {
					t.Fatalf("elicitation: %q, want %q", got, want)
				}
				p := fmt.Sprintf("a haiku for %s from %s", c.name, u.name)
				if got, want := callText(t, c.cs, u.name+"__sample", map[string]any{"prompt": p}), "sampled: sampled by "+c.name+": "+p; got != want {
					t.Fatalf("sampling: %q, want %q", got, want)
				}
				if shown := c.shown(); !slices.Contains(shown, q) || !slices.Contains(shown, p) {
					t.Errorf("the client was shown %q; want the server's question and prompt", shown)
				}
				if n := len(h.asked(u.name)) - before; n != 2 {
					t.Errorf("%d audit lines for the two questions of %s", n, u.name)
				}
				if got, want := callText(t, c.cs, u.name+"__roots", map[string]any{}), "roots: file://"+h.workspace; got != want {
					t.Errorf("roots %q, want %q", got, want)
				}

				// Progress, with the client's own token.
				tok := c.name + "-" + u.name
				pp := &sdk.CallToolParams{Name: u.name + "__slow", Arguments: map[string]any{"ms": 400}}
				pp.SetProgressToken(tok)
				res, err := c.cs.CallTool(t.Context(), pp)
				if err != nil || toolText(res) != "slept 400" {
					t.Fatalf("slow: %v %q", err, toolText(res))
				}
				testutil.Eventually(t, "progress with the client's token", func() bool {
					c.mu.Lock()
					defer c.mu.Unlock()
					return slices.Contains(c.progress, any(tok))
				})

				// Cancellation: the client gives up; the server's handler sees its signal abort.
				tag := strings.ReplaceAll(tok, "_", "-")
				ctx, cancel := context.WithCancel(t.Context())
				done := make(chan error, 1)
				go func() { // ends when the call is cancelled below
					_, err := c.cs.CallTool(ctx, &sdk.CallToolParams{Name: u.name + "__slow", Arguments: map[string]any{"ms": 20000, "tag": tag}})
					done <- err
				}()
				testutil.Eventually(t, "the slow call running upstream", func() bool {
					_, err := os.Stat(filepath.Join(u.marks, "started-"+tag))
					return err == nil
				})
				cancel()
				<-done
				testutil.Eventually(t, "the cancellation reaching "+u.name, func() bool {
					_, err := os.Stat(filepath.Join(u.marks, "cancelled-"+tag))
					return err == nil
				})
			})
		}
	}

	// A new tool upstream: the server announces it (on subscriptions/listen over HTTP, as a
	// notification over stdio), the hub holds it until approved, then tells clients of both
	// eras, and it answers.
	for _, c := range clients {
		for len(c.toolsChanged) > 0 {
			<-c.toolsChanged
		}
	}
	for _, u := range ups {
		if got := callText(t, clients[0].cs, u.name+"__add-tool", map[string]any{}); got != "added a tool" {
			t.Fatalf("%s add-tool: %q", u.name, got)
		}
		waitUpstream(t, h.m, u.name, func(st upstream.Status) bool { return st.Held == 1 })
		if _, err := h.m.Approve(t.Context(), u.name, "added"); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range clients {
		testutil.Eventually(t, c.name+" told of the new tools", func() bool {
			names := toolNames(t, c.cs)
			return slices.Contains(names, "tsv2__added") && slices.Contains(names, "tsv2stdio__added")
		})
		select {
		case <-c.toolsChanged:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no tools/list_changed", c.name)
		}
		for _, u := range ups {
			if got := callText(t, c.cs, u.name+"__added", map[string]any{}); got != "added" {
				t.Fatalf("%s: %s__added: %q", c.name, u.name, got)
			}
		}
	}
}

// TestBridgeTypeScriptV2UpstreamTask: the TypeScript SDK v2 server implements no Tasks runtime
// (its Tasks types are wire vocabulary only), so a long call to it becomes a task at the hub:
// past task_after the client gets a handle, tasks_get collects the server's result, and
// tasks_cancel reaches the server's handler as a cancellation.
func TestBridgeTypeScriptV2UpstreamTask(t *testing.T) {
	h, httpUp, _ := v2Hub(t, WithTasks(t.TempDir(), taskAfter))
	for _, protocol := range []string{"2025-11-25", ""} {
		c := dialBridge(t, h.sock, "tasker-"+protocol, protocol, clientCaps{})
		id := handOff(t, c.cs, "tsv2__slow", map[string]any{"ms": 3000}, 3*time.Second)
		out, res := collect(t, c.cs, id)
		if out.Status != "completed" || toolText(res) != "slept 3000" {
			t.Fatalf("%s: the task's result: %+v %q", c.name, out, toolText(res))
		}
		tag := "task-cancel" + strings.ReplaceAll(protocol, "-", "")
		id = handOff(t, c.cs, "tsv2__slow", map[string]any{"ms": 60000, "tag": tag}, 60*time.Second)
		testutil.Eventually(t, "the slow call running upstream", func() bool {
			_, err := os.Stat(filepath.Join(httpUp.marks, "started-"+tag))
			return err == nil
		})
		if got := callText(t, c.cs, "tasks_cancel", map[string]any{"task_id": id}); strings.Contains(got, "error") {
			t.Fatalf("tasks_cancel: %q", got)
		}
		testutil.Eventually(t, "tasks_cancel reaching the server", func() bool {
			_, err := os.Stat(filepath.Join(httpUp.marks, "cancelled-"+tag))
			return err == nil
		})
		if out, _ := collect(t, c.cs, id); out.Status != "cancelled" {
			t.Fatalf("%s: after tasks_cancel: %+v", c.name, out)
		}
	}
}
