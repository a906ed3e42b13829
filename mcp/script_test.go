package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/audit"
	"github.com/switchboard-hub/switchboard/internal/policy"
	"github.com/switchboard-hub/switchboard/mcp/tools"
)

// scriptHub is a hub in script mode on a Unix socket with a policy that denies file_delete and
// asks before file_rename, and the audit lines it writes.
func scriptHub(t *testing.T) (*Service, string, func() []audit.Entry) {
	t.Helper()
	p, err := policy.Compile(policy.Config{Rules: []policy.RuleSpec{
		{Tool: "file_delete", Action: "deny"},
		{Tool: "file_rename", Action: "ask"},
	}}, policy.RootsConfig{})
	if err != nil {
		t.Fatal(err)
	}
	al := audit.Discard()
	var mu sync.Mutex
	var entries []audit.Entry
	al.OnRecord(func(e audit.Entry) { mu.Lock(); entries = append(entries, e); mu.Unlock() })
	s, sock := modesHub(t, WithAudit(al), WithPolicy(policy.NewStore("", p), policy.NewBroker()), WithToolsMode("script", nil), WithSearch())
	for name, body := range map[string]string{
		"a.go":       "package a\n\n// TODO: one\n// TODO: two\nfunc A() {}\n",
		"b/b.go":     "package b\n\n// TODO: three\n",
		"notes.txt":  "keep me\n",
		"rename.txt": "x\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(s.WorkspaceDir(), name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(s.WorkspaceDir(), name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return s, sock, func() []audit.Entry { mu.Lock(); defer mu.Unlock(); return slices.Clone(entries) }
}

func runScript(t *testing.T, cs *sdk.ClientSession, code string, timeout float64) (*sdk.CallToolResult, tools.ScriptRunOutput) {
	t.Helper()
	args := map[string]any{"code": code}
	if timeout != 0 {
		args["timeout"] = timeout
	}
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "script_run", Arguments: args})
	if err != nil {
		t.Fatalf("script_run: %v", err)
	}
	var out tools.ScriptRunOutput
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(b, &out)
	}
	return res, out
}

// TestScriptRunThroughTheHub: a script-mode client lists script_run and runs a script that
// greps, reads and counts through the hub's tools and returns only the answer; a denied call
// inside it is a catchable error; every inner call is audited as its own tool, linked to the
// script's call; console lines and the script's line and column come back; script_run cannot
// call itself.
func TestScriptRunThroughTheHub(t *testing.T) {
	_, sock, audited := scriptHub(t)
	cs := dialMode(t, sock, "", nil)
	if names := listNames(t, cs); !slices.Contains(names, "script_run") || !slices.Contains(names, "tools_search") || slices.Contains(names, "file_grep") {
		t.Fatalf("script mode lists %v", names)
	}
	res, out := runScript(t, cs, `
const g = await tools.file_grep({pattern: "TODO"});
const per = {};
for (const m of g.matches) per[m.path] = (per[m.path] || 0) + 1;
console.log("files:", Object.keys(per).length);
let denied = "";
try { await tools.file_delete({path: "notes.txt"}); } catch (e) { denied = e.message; }
const [a, b] = await Promise.all([tools.file_read({path: "a.go"}), tools.file_exists({path: "b/b.go"})]);
return {per, denied: denied.includes("denied"), firstLine: a.content.split("\n")[0], exists: b.exists};
`, 0)
	if res.IsError {
		t.Fatalf("script failed: %s", toolText(res))
	}
	got, _ := json.Marshal(out.Result)
	if !strings.Contains(string(got), `"per":{"a.go":2,"b/b.go":1}`) || !strings.Contains(string(got), `"denied":true`) ||
		!strings.Contains(string(got), `"firstLine":"package a"`) || !strings.Contains(string(got), `"exists":true`) {
		t.Fatalf("result %s", got)
	}
	if out.Calls != 4 || len(out.Logs) != 1 || out.Logs[0] != "files: 2" || !strings.Contains(toolText(res), "files: 2") {
		t.Fatalf("calls %d logs %q text %q", out.Calls, out.Logs, toolText(res))
	}

	var outer audit.Entry
	inner := map[string]audit.Entry{}
	for _, e := range audited() {
		if e.Tool == "script_run" {
			outer = e
		}
	}
	for _, e := range audited() {
		if e.Parent != "" && e.Parent == outer.CallID {
			inner[e.Tool] = e
		}
	}
	if outer.CallID == "" {
		t.Fatalf("script_run not audited with a call id: %+v", audited())
	}
	for _, name := range []string{"file_grep", "file_delete", "file_read", "file_exists"} {
		if _, ok := inner[name]; !ok {
			t.Fatalf("inner %s not audited under %s: %+v", name, outer.CallID, audited())
		}
	}
	if inner["file_delete"].Decision != "deny" || inner["file_delete"].Session != outer.Session {
		t.Fatalf("inner file_delete audited as %+v", inner["file_delete"])
	}

	for _, c := range []struct{ code, want string }{
		{"const x = 1;\nreturn y + 1;", "line 2"},
		{"return await tools.script_run({code: 'return 1'});", "script_run is not a tool offered to this script"},
		{"return await tools.no_such_tool({});", "tools_search"},
		{"return require('fs');", "require"},
	} {
		res, _ := runScript(t, cs, c.code, 0)
		if !res.IsError || !strings.Contains(toolText(res), c.want) {
			t.Errorf("%q: %v %q, want an error containing %q", c.code, res.IsError, toolText(res), c.want)
		}
	}
}

// TestScriptRunAskInsideAScript: asks inside a script reach the client while the script waits,
// and each answer decides its inner call: a 2025-era client is sent elicitation/create; a
// 2026-07-28 client gets each question as the script_run call's input_required, and its retry
// brings the answer to the inner call (the script keeps running in between: nothing runs twice).
// The first rename is approved, the second declined; the script sees the refusal and goes on.
func TestScriptRunAskInsideAScript(t *testing.T) {
	for _, proto := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(proto, func(t *testing.T) {
			s, sock, audited := scriptHub(t)
			var asked []string
			var mu sync.Mutex
			opts := &sdk.ClientOptions{ElicitationHandler: func(_ context.Context, r *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
				mu.Lock()
				defer mu.Unlock()
				asked = append(asked, r.Params.Message)
				if len(asked) == 1 {
					return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow"}}, nil
				}
				return &sdk.ElicitResult{Action: "decline"}, nil
			}}
			cs := dialModeProto(t, sock, "", opts, proto)
			res, out := runScript(t, cs, `
				await tools.file_read({path: "notes.txt"});
				await tools.file_rename({oldPath: "rename.txt", newPath: "renamed.txt"});
				let second = "ran";
				try { await tools.file_rename({oldPath: "renamed.txt", newPath: "again.txt"}); } catch (e) { second = "refused: " + e.message; }
				return {second};`, 0)
			mu.Lock()
			defer mu.Unlock()
			if len(asked) != 2 || !strings.Contains(asked[0], "file_rename") || !strings.Contains(asked[1], "again.txt") {
				t.Fatalf("asked %q (script: %v %s)", asked, res.IsError, toolText(res))
			}
			if res.IsError {
				t.Fatalf("the script failed: %s", toolText(res))
			}
			got, _ := out.Result.(map[string]any)
			if second, _ := got["second"].(string); !strings.Contains(second, "refused") || !strings.Contains(second, "declined") {
				t.Fatalf("result %v: want the second rename refused as declined", out.Result)
			}
			if _, err := os.Stat(filepath.Join(s.WorkspaceDir(), "renamed.txt")); err != nil {
				t.Fatalf("the approved rename did not happen: %v", err)
			}
			if _, err := os.Stat(filepath.Join(s.WorkspaceDir(), "again.txt")); err == nil {
				t.Fatal("the declined rename happened")
			}
			if p := s.Approvals().Pending(); len(p) != 0 {
				t.Errorf("a question also went to the dashboard: %+v", p)
			}
			counts := map[string]int{}
			for _, e := range audited() {
				if e.Outcome != "" {
					counts[e.Tool]++
				}
			}
			if counts["script_run"] != 1 || counts["file_read"] != 1 || counts["file_rename"] != 2 {
				t.Errorf("audited calls %v: want script_run once, its file_read once, file_rename twice", counts)
			}
		})
	}
}

// TestScriptRunLimitsKeepTheHubServing: a script that loops forever is stopped at its timeout
// with an error naming the limit, an allocation bomb by the memory limit, and bad arguments are
// refused naming the field; another client is served throughout, and a script of 1,000 inner
// calls runs.
func TestScriptRunLimitsKeepTheHubServing(t *testing.T) {
	_, sock, _ := scriptHub(t)
	cs := dialMode(t, sock, "", nil)
	other := dialMode(t, sock, "full", nil)
	done := make(chan struct{})
	var served int
	go func() {
		defer close(done)
		deadline := time.Now().Add(1500 * time.Millisecond)
		for time.Now().Before(deadline) {
			if r, err := other.CallTool(context.Background(), &sdk.CallToolParams{Name: "file_exists", Arguments: map[string]any{"path": "a.go"}}); err == nil && !r.IsError {
				served++
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	start := time.Now()
	res, _ := runScript(t, cs, "for (;;) {}", 1)
	if !res.IsError || !strings.Contains(toolText(res), "wall") || time.Since(start) > 10*time.Second {
		t.Fatalf("an endless loop: %v %q after %s", res.IsError, toolText(res), time.Since(start))
	}
	<-done
	if served < 10 {
		t.Fatalf("the other client was served %d times while the script looped", served)
	}
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"code": ""}, "code: required"},
		{map[string]any{"code": "return 1", "timeout": -1}, "timeout:"},
		{map[string]any{"code": "return 1", "timeout": 100000}, "timeout:"},
	} {
		r, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "script_run", Arguments: c.args})
		if err != nil || !r.IsError || !strings.Contains(toolText(r), c.want) {
			t.Errorf("%v: %v %v %q", c.args, err, r != nil && r.IsError, toolText(r))
		}
	}
	res, out := runScript(t, cs, `let n = 0; for (let i = 0; i < 1000; i++) { if ((await tools.file_exists({path: "a.go"})).exists) n++; } return n;`, 0)
	if res.IsError || fmt.Sprint(out.Result) != "1000" || out.Calls != 1000 {
		t.Fatalf("1,000 inner calls: %v %q %v calls %d", res.IsError, toolText(res), out.Result, out.Calls)
	}
}
