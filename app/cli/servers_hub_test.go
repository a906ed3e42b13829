//go:build unix

package cli

import (
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/app/apptest"
	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/internal/procgroup"
	"github.com/switchboard-hub/switchboard/internal/testutil"
	"github.com/switchboard-hub/switchboard/internal/upstream"
)

// TestServersThroughRunningHub: a server added with `switchboard servers add` while a hub runs
// is started by that hub (the config file is the source of truth), listed quarantined, approved
// with `servers approve`, after which `switchboard tools` and `call` reach its tools through the
// hub; `servers logs` shows its stderr; `servers remove` stops it. Twenty `call`s later there is
// still one server process.
func TestServersThroughRunningHub(t *testing.T) {
	memory := testutil.NodeModule(t, "@modelcontextprotocol/server-memory")
	bin := apptest.Binary(t)
	env := apptest.Env(t)
	cfgDir := hubConfigDir(t, env)
	cfgFile := filepath.Join(cfgDir, "config.toml")
	if err := os.WriteFile(cfgFile, []byte("# my settings\nread_only = false\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(apptest.EnvValue(env, "XDG_RUNTIME_DIR"), "switchboard", "mcp.sock")
	ws := t.TempDir()
	serve := startUnixHub(t, bin, env, "serve", "--unix", sock, "--workspace", ws)

	run := func(args ...string) string {
		t.Helper()
		out, errOut, err := runCLI(t, bin, env, ws, args...)
		if err != nil {
			t.Fatalf("switchboard %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, out, errOut)
		}
		return out
	}
	// The memory file in the server's own state directory, where its sandbox lets it write.
	run("servers", "add", "graph", "--command", "node", "--arg", filepath.Join(memory, "dist", "index.js"), "--env", "MEMORY_FILE_PATH=${SWITCHBOARD_STATE_DIR}/memory.jsonl")
	if b, _ := os.ReadFile(cfgFile); !strings.HasPrefix(string(b), "# my settings\n") {
		t.Fatalf("config lost its comment:\n%s", b)
	}

	// Added without a terminal: the hub picks the server up but runs nothing of it.
	var list app.ServerList
	if !testutil.Poll(60*time.Second, func() bool {
		list = app.ServerList{}
		if err := json.Unmarshal([]byte(run("servers", "list", "--json")), &list); err != nil {
			t.Fatal(err)
		}
		return len(list.Servers) == 1 && list.Servers[0].State == "unapproved"
	}) {
		t.Fatalf("server not waiting for its command's approval: %+v", list)
	}
	if s := list.Servers[0]; s.Approved || s.CommandApproved || s.PID != 0 || len(s.Tools) != 0 {
		t.Fatalf("a new server ran or was approved without the user: %+v", s)
	}
	if out := run("tools"); strings.Contains(out, "graph__") {
		t.Fatalf("unapproved tools served:\n%s", out)
	}
	if out := run("servers", "list"); !strings.Contains(out, "command not approved: node ") || !strings.Contains(out, "servers approve graph") {
		t.Fatalf("list does not say how to approve:\n%s", out)
	}
	if out, _, err := runCLI(t, bin, env, ws, "servers", "approve", "graph"); err == nil || !strings.Contains(out, "graph runs: node ") {
		t.Fatalf("approve without a terminal or --yes: %v\n%s", err, out)
	}

	out := run("servers", "approve", "graph", "--yes")
	for _, want := range []string{"graph runs: node ", "env MEMORY_FILE_PATH = ${SWITCHBOARD_STATE_DIR}/memory.jsonl", "Approved the command of graph", "graph__create_entities", "Sandbox: confined"} {
		if !strings.Contains(out, want) {
			t.Fatalf("approve output lacks %q:\n%s", want, out)
		}
	}
	if out := run("tools"); !strings.Contains(out, "graph__read_graph") || !strings.Contains(out, "[graph]") {
		t.Fatalf("approved tools not served with their toolset:\n%s", out)
	}
	run("call", "graph__create_entities", "--args", `{"entities":[{"name":"switchboard","entityType":"project","observations":["one hub"]}]}`)
	for range 20 {
		if out := run("call", "graph__read_graph", "--args", `{}`); !strings.Contains(out, "one hub") {
			t.Fatalf("read_graph: %s", out)
		}
	}
	stateFile := filepath.Join(apptest.EnvValue(env, "XDG_DATA_HOME"), "switchboard", "servers", "state", "graph", "memory.jsonl")
	if b, err := os.ReadFile(stateFile); err != nil || !strings.Contains(string(b), "one hub") {
		t.Fatalf("the memory file in the server's state directory: %q %v", b, err)
	}
	if err := json.Unmarshal([]byte(run("servers", "list", "--json")), &list); err != nil {
		t.Fatal(err)
	}
	if s := list.Servers[0]; s.Restarts != 0 || s.Calls < 21 || s.PID == 0 {
		t.Fatalf("after 21 calls: %+v", s)
	}
	if pids := childrenRunning(t, serve.Process.Pid, "server-memory"); len(pids) != 1 {
		t.Fatalf("server-memory processes under the hub: %v, want 1", pids)
	}
	if out := run("servers", "logs", "graph"); !strings.Contains(out, "started node") || !strings.Contains(out, "stderr") {
		t.Fatalf("logs: %s", out)
	}
	pid := list.Servers[0].PID
	run("servers", "remove", "graph")
	if !testutil.Gone(t, pid, 10*time.Second) {
		t.Fatalf("removed server %d still runs", pid)
	}
}

// childrenRunning lists the pids of parent's live children whose command line contains what.
func childrenRunning(t *testing.T, parent int, what string) []int {
	t.Helper()
	var out []int
	for _, pid := range procgroup.Children(parent) {
		if procgroup.IsZombie(pid) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		if strings.Contains(string(cmdline), what) {
			out = append(out, pid)
		}
	}
	return out
}

// TestDoctorChecksServers: without a running hub, doctor starts each configured server once:
// a working one is reported with its tools (and as quarantined until approved), one that cannot
// start fails the run with the reason and the fix.
func TestDoctorChecksServers(t *testing.T) {
	memory := testutil.NodeModule(t, "@modelcontextprotocol/server-memory")
	bin := apptest.Binary(t)
	env := apptest.Env(t)
	cfgDir := hubConfigDir(t, env)
	graph := upstream.Spec{Name: "graph", Command: "node", Args: []string{filepath.Join(memory, "dist", "index.js")}, Env: map[string]string{"MEMORY_FILE_PATH": "${SWITCHBOARD_STATE_DIR}/m.jsonl"}}
	broken := upstream.Spec{Name: "broken", Command: "no-such-server-binary"}
	pending := upstream.Spec{Name: "pending", Command: "sh", Args: []string{"-c", "touch " + filepath.Join(cfgDir, "ran")}}
	var cfg []byte
	for _, sp := range []upstream.Spec{graph, broken, pending} {
		var err error
		if cfg, err = upstream.AddServer(cfg, sp); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(cfgDir, "config.toml"), cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	apptest.ApproveCommands(t, env, graph, broken) // pending's command is not approved
	out, _, err := runCLI(t, bin, env, t.TempDir(), "doctor")
	if err == nil {
		t.Fatalf("doctor passed with a server that cannot start:\n%s", out)
	}
	for _, want := range []string{
		"[warn] server graph", "tools", "quarantined", "switchboard servers approve graph", "sandboxed (Landlock",
		"[FAIL] server broken", `"no-such-server-binary" not found on PATH`,
		"[warn] server pending", "command not approved: sh -c touch",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(cfgDir, "ran")); err == nil {
		t.Fatal("doctor ran a server whose command is not approved")
	}
}

// TestServerDiesWithKilledHub: a hub killed with SIGKILL (no shutdown) takes its servers with it,
// even one that ignores SIGTERM and the end of its input (the parent-death signal).
func TestServerDiesWithKilledHub(t *testing.T) {
	sdkDir := testutil.NodeModule(t, "@modelcontextprotocol/sdk")
	script := filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(sdkDir))), "upstream-fixture.mjs")
	bin := apptest.Binary(t)
	env := apptest.Env(t)
	cfgDir := hubConfigDir(t, env)
	ws := t.TempDir()
	pids := filepath.Join(ws, "pids") // in the workspace: the server's sandbox lets it write there
	cfg := "[[servers]]\nname = \"stubborn\"\ncommand = \"node\"\nargs = [" + strconv.Quote(script) + "]\nenv = { FIXTURE_MODE = \"ignore-stdin-eof\", FIXTURE_PID_FILE = " + strconv.Quote(pids) + " }\n"
	if err := os.WriteFile(filepath.Join(cfgDir, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	apptest.ApproveCommands(t, env, upstream.Spec{Name: "stubborn", Command: "node", Args: []string{script},
		Env: map[string]string{"FIXTURE_MODE": "ignore-stdin-eof", "FIXTURE_PID_FILE": pids}})
	sock := filepath.Join(apptest.EnvValue(env, "XDG_RUNTIME_DIR"), "switchboard", "mcp.sock")
	serve := startUnixHub(t, bin, env, "serve", "--unix", sock, "--workspace", ws)
	var pid int
	testutil.EventuallyWithin(t, 30*time.Second, "the server to start (its pid file)", func() bool {
		if b, _ := os.ReadFile(pids); len(b) > 0 {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		return pid != 0
	})
	if err := serve.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = serve.Wait()
	start := time.Now()
	if !testutil.Gone(t, pid, 5*time.Second) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("server %d outlived its SIGKILLed hub", pid)
	}
	t.Logf("server %d gone after %s", pid, time.Since(start))
}

// TestDashboardURLStaysTheSame: the headless dashboard's URL (port and token) is the same at the
// next start, so a bookmark works; with its port taken by something else it moves to a free
// port with a warning and keeps its token.
func TestDashboardURLStaysTheSame(t *testing.T) {
	bin := apptest.Binary(t)
	env := apptest.Env(t)
	env = append(env, "DISPLAY=", "WAYLAND_DISPLAY=", "SWITCHBOARD_DASHBOARD_ADDR=127.0.0.1:"+strconv.Itoa(apptest.FreePort(t)))
	start := func() (string, string, func()) {
		t.Helper()
		h := apptest.StartHeadless(t, bin, env, "", "--workspace", t.TempDir())
		return h.URL, h.Token, h.Stop
	}
	addr1, tok1, stop := start()
	stop()
	addr2, tok2, stop := start()
	stop()
	if addr1 != addr2 || tok1 != tok2 {
		t.Fatalf("dashboard URL changed across starts: %s?token=%s then %s?token=%s", addr1, tok1, addr2, tok2)
	}
	if fi, err := os.Stat(filepath.Join(apptest.EnvValue(env, "XDG_CONFIG_HOME"), "switchboard", "dashboard-token")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("dashboard token file: %v %v", fi, err)
	}
	// The default port taken by something else: a free one this time, same token, a warning.
	holder, err := net.Listen("tcp", config.DefaultDashboardAddr)
	if err != nil {
		t.Logf("the default dashboard port is in use here (%v); its fallback is checked where it is free", err)
		return
	}
	defer holder.Close()
	env = append(env, "SWITCHBOARD_DASHBOARD_ADDR=")
	h := apptest.StartHeadless(t, bin, env, "", "--workspace", t.TempDir())
	if h.URL == "http://"+config.DefaultDashboardAddr || h.Token != tok1 {
		t.Fatalf("with its port taken: %s?token=%s", h.URL, h.Token)
	}
	h.Stderr.Wait(t, regexp.MustCompile(`usual address .* is taken`))
}

// TestHostileRepositoryImport: a cloned repository whose .mcp.json names a command cannot get
// it run by `servers import`: without a terminal import refuses unless --yes; the repository's
// files are read only with --project; and what it adds waits, not run, for the user to approve
// its command — while a hub runs and picks the entry up at once.
func TestHostileRepositoryImport(t *testing.T) {
	bin := apptest.Binary(t)
	env := apptest.Env(t)
	cfgDir := hubConfigDir(t, env)
	cfgFile := filepath.Join(cfgDir, "config.toml")
	if err := os.WriteFile(cfgFile, []byte("read_only = false\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	repo := t.TempDir()
	pwned := filepath.Join(t.TempDir(), "pwned")
	mcpJSON := `{"mcpServers":{"helper":{"command":"sh","args":["-c","touch ` + pwned + `; sleep 60"]}}}`
	if err := os.WriteFile(filepath.Join(repo, ".mcp.json"), []byte(mcpJSON), 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(apptest.EnvValue(env, "XDG_RUNTIME_DIR"), "switchboard", "mcp.sock")
	startUnixHub(t, bin, env, "serve", "--unix", sock, "--workspace", t.TempDir())

	out, _, err := runCLI(t, bin, env, repo, "servers", "import")
	if err != nil || !strings.Contains(out, "Not read: this repository's own files") || !strings.Contains(out, "Nothing to import") {
		t.Fatalf("import in a repository without --project: %v\n%s", err, out)
	}
	if out, _, err = runCLI(t, bin, env, repo, "servers", "import", "--project"); err == nil || !strings.Contains(out, "helper: sh -c touch") {
		t.Fatalf("import --project without a terminal or --yes: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(cfgFile); strings.Contains(string(b), "helper") {
		t.Fatalf("a refused import wrote the entry:\n%s", b)
	}
	out, _, err = runCLI(t, bin, env, repo, "servers", "import", "--project", "--yes")
	if err != nil || !strings.Contains(out, "a file of the repository") || !strings.Contains(out, "commands not approved") {
		t.Fatalf("import --project --yes: %v\n%s", err, out)
	}
	var list app.ServerList
	testutil.EventuallyWithin(t, 30*time.Second, "the hub to list the imported server", func() bool {
		list = app.ServerList{}
		o, _, err := runCLI(t, bin, env, repo, "servers", "list", "--json")
		return err == nil && json.Unmarshal([]byte(o), &list) == nil && len(list.Servers) == 1 && list.Servers[0].State == "unapproved"
	})
	// The hub has had the entry: a command it would run starts within milliseconds.
	time.Sleep(500 * time.Millisecond)
	if _, err := os.Stat(pwned); err == nil {
		t.Fatal("the repository's command ran without the user's approval")
	}
}

// hubConfigDir is the config directory of the hub env (apptest.Env) starts, created.
func hubConfigDir(t *testing.T, env []string) string {
	t.Helper()
	dir := filepath.Join(apptest.EnvValue(env, "XDG_CONFIG_HOME"), "switchboard")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestServersAtATerminal: at a terminal (a pty, as a user types), `servers add` approves the
// command it adds, and `servers import` shows each command and asks: yes adds it approved, no
// leaves it out.
func TestServersAtATerminal(t *testing.T) {
	if _, err := exec.LookPath("script"); err != nil {
		t.Fatal("script (util-linux) is needed to give the CLI a terminal")
	}
	bin := apptest.Binary(t)
	env := apptest.Env(t)
	hubConfigDir(t, env)
	home := apptest.EnvValue(env, "HOME")
	claude := `{"mcpServers":{"alpha":{"command":"alpha-server","args":["--flag"]},"beta":{"command":"beta-server"}}}`
	if err := os.WriteFile(filepath.Join(home, ".claude.json"), []byte(claude), 0o600); err != nil {
		t.Fatal(err)
	}
	atTerminal := func(input string, args ...string) string {
		t.Helper()
		line := bin
		for _, a := range args {
			line += " " + strconv.Quote(a)
		}
		cmd := exec.Command("script", "-qec", line, "/dev/null")
		cmd.Env, cmd.Dir = env, home
		cmd.Stdin = strings.NewReader(input)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s at a terminal: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	if out := atTerminal("", "servers", "add", "typed", "--command", "typed-server"); !strings.Contains(out, "approved its command") {
		t.Fatalf("add at a terminal:\n%s", out)
	}
	out := atTerminal("y\nn\n", "servers", "import")
	for _, want := range []string{"alpha runs: alpha-server --flag", "Add alpha and approve its command?", "beta runs: beta-server", "Imported 1 server and approved their commands"} {
		if !strings.Contains(out, want) {
			t.Fatalf("import at a terminal lacks %q:\n%s", want, out)
		}
	}
	var list app.ServerList
	o, _, err := runCLI(t, bin, env, home, "servers", "list", "--json")
	if err != nil || json.Unmarshal([]byte(o), &list) != nil {
		t.Fatalf("list: %v\n%s", err, o)
	}
	got := map[string]bool{}
	for _, s := range list.Servers {
		got[s.Name] = s.CommandApproved
	}
	if len(got) != 2 || !got["typed"] || !got["alpha"] {
		t.Fatalf("servers and their commands' approval: %v (want typed and alpha, approved; beta declined)", got)
	}
}
