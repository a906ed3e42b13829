//go:build linux

package clients_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	mcpclient "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-hub/switchboard/internal/testutil"
	"github.com/switchboard-hub/switchboard/mcp"
)

// The tools modes (docs/architecture.md, "Tools modes…") with real clients. In script mode each
// agent CLI, set up the way `switchboard clients connect` writes it, lists the script-mode
// catalogue and runs a script the stand-in model writes: the script calls file_grep and
// file_read inside the hub and returns one computed value. In search mode the CLIs, the AI SDK
// and mark3labs/mcp-go find a tool with tools_search and call it with tools_call; a tools_call
// of a tool the policy denies comes back as an ordinary error result.

// scriptCode is the script the model writes: a grep and a read through the hub, one value back.
// The value can only come from running it: the TODO count is random, and the key is the file's
// (lower-case) nonce in upper case.
const scriptCode = `const g = await tools.file_grep({pattern: "TODO"});
const files = [...new Set(g.matches.map(m => m.path))];
const key = await tools.file_read({path: "src/key.txt"}); // keyFile
return {todos: g.matches.length, files: files.length, key: key.content.trim().toUpperCase()};`

// scriptScenario: turn 1 calls script_run with scriptCode, turn 2 answers with a final text.
func scriptScenario() *scenario {
	return &scenario{anchor: "script_run", load: []string{"script_run", "tools_search"},
		step: func(m *modelStub, tools []string, results []toolResult) (string, map[string]any, string) {
			if len(results) == 0 {
				return pickTool(tools, "script_run"), map[string]any{"code": scriptCode, "timeout": 30}, ""
			}
			return "", nil, "The script answered: " + results[0].Text
		}}
}

// scriptWorkspace fills the workspace the script searches: todos TODO lines in two files and
// src/key.txt holding the nonce.
func scriptWorkspace(t *testing.T, workspace, nonce string, todos int) {
	t.Helper()
	var a, b strings.Builder
	a.WriteString("package a\n\n")
	b.WriteString("package b\n\n")
	for i := range todos {
		w := &a
		if i%2 == 1 {
			w = &b
		}
		fmt.Fprintf(w, "// TODO: item %d\n", i)
	}
	writeFile(t, filepath.Join(workspace, "src", "a.go"), a.String())
	writeFile(t, filepath.Join(workspace, "src", "b", "b.go"), b.String())
	writeFile(t, filepath.Join(workspace, keyFile), nonce+"\n")
}

// auditLine is the part of an audit log line (internal/audit, JSON) the tests read.
type auditLine struct {
	Tool     string `json:"tool"`
	Protocol string `json:"protocol"`
	Call     string `json:"call"`
	Parent   string `json:"parent"`
	Outcome  string `json:"outcome"`
	Decision string `json:"decision"`
	Approval string `json:"approval"`
	By       string `json:"by"`
	Error    string `json:"error"`
}

// readAudit reads the hub's audit log (DATA_DIR/logs/audit.log; lines reach it within
// audit.FlushInterval).
func readAudit(dirs hubDirs) []auditLine {
	b, _ := os.ReadFile(filepath.Join(dirs.data, "switchboard", "logs", "audit.log"))
	var out []auditLine
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		var l auditLine
		if json.Unmarshal(sc.Bytes(), &l) == nil && l.Tool != "" {
			out = append(out, l)
		}
	}
	return out
}

// catalogue checks the tools a CLI offered the model in a tools mode: of Switchboard's (named
// mcp__switchboard__… or mcp_switchboard_…), exactly the mode's catalogue — the core
// (mcp.DefaultToolsCore), tools_search, result_read, result_search, and script_run (script) or
// tools_call (search) — and none of the tools behind it.
func catalogue(mode string, offered []string) error {
	want := append(slices.Clone(mcp.DefaultToolsCore), "tools_search", "result_read", "result_search")
	absent := []string{"file_grep", "dir_list", "file_write"}
	if mode == mcp.ToolsModeScript {
		want, absent = append(want, mcp.ToolScriptRun), append(absent, "tools_call")
	} else {
		want, absent = append(want, "tools_call"), append(absent, mcp.ToolScriptRun)
	}
	got := map[string]bool{}
	var extra []string
	for _, n := range offered {
		short, ok := strings.CutPrefix(n, "mcp__"+serverName+"__")
		if !ok {
			short, ok = strings.CutPrefix(n, "mcp_"+serverName+"_")
		}
		if !ok {
			continue // the CLI's own tools
		}
		got[short] = true
		if !slices.Contains(want, short) {
			extra = append(extra, n)
		}
	}
	var missing []string
	for _, n := range want {
		if !got[n] {
			missing = append(missing, n)
		}
	}
	for _, n := range absent {
		if got := pickTool(offered, n); got != "" && !slices.Contains(extra, got) {
			extra = append(extra, got)
		}
	}
	if len(missing)+len(extra) > 0 {
		return fmt.Errorf("not the %s-mode catalogue: missing %v, listed %v (offered: %s)", mode, missing, extra, strings.Join(offered, " "))
	}
	return nil
}

// searchScenario: turn 1 looks for a grep tool with tools_search, turn 2 calls the file_grep it
// found with tools_call (a search for the nonce), turn 3 calls file_delete — which the hub's
// policy denies — with tools_call, turn 4 answers with a final text.
func searchScenario() *scenario {
	return &scenario{anchor: "tools_call", load: []string{"tools_search", "tools_call"},
		step: func(m *modelStub, tools []string, results []toolResult) (string, map[string]any, string) {
			call := pickTool(tools, "tools_call")
			switch len(results) {
			case 0:
				return pickTool(tools, "tools_search"), map[string]any{"query": "search the contents of files for a pattern", "limit": 5}, ""
			case 1:
				if !strings.Contains(results[0].Text, "file_grep") {
					return "", nil, "tools_search found no file_grep"
				}
				return call, map[string]any{"name": "file_grep", "arguments": map[string]any{"pattern": m.nonce}}, ""
			case 2:
				return call, map[string]any{"name": "file_delete", "arguments": map[string]any{"path": keyFile}}, ""
			}
			return "", nil, "Searched, called, and was refused."
		}}
}

// keyFile is the workspace file that holds the nonce.
const keyFile = "src/key.txt"

// TestToolsModeCLIs: Claude Code, Gemini CLI and Codex in script mode run a script through
// script_run, and in search mode find a tool with tools_search and call it with tools_call. The
// entry is what `switchboard clients connect NAME --socket SOCK` writes (the relay), in two ways
// of picking the mode: the hub's (`serve --tools-mode MODE`, a plain entry: rows …/MODE-hub) and
// the client's own (`clients connect --tools-mode MODE`, the hub in full mode: …/MODE-client).
func TestToolsModeCLIs(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the client matrix builds the binary and runs the agent CLIs")
	}
	for _, c := range []client{claudeCode(t), geminiCLI(t), codex(t)} {
		for _, mode := range []string{mcp.ToolsModeScript, mcp.ToolsModeSearch} {
			for _, via := range []string{"hub", "client"} {
				row := mode + "-" + via
				t.Run(c.name+"/"+row, func(t *testing.T) {
					skipUnselected(t, c.name, row)
					runModeRow(t, c, mode, via)
				})
			}
		}
	}
}

func runModeRow(t *testing.T, c client, mode, via string) {
	bin := switchboardBinary(t)
	r := newRun(t, "workspace")
	tmp := r.tmp
	nonce := "nonce-" + randomHex(t, 8)
	todos := 3 + rand.IntN(6)
	scriptWorkspace(t, r.workspace, nonce, todos)
	r.model = newModelStub(t, nonce)
	r.model.scenario = scriptScenario()
	if mode == mcp.ToolsModeSearch {
		r.model.scenario = searchScenario()
	}

	dirs := newHubDirs(t, filepath.Join(tmp, "hub"))
	writeFile(t, filepath.Join(dirs.config, "switchboard", "config.toml"), "[[policy.rules]]\ntool = \"file_delete\"\naction = \"deny\"\n")
	sockDir, err := os.MkdirTemp("", "sb-sock-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	sock := filepath.Join(sockDir, "mcp.sock")
	flags := []string{"--unix", sock}
	connectArgs := []string{"clients", "connect", c.name, "--socket", sock}
	if via == "hub" {
		flags = append(flags, "--tools-mode", mode)
	} else {
		connectArgs = append(connectArgs, "--tools-mode", mode)
	}
	startHub(t, bin, r.workspace, dirs, flags, regexp.MustCompile(`unix listening on (\S+)`))

	// The CLI's own settings (model endpoint, auth, no telemetry) as the matrix writes them, with
	// no MCP server: `clients connect` adds Switchboard's entry to them.
	r.noEntry = true
	argv, env := c.prepare(t, r)
	entry := writeEntry(t, c.name, r, bin, connectArgs, env)
	t.Logf("switchboard %s wrote:\n%s", strings.Join(connectArgs, " "), entry)

	start := time.Now()
	out, leftover, runErr := runCLI(t, r.workspace, argv, env)
	t.Logf("%s in %s mode (%s): %s", c.name, mode, via, time.Since(start).Round(100*time.Millisecond))
	defer func() {
		if t.Failed() {
			t.Logf("%s\n%s output (last 6000 bytes):\n%s", r.model.report(), c.name, tail(out, 6000))
			t.Logf("audit: %+v", readAudit(dirs))
		}
	}()
	if runErr != nil {
		t.Errorf("%s exited with %v", c.name, runErr)
	}
	if leftover != "" {
		t.Errorf("processes the CLI started still run 5 s after it exited:\n%s", leftover)
	}

	r.model.mu.Lock()
	tools, results, final := slices.Clone(r.model.tools), slices.Clone(r.model.results), r.model.final
	deferred := slices.Clone(r.model.deferred)
	r.model.mu.Unlock()
	// Claude Code defers MCP tools behind its ToolSearch (naming them in the request, loading a
	// tool's schema when the model selects it): what it declares is both lists.
	if err := catalogue(mode, append(slices.Clone(tools), deferred...)); err != nil {
		t.Error(err)
	}
	if len(deferred) > 0 {
		slices.Sort(deferred)
		t.Logf("%s named these tools as deferred (behind ToolSearch): %s", c.name, strings.Join(slices.Compact(deferred), " "))
	}
	var mcpTools []string
	for _, n := range tools {
		if strings.Contains(n, serverName) {
			mcpTools = append(mcpTools, n)
		}
	}
	t.Logf("%s offered the model %d tools, of Switchboard's: %s", c.name, len(tools), strings.Join(mcpTools, " "))
	if !final {
		t.Errorf("the conversation did not reach the final turn")
	}
	if mode == mcp.ToolsModeSearch {
		checkSearchRow(t, c.name, dirs, r.workspace, nonce, results)
		return
	}

	key := strings.ToUpper(nonce)
	if len(results) == 0 {
		t.Fatalf("the model never got script_run's result")
	}
	res := results[0]
	if !strings.HasSuffix(res.Name, "script_run") || res.IsError {
		t.Errorf("first tool result: %s (error %v), want script_run's: %.600s", res.Name, res.IsError, res.Text)
	}
	if !strings.Contains(res.Text, key) || !regexp.MustCompile(`todos\W{0,4}:\s*`+fmt.Sprint(todos)+`\b`).MatchString(res.Text) ||
		!regexp.MustCompile(`files\W{0,4}:\s*2\b`).MatchString(res.Text) {
		t.Errorf("script_run's result does not hold the computed value (todos %d, files 2, key %s): %.600s", todos, key, res.Text)
	}
	t.Logf("script_run's result as %s handed it to the model: %.300s", c.name, res.Text)

	// The hub's audit log: the script's call, and its inner calls with it as their parent.
	testutil.Poll(testutil.Patience, func() bool { return scriptAudited(readAudit(dirs)) == nil })
	if err := scriptAudited(readAudit(dirs)); err != nil {
		t.Error(err)
	}
}

// checkSearchRow checks a search-mode conversation: tools_search found file_grep, tools_call ran
// it (its result names the file holding the nonce), and the denied file_delete came back as a
// result saying so; the hub audited file_grep and file_delete as themselves.
func checkSearchRow(t *testing.T, name string, dirs hubDirs, workspace, nonce string, results []toolResult) {
	t.Helper()
	if len(results) < 3 {
		t.Fatalf("the model got %d tool results, want 3 (tools_search, tools_call file_grep, tools_call file_delete)", len(results))
	}
	for i, w := range []struct{ tool, contains string }{{"tools_search", "file_grep"}, {"tools_call", keyFile}, {"tools_call", "denied"}} {
		res := results[i]
		if !strings.HasSuffix(res.Name, w.tool) || !strings.Contains(res.Text, w.contains) {
			t.Errorf("tool result %d: %s, want %s's containing %q: %.600s", i+1, res.Name, w.tool, w.contains, res.Text)
		}
		// Codex hands the model no error flag (a function_call_output is text either way; an
		// error result's is a list of its text items): there the text says it.
		if res.IsError != (i == 2 && name != "codex") {
			t.Errorf("tool result %d (%s): error flag %v as %s handed it to the model: %.300s", i+1, w.tool, res.IsError, name, res.Text)
		}
		t.Logf("result %d (%s, error %v) as %s handed it to the model: %.200s", i+1, w.tool, res.IsError, name, res.Text)
	}
	searchAudited(t, dirs, filepath.Join(workspace, keyFile), nonce+"\n")
}

// scriptAudited checks the audit log holds an ok script_run and, with its call id as parent, an
// ok file_grep and file_read.
func scriptAudited(lines []auditLine) error {
	runs := map[string]bool{}
	for _, l := range lines {
		if l.Tool == "script_run" && l.Outcome == "ok" && l.Call != "" {
			runs[l.Call] = true
		}
	}
	if len(runs) != 1 {
		return fmt.Errorf("audit: want one script_run with a call id, got %d", len(runs))
	}
	inner := map[string]bool{}
	for _, l := range lines {
		if runs[l.Parent] && l.Outcome == "ok" {
			inner[l.Tool] = true
		}
		if l.Parent == "" && (l.Tool == "file_grep" || l.Tool == "file_read") {
			return fmt.Errorf("audit: %s audited as a client's own call (no parent)", l.Tool)
		}
	}
	if !inner["file_grep"] || !inner["file_read"] {
		return fmt.Errorf("audit: the inner calls under the script's call: %v, want file_grep and file_read", inner)
	}
	return nil
}

// writeEntry runs `switchboard clients connect` with the CLI's environment (its HOME, its
// CLAUDE_CONFIG_DIR or CODEX_HOME) and returns the file it wrote, with what a user adds for a
// non-interactive run: Codex's default_tools_approval_mode (codex exec cannot ask, and
// script_run is not read-only; `clients connect` leaves that choice to the user).
func writeEntry(t *testing.T, name string, r *run, bin string, args, env []string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = r.workspace, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("switchboard %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	var file string
	switch name {
	case "claude-code":
		file = filepath.Join(r.home, ".claude", ".claude.json")
	case "gemini-cli":
		file = filepath.Join(r.home, ".gemini", "settings.json")
	case "codex":
		file = filepath.Join(r.home, ".codex", "config.toml")
		f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		// The table clients connect wrote is the file's last: this key lands in it.
		_, err = f.WriteString("default_tools_approval_mode = \"approve\"\n")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), bin) {
		t.Fatalf("%s does not name %s:\n%s", file, bin, b)
	}
	return string(b)
}

// searchHub starts a hub over HTTP with a policy that denies file_delete (its config file) and
// hello.txt holding nonce in its workspace; extra are more serve flags.
func searchHub(t *testing.T, nonce string, extra ...string) (url, token, workspace string, dirs hubDirs) {
	t.Helper()
	bin := switchboardBinary(t)
	tmp := t.TempDir()
	workspace = filepath.Join(tmp, "workspace")
	writeFile(t, filepath.Join(workspace, scriptPath), nonce)
	dirs = newHubDirs(t, filepath.Join(tmp, "hub"))
	writeFile(t, filepath.Join(dirs.config, "switchboard", "config.toml"), "[[policy.rules]]\ntool = \"file_delete\"\naction = \"deny\"\n")
	token = "search-" + randomHex(t, 16)
	got := startHub(t, bin, workspace, dirs, append([]string{"--http", "127.0.0.1:0", "--token", token}, extra...), regexp.MustCompile(`http listening on (\S+)`))
	return got[0], token, workspace, dirs
}

// searchAudited checks the hub audited the calls tools_call named as those tools (file_grep ok,
// file_delete denied by the policy), never as tools_call, and that file, the one the denied call
// named, still holds want.
func searchAudited(t *testing.T, dirs hubDirs, file, want string) {
	t.Helper()
	find := func(lines []auditLine) (grep, del bool, asCall []auditLine) {
		for _, l := range lines {
			switch {
			case l.Tool == "file_grep" && l.Outcome == "ok":
				grep = true
			case l.Tool == "file_delete" && l.Decision == "deny":
				del = true
			case l.Tool == "tools_call":
				asCall = append(asCall, l)
			}
		}
		return grep, del, asCall
	}
	testutil.Poll(testutil.Patience, func() bool { g, d, _ := find(readAudit(dirs)); return g && d })
	lines := readAudit(dirs)
	if g, d, asCall := find(lines); !g || !d || len(asCall) > 0 {
		t.Errorf("audit: file_grep ok %v, file_delete denied %v, audited as tools_call %+v; lines: %+v", g, d, asCall, lines)
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != want {
		t.Errorf("the denied file_delete touched %s: %q %v", file, b, err)
	}
}

// TestSearchModeAISDK: the AI SDK's MCP client (default options) on `?tools_mode=search` lists
// the search-mode catalogue, finds file_grep (not listed) with tools_search, calls it with
// tools_call, and gets a denied tools_call as an error result (aisdk_search.mjs).
func TestSearchModeAISDK(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the client matrix builds the binary and runs the agent CLIs")
	}
	skipUnselected(t, "ai-sdk", "search")
	node := node22(t)
	need(t, filepath.Join(modulesDir(t), "@ai-sdk", "mcp"), "the AI SDK MCP client (npm @ai-sdk/mcp)")
	nonce := "nonce-" + randomHex(t, 8)
	url, token, workspace, dirs := searchHub(t, nonce)
	script, err := filepath.Abs("aisdk_search.mjs")
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(t.TempDir(), "home")
	if err := os.MkdirAll(filepath.Join(home, "tmp"), 0o700); err != nil {
		t.Fatal(err)
	}
	out, leftover, runErr := runCLI(t, filepath.Dir(script), []string{node, script, url + "?tools_mode=search", token, nonce}, baseEnv(home))
	t.Logf("AI SDK in search mode:\n%s", out)
	if runErr != nil {
		t.Errorf("node aisdk_search.mjs: %v", runErr)
	}
	for _, s := range []string{"connect", "tools/list", "tools_search", "tools_call file_grep", "tools_call file_delete"} {
		if !regexp.MustCompile(`(?m)^ok - ` + regexp.QuoteMeta(s)).MatchString(out) {
			t.Errorf("step %q did not pass", s)
		}
	}
	if leftover != "" {
		t.Errorf("processes left running:\n%s", leftover)
	}
	searchAudited(t, dirs, filepath.Join(workspace, scriptPath), nonce)
}

// TestSearchModeMCPGo: mark3labs/mcp-go v1.2.1 (default options: 2026-07-28, stateless) against
// a hub in search mode (`serve --tools-mode search`): the same steps as the AI SDK's.
func TestSearchModeMCPGo(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds the binary")
	}
	skipUnselected(t, "mcp-go", "search")
	nonce := "nonce-" + randomHex(t, 8)
	url, token, workspace, dirs := searchHub(t, nonce, "--tools-mode", "search")
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	tr, err := transport.NewStreamableHTTP(url, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	if err != nil {
		t.Fatal(err)
	}
	c := mcpclient.NewClient(tr)
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	hello, err := c.Initialize(ctx, mgo.InitializeRequest{Params: mgo.InitializeParams{ClientInfo: mgo.Implementation{Name: "mcp-go", Version: "1.2.1"}}})
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	t.Logf("mcp-go: protocol %s", hello.ProtocolVersion)

	list, err := c.ListTools(ctx, mgo.ListToolsRequest{})
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	if !slices.Contains(names, "tools_search") || !slices.Contains(names, "tools_call") || slices.Contains(names, "file_grep") ||
		slices.Contains(names, "file_delete") || slices.Contains(names, "script_run") {
		t.Errorf("search mode lists %v", names)
	}

	text := func(r *mgo.CallToolResult) string {
		var b strings.Builder
		for _, ct := range r.Content {
			if tc, ok := ct.(mgo.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String()
	}
	call := func(name string, args map[string]any) *mgo.CallToolResult {
		t.Helper()
		r, err := c.CallTool(ctx, mgo.CallToolRequest{Params: mgo.CallToolParams{Name: name, Arguments: args}})
		if err != nil {
			t.Fatalf("%s %v: a protocol error, want a result: %v", name, args, err)
		}
		return r
	}

	r := call("tools_search", map[string]any{"query": "search the contents of files for a pattern", "limit": 5})
	var found struct {
		Tools []struct {
			Name        string `json:"name"`
			InputSchema string `json:"input_schema"`
		} `json:"tools"`
		Total int `json:"total"`
	}
	b, _ := json.Marshal(r.StructuredContent)
	if err := json.Unmarshal(b, &found); err != nil || r.IsError {
		t.Fatalf("tools_search: %v %s", err, text(r))
	}
	var target string
	for _, f := range found.Tools {
		if f.Name == "file_grep" && strings.Contains(f.InputSchema, `"pattern"`) {
			target = f.Name
		}
	}
	if target == "" || found.Total < 40 {
		t.Fatalf("tools_search did not find file_grep (with its schema) among %d tools: %s", found.Total, b)
	}

	r = call("tools_call", map[string]any{"name": target, "arguments": map[string]any{"pattern": nonce}})
	if b, _ := json.Marshal(r.StructuredContent); r.IsError || !strings.Contains(string(b), scriptPath) {
		t.Errorf("tools_call %s: error %v, %s", target, r.IsError, text(r))
	}
	r = call("tools_call", map[string]any{"name": "file_delete", "arguments": map[string]any{"path": scriptPath}})
	if !r.IsError || !strings.Contains(strings.ToLower(text(r)), "denied") {
		t.Errorf("tools_call file_delete (denied by the policy): error %v, %s", r.IsError, text(r))
	}
	searchAudited(t, dirs, filepath.Join(workspace, scriptPath), nonce)
}
