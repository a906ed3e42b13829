package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/internal/policy"
	"github.com/switchboard-hub/switchboard/internal/testutil"
)

// The hub follows the config file: a rule added while it runs denies the next call; a broken
// edit keeps the last good policy and says why.
func TestStackReloadsPolicyFromConfigFile(t *testing.T) {
	path, ws, write := policyConfig(t)
	write("")
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Workspace = ws
	st, err := app.BuildStack(cfg, "test", app.StackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.CloseBounded()
	ctx := context.Background()
	ct, srvT := sdk.NewInMemoryTransports()
	if _, err := st.Service.Server().Connect(ctx, srvT, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "c", Version: "1"}, &sdk.ClientOptions{Capabilities: &sdk.ClientCapabilities{}}).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	callText := func() string {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "lang_list", Arguments: map[string]any{}})
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError {
			return ""
		}
		return res.Content[0].(*sdk.TextContent).Text
	}
	if msg := callText(); msg != "" {
		t.Fatal(msg)
	}
	// Each reload of the file is announced; the next call after it follows the file.
	reloads := make(chan policy.Status, 16)
	defer st.Policy.Subscribe(func(s policy.Status) {
		select {
		case reloads <- s:
		default:
		}
	})()
	awaitReload := func(what string, done func(policy.Status) bool) {
		t.Helper()
		for !done(testutil.Receive(t, reloads, what)) { // an earlier reload: wait for the next
			continue
		}
	}
	write("[[policy.rules]]\ntool = \"lang_*\"\naction = \"deny\"\n")
	awaitReload("the hub to reload the new rule", func(s policy.Status) bool { return s.Rules == 1 })
	if msg := callText(); !strings.Contains(msg, `denied by rule 1 (tool="lang_*" → deny)`) {
		t.Errorf("deny message: %s", msg)
	}
	write("[policy]\ndefault = \"sometimes\"\n")
	awaitReload("the hub to notice the broken file", func(s policy.Status) bool { return s.Error != "" })
	if e := st.Policy.Status().Error; !strings.Contains(e, "policy.default") {
		t.Errorf("status error: %s", e)
	}
	if msg := callText(); !strings.Contains(msg, "denied") {
		t.Errorf("broken file must keep the last good policy: %q", msg)
	}
	// doctor reads the same file and names the key at fault.
	if c := policyCheck(mustLoad(t, path)); c.ok || !strings.Contains(c.detail, "policy.default") {
		t.Errorf("doctor: %+v", c)
	}
}

func TestPolicyCheckCommand(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte("[policy]\ndefault = \"allow\"\n[[policy.rules]]\ntool = \"file_delete\"\naction = \"deny\"\n[[policy.rules]]\ntool = \"exec\"\nargs = { command = \"rm\" }\nclient = \"*\"\naction = \"ask\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, error) {
		cmd := NewRootCommand("test")
		var out bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		cmd.SetArgs(append([]string{"--config", path}, args...))
		err := cmd.Execute()
		return out.String(), err
	}
	out, err := run("policy", "check", "exec", "--args", `{"command":"rm","args":["-rf","x"]}`)
	if err != nil || !strings.Contains(out, "decision: ask\n") || !strings.Contains(out, `rule 2 (tool="exec" args.command="rm" client="*" → ask)`) {
		t.Errorf("exec rm: %v\n%s", err, out)
	}
	out, err = run("policy", "check", "file_read", "--args", `{"path":"x"}`)
	if err != nil || !strings.Contains(out, "decision: allow\n") || !strings.Contains(out, "default policy (allow)") {
		t.Errorf("file_read: %v\n%s", err, out)
	}
	if _, err := run("policy", "check", "x", "--args", `[1]`); err == nil || !strings.Contains(err.Error(), "--args") {
		t.Errorf("bad --args: %v", err)
	}
}

func mustLoad(t *testing.T, path string) config.Config {
	t.Helper()
	c, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestPolicyCheckWarnsAboutRulesThatNeverMatch: a rule on servers_call loads (the hub decides
// each servers_call as the server tool it names, so the rule never matches); `policy check`
// says so whatever tool is checked, naming the rule's key and the <server>__<tool> form, and
// warns that servers_call itself is not what the hub decides; doctor shows the warning too; a
// file without such a rule gets no warning.
func TestPolicyCheckWarnsAboutRulesThatNeverMatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) string {
		t.Helper()
		cmd := NewRootCommand("test")
		var out bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		cmd.SetArgs(append([]string{"--config", path}, args...))
		if err := cmd.Execute(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out.String())
		}
		return out.String()
	}
	write("[[policy.rules]]\ntool = \"file_delete\"\naction = \"deny\"\n[[policy.rules]]\ntool = \"servers_call\"\nargs = { name = \"github__*\" }\naction = \"deny\"\n")
	rule := `warning:  policy.rules[2].tool: "servers_call" never matches: `
	out := run("policy", "check", "github__create_issue")
	if !strings.Contains(out, "decision: allow\n") || !strings.Contains(out, rule) || !strings.Contains(out, `name the server's tool as "<server>__<tool>" instead`) {
		t.Errorf("check github__create_issue:\n%s", out)
	}
	out = run("policy", "check", "servers_call", "--args", `{"name":"github__create_issue"}`)
	if !strings.Contains(out, "warning:  the hub never decides a call named servers_call") || !strings.Contains(out, rule) {
		t.Errorf("check servers_call:\n%s", out)
	}
	if c := policyCheck(mustLoad(t, path)); !c.ok || !strings.Contains(c.detail, `warning: policy.rules[2].tool: "servers_call" never matches`) {
		t.Errorf("doctor: %+v", c)
	}
	write("[[policy.rules]]\ntool = \"github__*\"\naction = \"deny\"\n[[policy.rules]]\ntool = \"servers_search\"\naction = \"ask\"\n")
	if out := run("policy", "check", "github__create_issue"); strings.Contains(out, "warning") || !strings.Contains(out, "decision: deny\n") {
		t.Errorf("no rule on servers_call:\n%s", out)
	}
}

// TestHubLogsRulesThatNeverMatch: the hub warns in its log about a rule on servers_call when it
// starts with one and when a reload brings one in.
func TestHubLogsRulesThatNeverMatch(t *testing.T) {
	path, ws, write := policyConfig(t)
	write("[[policy.rules]]\ntool = \"servers_call\"\naction = \"deny\"\n")
	cfg := mustLoad(t, path)
	cfg.Workspace = ws
	log := &syncBuffer{}
	st, err := app.BuildStack(cfg, "test", app.StackOptions{LogSink: log, Quiet: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.CloseBounded()
	want := `policy: policy.rules[1].tool: \"servers_call\" never matches`
	if !strings.Contains(log.String(), want) {
		t.Fatalf("start: no warning in the log:\n%s", log.String())
	}
	if w := st.Policy.Status().Warnings; len(w) != 1 {
		t.Errorf("status warnings: %q", w)
	}

	// ReloadConfig is what the file watcher runs on each change (called here so the test does
	// not race the watcher's start).
	write("[[policy.rules]]\ntool = \"file_delete\"\naction = \"deny\"\n")
	if err := st.ReloadConfig(); err != nil {
		t.Fatal(err)
	}
	if w := st.Policy.Status().Warnings; len(w) != 0 {
		t.Errorf("status warnings after the rule went: %q", w)
	}
	before := strings.Count(log.String(), "never matches")
	write("[[policy.rules]]\ntool = \"file_delete\"\naction = \"deny\"\n[[policy.rules]]\ntool = \"servers_call\"\naction = \"ask\"\n")
	if err := st.ReloadConfig(); err != nil {
		t.Fatal(err)
	}
	if got := log.String(); strings.Count(got, "never matches") <= before || !strings.Contains(got, `policy.rules[2].tool: \"servers_call\" never matches`) {
		t.Errorf("reload: no warning in the log:\n%s", got)
	}
}

// policyConfig is a config file in a scratch directory, with its data dir there too, and a
// workspace: write replaces the file's body (after the data_dir line).
func policyConfig(t *testing.T) (path, ws string, write func(body string)) {
	dir := t.TempDir()
	path = filepath.Join(dir, "config.toml")
	ws = filepath.Join(dir, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	return path, ws, func(body string) {
		t.Helper()
		if err := os.WriteFile(path, []byte("data_dir = \""+filepath.Join(dir, "data")+"\"\n"+body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// syncBuffer is a log sink the hub writes from its own goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
