package mcp

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/audit"
	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/internal/policy"
	"github.com/switchboard-hub/switchboard/internal/process"
	"github.com/switchboard-hub/switchboard/internal/sessions"
	"github.com/switchboard-hub/switchboard/internal/testutil"
	"github.com/switchboard-hub/switchboard/mcp/tools"
)

// trustService builds a Service with a policy and collects its audit entries.
func trustService(t *testing.T, c policy.Config, roots policy.RootsConfig) (*Service, func() []audit.Entry) {
	t.Helper()
	p, err := policy.Compile(c, roots)
	if err != nil {
		t.Fatal(err)
	}
	a := audit.Discard()
	var mu sync.Mutex
	var entries []audit.Entry
	a.OnRecord(func(e audit.Entry) { mu.Lock(); entries = append(entries, e); mu.Unlock() })
	s := newTestService(t, WithAudit(a), WithPolicy(policy.NewStore("", p), policy.NewBroker()))
	return s, func() []audit.Entry { mu.Lock(); defer mu.Unlock(); return append([]audit.Entry{}, entries...) }
}

// connectWith connects a go-sdk client with the given options (capabilities, handlers).
func connectWith(t *testing.T, s *Service, name string, opts *sdk.ClientOptions, roots ...*sdk.Root) *sdk.ClientSession {
	t.Helper()
	ctx := context.Background()
	ct, st := sdk.NewInMemoryTransports()
	ss, err := s.Server().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := sdk.NewClient(&sdk.Implementation{Name: name, Version: "1.0"}, opts)
	if len(roots) > 0 {
		c.AddRoots(roots...)
	}
	cs, err := c.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	clients.Store(cs, c)
	t.Cleanup(func() { cs.Close(); ss.Close(); clients.Delete(cs) })
	return cs
}

// bare is a client that declares neither elicitation nor roots.
func bare() *sdk.ClientOptions { return &sdk.ClientOptions{Capabilities: &sdk.ClientCapabilities{}} }

// waitPending waits for a question to be pending (the broker announces each one).
func waitPending(t *testing.T, s *Service) policy.Approval {
	t.Helper()
	added := make(chan struct{}, 1)
	defer s.Approvals().Subscribe(func(c policy.ApprovalChange) {
		if c.Kind == "added" {
			select {
			case added <- struct{}{}:
			default:
			}
		}
	})()
	for {
		if l := s.Approvals().Pending(); len(l) > 0 {
			return l[0]
		}
		testutil.Receive(t, added, "a pending approval")
	}
}

func lastEntry(t *testing.T, entries func() []audit.Entry, tool string) audit.Entry {
	t.Helper()
	l := entries()
	for i := len(l) - 1; i >= 0; i-- {
		if l[i].Tool == tool {
			return l[i]
		}
	}
	t.Fatalf("no audit entry for %s in %+v", tool, l)
	return audit.Entry{}
}

func TestPolicyDenyAskAndDashboardApproval(t *testing.T) {
	s, entries := trustService(t, policy.Config{Default: "allow", AskTimeout: "1500ms", Rules: []policy.RuleSpec{
		{Tool: "file_delete", Action: "deny"},
		{Tool: "file_write", Args: map[string]string{"path": "secret/*"}, Action: "ask"},
	}}, policy.RootsConfig{})
	var progressMu sync.Mutex
	var progressMsgs []string
	opts := bare()
	progressed := make(chan struct{}, 1)
	opts.ProgressNotificationHandler = func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
		progressMu.Lock()
		progressMsgs = append(progressMsgs, req.Params.Message)
		progressMu.Unlock()
		select {
		case progressed <- struct{}{}:
		default:
		}
	}
	cs := connectWith(t, s, "plain-client", opts)

	// deny: a tool error naming the rule; the file stays.
	mustCall(t, cs, "file_write", map[string]any{"path": "keep.txt", "content": "x"}, nil)
	msg := call(t, cs, "file_delete", map[string]any{"path": "keep.txt"}, nil)
	if !strings.Contains(msg, `denied by rule 1 (tool="file_delete" → deny)`) {
		t.Fatalf("deny message: %q", msg)
	}
	if _, err := os.Stat(filepath.Join(s.Workspace().Dir(), "keep.txt")); err != nil {
		t.Fatal("denied delete ran")
	}
	if e := lastEntry(t, entries, "file_delete"); e.Decision != "deny" || !strings.Contains(e.Rule, "rule 1") || e.Outcome != "error" || e.Level != "SECURITY" {
		t.Errorf("deny audit: %+v", e)
	}
	if e := lastEntry(t, entries, "file_write"); e.Decision != "allow" || e.Rule != "default policy (allow)" {
		t.Errorf("allow audit: %+v", e)
	}

	// ask, approved on the dashboard; the waiting client gets progress notifications.
	done := make(chan string, 1)
	go func() {
		params := &sdk.CallToolParams{Name: "file_write", Arguments: map[string]any{"path": "secret/a.txt", "content": "top"}}
		params.SetProgressToken("wait-1")
		res, err := cs.CallTool(context.Background(), params)
		switch {
		case err != nil:
			done <- err.Error()
		case res.IsError:
			done <- "tool error"
		default:
			done <- ""
		}
	}()
	a := waitPending(t, s)
	// A progress tick is due every second: wait for the first.
	testutil.Receive(t, progressed, "a progress notification while the call waits")
	progressMu.Lock()
	if len(progressMsgs) == 0 || !strings.Contains(progressMsgs[0], "waiting for the user to approve this call") {
		t.Errorf("progress while waiting: %q", progressMsgs)
	}
	progressMu.Unlock()
	if a.Tool != "file_write" || a.Client != "plain-client" || !strings.Contains(a.Arguments, "path: secret/a.txt") || !strings.Contains(a.Arguments, "content: <3 bytes>") || a.Workspace != s.Workspace().Dir() {
		t.Errorf("pending approval: %+v", a)
	}
	if err := s.DecideApproval(a.ID, "maybe", policy.ByDashboard); err == nil || !strings.Contains(err.Error(), "decision:") {
		t.Errorf("bad decision accepted: %v", err)
	}
	if err := s.DecideApproval(a.ID, "allow", policy.ByDashboard); err != nil {
		t.Fatal(err)
	}
	if msg := <-done; msg != "" {
		t.Fatalf("approved call failed: %s", msg)
	}
	if b, _ := os.ReadFile(filepath.Join(s.Workspace().Dir(), "secret/a.txt")); string(b) != "top" {
		t.Errorf("approved write did not happen: %q", b)
	}
	if e := lastEntry(t, entries, "file_write"); e.Decision != "ask" || e.Approval != "approved" || e.By != "dashboard" {
		t.Errorf("approved audit: %+v", e)
	}

	// ask, denied on the dashboard.
	go func() { done <- call(t, cs, "file_write", map[string]any{"path": "secret/b.txt", "content": "x"}, nil) }()
	a = waitPending(t, s)
	if err := s.DecideApproval(a.ID, "deny", policy.ByDashboard); err != nil {
		t.Fatal(err)
	}
	if msg := <-done; !strings.Contains(msg, "was declined") || !strings.Contains(msg, "rule 2") {
		t.Fatalf("declined call: %q", msg)
	}
	if e := lastEntry(t, entries, "file_write"); e.Approval != "declined" || e.By != "dashboard" {
		t.Errorf("declined audit: %+v", e)
	}

	// ask, nobody answers: denied after ask_timeout, with that reason.
	msg = call(t, cs, "file_write", map[string]any{"path": "secret/c.txt", "content": "x"}, nil)
	if !strings.Contains(msg, "timed out") || !strings.Contains(msg, "no answer within 1.5s (policy.ask_timeout)") {
		t.Fatalf("timed-out call: %q", msg)
	}
	if e := lastEntry(t, entries, "file_write"); e.Approval != "timed out" || e.By != "timeout" {
		t.Errorf("timeout audit: %+v", e)
	}
	if _, err := os.Stat(filepath.Join(s.Workspace().Dir(), "secret/c.txt")); err == nil {
		t.Error("timed-out write happened")
	}
	if l := s.Approvals().Pending(); len(l) != 0 {
		t.Errorf("pending left: %+v", l)
	}
}

// The go-sdk client speaks protocol 2026-07-28: the question travels as an input request of a
// multi round-trip call, which the client answers with its elicitation handler and retries.
func TestPolicyAskViaElicitation(t *testing.T) {
	s, entries := trustService(t, policy.Config{Rules: []policy.RuleSpec{{Tool: "file_write", Action: "ask"}}}, policy.RootsConfig{})
	var mu sync.Mutex
	answer := "accept"
	var asked []string
	opts := &sdk.ClientOptions{
		Capabilities: &sdk.ClientCapabilities{},
		ElicitationHandler: func(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			mu.Lock()
			asked = append(asked, req.Params.Message)
			a := answer
			mu.Unlock()
			return &sdk.ElicitResult{Action: a}, nil
		},
	}
	cs := connectWith(t, s, "eliciting-client", opts)
	params := &sdk.CallToolParams{Name: "file_write", Arguments: map[string]any{"path": "e.txt", "content": "hi"}}
	params.SetProgressToken("tok-1")
	res, err := cs.CallTool(context.Background(), params)
	if err != nil || res.IsError {
		t.Fatalf("accepted call: %v %+v", err, res)
	}
	mu.Lock()
	if len(asked) != 1 || !strings.Contains(asked[0], "eliciting-client wants to run the tool file_write") || !strings.Contains(asked[0], "path: e.txt") || !strings.Contains(asked[0], "Workspace: "+s.Workspace().Dir()) {
		t.Errorf("elicitation message: %q", asked)
	}
	answer = "decline"
	mu.Unlock()
	if len(s.Approvals().Pending()) != 0 {
		t.Error("elicited question also queued on the dashboard")
	}
	if e := lastEntry(t, entries, "file_write"); e.Approval != "approved" || e.By != "client" {
		t.Errorf("audit: %+v", e)
	}
	msg := call(t, cs, "file_write", map[string]any{"path": "f.txt", "content": "hi"}, nil)
	if !strings.Contains(msg, "declined") || !strings.Contains(msg, "the client answered decline") {
		t.Fatalf("declined: %q", msg)
	}
	if _, err := os.Stat(filepath.Join(s.Workspace().Dir(), "f.txt")); err == nil {
		t.Error("declined write happened")
	}
}

func TestPolicyReloadTakesEffectForConnectedClients(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte("[policy]\ndefault = \"allow\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	load := func() (*policy.Policy, error) { // as the hub's config watcher does
		cfg, err := config.Load(path)
		if err != nil {
			return nil, err
		}
		return cfg.CompilePolicy()
	}
	p, err := load()
	if err != nil {
		t.Fatal(err)
	}
	store := policy.NewStore(path, p)
	s := newTestService(t, WithPolicy(store, policy.NewBroker()))
	cs := connectWith(t, s, "c", bare())
	mustCall(t, cs, "lang_list", map[string]any{}, nil)
	if err := os.WriteFile(path, []byte("[[policy.rules]]\ntool = \"lang_*\"\naction = \"deny\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := store.Apply(load()); err != nil {
		t.Fatal(err)
	}
	if msg := call(t, cs, "lang_list", map[string]any{}, nil); !strings.Contains(msg, `rule 1 (tool="lang_*" → deny)`) || !strings.Contains(msg, path) {
		t.Fatalf("after reload: %q", msg)
	}
	if err := os.WriteFile(path, []byte("[[policy.rules]]\ntool = \"[\"\naction = \"allow\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := store.Apply(load()); err == nil {
		t.Fatal("invalid file accepted")
	}
	if msg := call(t, cs, "lang_list", map[string]any{}, nil); !strings.Contains(msg, "denied") {
		t.Fatalf("invalid file must keep the last good policy: %q", msg)
	}
	if st := s.Policy().Status(); !strings.Contains(st.Error, "policy.rules[1].tool") {
		t.Errorf("status error: %+v", st)
	}
}

func fileURI(dir string) string { return "file://" + dir }

func TestRootsGrantedDeclinedAndChanged(t *testing.T) {
	base := t.TempDir()
	allowed := filepath.Join(base, "allowed")
	project := filepath.Join(allowed, "project")
	other := filepath.Join(base, "other")
	third := filepath.Join(base, "third")
	for _, d := range []string{project, other, third} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s, entries := trustService(t, policy.Config{AskTimeout: "5s"}, policy.RootsConfig{Allow: []string{allowed}})
	var mu sync.Mutex
	answers := map[string]string{}
	var asked []string
	opts := &sdk.ClientOptions{ElicitationHandler: func(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, req.Params.Message)
		for dir, a := range answers {
			if strings.Contains(req.Params.Message, dir+" ") {
				return &sdk.ElicitResult{Action: a}, nil
			}
		}
		return &sdk.ElicitResult{Action: "cancel"}, nil
	}}
	answers[other] = "decline"
	answers[third] = "accept"
	cs := connectWith(t, s, "roots-client", opts, &sdk.Root{URI: fileURI(project), Name: "project"}, &sdk.Root{URI: fileURI(other)})

	// Relative paths land in the first root (granted by [roots] allow: nobody is asked).
	mustCall(t, cs, "file_write", map[string]any{"path": "hello.txt", "content": "in project"}, nil)
	if b, err := os.ReadFile(filepath.Join(project, "hello.txt")); err != nil || string(b) != "in project" {
		t.Fatalf("relative write did not land in the first root: %v %q", err, b)
	}
	if _, err := os.Stat(filepath.Join(s.Workspace().Dir(), "hello.txt")); err == nil {
		t.Fatal("write landed in the hub workspace")
	}
	// Absolute paths inside the first root work; outside every root they are refused.
	mustCall(t, cs, "file_read", map[string]any{"path": filepath.Join(project, "hello.txt")}, nil)
	if msg := call(t, cs, "file_read", map[string]any{"path": filepath.Join(s.Workspace().Dir(), "x")}, nil); !strings.Contains(msg, "outside") {
		t.Errorf("path outside every root: %q", msg)
	}
	// The second root is not under [roots] allow: the client is asked, declines, and the call
	// names the root and how to allow it. The answer holds for the session (asked once).
	for range 2 {
		msg := call(t, cs, "file_write", map[string]any{"path": filepath.Join(other, "x.txt"), "content": "no"}, nil)
		if !strings.Contains(msg, "root "+other+" was declined") || !strings.Contains(msg, "[roots] allow") {
			t.Fatalf("declined root: %q", msg)
		}
	}
	mu.Lock()
	if len(asked) != 1 || !strings.Contains(asked[0], "roots-client wants to use "+other) {
		t.Errorf("asked = %q", asked)
	}
	mu.Unlock()
	if _, err := os.Stat(filepath.Join(other, "x.txt")); err == nil {
		t.Fatal("write happened in a declined root")
	}
	if e := lastEntry(t, entries, "file_write"); e.Outcome != "error" {
		t.Errorf("audit: %+v", e)
	}
	found := false
	for _, e := range entries() {
		if strings.Contains(e.Roots, other+" declined by client") {
			found = true
		}
	}
	if !found {
		t.Errorf("root answer not audited: %+v", entries())
	}

	// roots/list_changed: the client swaps its roots; the new first root is asked and accepted.
	// The go-sdk client sends notifications/roots/list_changed on AddRoots/RemoveRoots.
	clientOf(t, cs).RemoveRoots(fileURI(project), fileURI(other))
	clientOf(t, cs).AddRoots(&sdk.Root{URI: fileURI(third)})
	// The hub hears of the change in its own time, with no event the client sees: try again.
	var msg string
	if !testutil.Poll(testutil.Patience, func() bool {
		msg = call(t, cs, "file_write", map[string]any{"path": "after.txt", "content": "third"}, nil)
		return msg == ""
	}) {
		t.Fatalf("after list_changed: %s", msg)
	}
	if b, err := os.ReadFile(filepath.Join(third, "after.txt")); err != nil || string(b) != "third" {
		t.Fatalf("write after roots change: %v %q", err, b)
	}

	// A client without the roots capability keeps the hub's workspace.
	plain := connectWith(t, s, "plain", bare())
	mustCall(t, plain, "file_write", map[string]any{"path": "hub.txt", "content": "hub"}, nil)
	if _, err := os.Stat(filepath.Join(s.Workspace().Dir(), "hub.txt")); err != nil {
		t.Fatal("plain client's write did not land in the hub workspace")
	}
}

// clients maps sessions to the client that made them, for tests that change roots.
var clients sync.Map

func clientOf(t *testing.T, cs *sdk.ClientSession) *sdk.Client {
	t.Helper()
	v, ok := clients.Load(cs)
	if !ok {
		t.Fatal("client not recorded")
	}
	return v.(*sdk.Client)
}

// Over Streamable HTTP a go-sdk client speaks 2026-07-28: roots are listed and the root asked
// about through input requests, once per session, however many calls follow.
func TestRootsOverHTTPAskedOncePerSession(t *testing.T) {
	root := t.TempDir()
	s, _ := trustService(t, policy.Config{AskTimeout: "5s"}, policy.RootsConfig{})
	tr := s.NewTransports(TransportConfig{HTTPAddr: "127.0.0.1:0", HTTPToken: "tok"})
	if err := tr.Start(TransportHTTP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = tr.StopAll(ctx)
	})
	var mu sync.Mutex
	asked := 0
	c := sdk.NewClient(&sdk.Implementation{Name: "http-roots", Version: "1"}, &sdk.ClientOptions{
		ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			mu.Lock()
			asked++
			mu.Unlock()
			return &sdk.ElicitResult{Action: "accept"}, nil
		},
	})
	c.AddRoots(&sdk.Root{URI: fileURI(root)})
	hc := &http.Client{Transport: bearer{"tok", http.DefaultTransport}}
	// A session (2025-11-25): a 2026-07-28 client over HTTP is stateless and its roots are not
	// used (docs/architecture.md, "Both protocol eras on one URL").
	cs, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: "http://" + tr.Addr(TransportHTTP) + "/mcp", HTTPClient: hc}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for i := range 3 {
		mustCall(t, cs, "file_write", map[string]any{"path": "n.txt", "content": strings.Repeat("x", i+1)}, nil)
	}
	if b, err := os.ReadFile(filepath.Join(root, "n.txt")); err != nil || string(b) != "xxx" {
		t.Fatalf("write in the approved root: %v %q", err, b)
	}
	mu.Lock()
	defer mu.Unlock()
	if asked != 1 {
		t.Errorf("asked %d times about one root in one session, want 1", asked)
	}
	// The session registry (the dashboard's Sessions view) shows the root and the answer.
	var roots []sessions.Root
	for _, si := range s.Sessions().List() {
		if si.ClientName == "http-roots" {
			roots = si.Roots
		}
	}
	real, _ := filepath.EvalSymlinks(root)
	if len(roots) != 1 || roots[0].Dir != real || roots[0].Status != "approved" || roots[0].Detail != "approved by client" {
		t.Errorf("registry roots = %+v", roots)
	}
}

// A roots client's processes run in its root: exec's default dir is the first root, a relative
// dir resolves inside it, and process_list shows dirs relative to it.
func TestRootsForProcessDir(t *testing.T) {
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(root)
	p, err := policy.Compile(policy.Config{}, policy.RootsConfig{Allow: []string{root}})
	if err != nil {
		t.Fatal(err)
	}
	procs := process.New(process.Options{})
	s := newTestService(t, WithPolicy(policy.NewStore("", p), policy.NewBroker()), WithProcessService(procs))
	cs := connectWith(t, s, "proc-roots", nil, &sdk.Root{URI: fileURI(root)})
	var out tools.ExecOutput
	mustCall(t, cs, "exec", map[string]any{"command": "pwd"}, &out)
	if strings.TrimSpace(out.Stdout) != real {
		t.Errorf("exec default dir = %q, want the root %q", out.Stdout, real)
	}
	mustCall(t, cs, "exec", map[string]any{"command": "pwd", "dir": "sub"}, &out)
	if strings.TrimSpace(out.Stdout) != filepath.Join(real, "sub") {
		t.Errorf("exec dir sub = %q", out.Stdout)
	}
	if msg := call(t, cs, "exec", map[string]any{"command": "pwd", "dir": s.Workspace().Dir()}, nil); !strings.Contains(msg, "dir:") || !strings.Contains(msg, "outside") {
		t.Errorf("dir outside the root: %q", msg)
	}
	var started tools.ProcessStartOutput
	mustCall(t, cs, "process_start", map[string]any{"command": "sleep", "args": []string{"5"}, "dir": "sub"}, &started)
	var list tools.ProcessListOutput
	mustCall(t, cs, "process_list", map[string]any{}, &list)
	if len(list.Processes) != 1 || list.Processes[0].Dir != "sub" {
		t.Errorf("process_list = %+v", list.Processes)
	}
	mustCall(t, cs, "process_kill", map[string]any{"id": started.ID}, nil)
}

// Consent is asked in the policy layer, before a handler runs, and only for tools that declare
// workspace paths. A tool that reaches for the caller's workspace without declaring it gets a
// clear error naming the fix, and nobody is asked anything from inside the call (neither the
// client nor the dashboard): a missing declaration cannot slip past the user's consent.
func TestUndeclaredToolGetsNoWorkspace(t *testing.T) {
	root := t.TempDir()
	s, _ := trustService(t, policy.Config{AskTimeout: "10s"}, policy.RootsConfig{})
	type in struct {
		Target string `json:"target" jsonschema:"a path to look at (but not declared as one)"`
	}
	type out struct {
		Dir string `json:"dir"`
	}
	sdk.AddTool(s.Server(), &sdk.Tool{Name: "test_where"}, func(ctx context.Context, req *sdk.CallToolRequest, _ in) (*sdk.CallToolResult, out, error) {
		ws, err := s.trust.WorkspaceFor(ctx, req)
		if err != nil {
			return nil, out{}, err
		}
		return nil, out{Dir: ws.Dir()}, nil
	})
	var elicited atomic.Int32
	cs := connectWith(t, s, "inner-ask", &sdk.ClientOptions{ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		elicited.Add(1)
		return &sdk.ElicitResult{Action: "accept"}, nil
	}}, &sdk.Root{URI: fileURI(root)})
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "test_where", Arguments: map[string]any{"target": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(errorText(res), `without declaring it (tag its path arguments workspace:"path" or embed tool.InWorkspace`) {
		t.Fatalf("result = %+v, want the undeclared-workspace error", res.Content)
	}
	if n := elicited.Load(); n != 0 {
		t.Errorf("elicited %d times for an undeclared tool", n)
	}
	if p := s.Approvals().Pending(); len(p) != 0 {
		t.Errorf("questions put for an undeclared tool: %+v", p)
	}
}

// Over the Unix socket (the hub's own line framing) a go-sdk client's multi round-trip answers
// arrive intact: roots listed, a root outside [roots] allow approved by elicitation, then used.
func TestRootsOverUnixSocket(t *testing.T) {
	root := t.TempDir()
	s, _ := trustService(t, policy.Config{AskTimeout: "5s"}, policy.RootsConfig{})
	sock := filepath.Join(t.TempDir(), "m.sock")
	tr := s.NewTransports(TransportConfig{UnixPath: sock})
	if err := tr.Start(TransportUnix); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = tr.StopAll(ctx)
	})
	conn, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	c := sdk.NewClient(&sdk.Implementation{Name: "unix-roots", Version: "1"}, &sdk.ClientOptions{
		ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			return &sdk.ElicitResult{Action: "accept"}, nil
		},
	})
	c.AddRoots(&sdk.Root{URI: fileURI(root)})
	cs, err := c.Connect(context.Background(), &sdk.IOTransport{Reader: conn, Writer: conn}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	mustCall(t, cs, "file_write", map[string]any{"path": "u.txt", "content": "unix"}, nil)
	if b, err := os.ReadFile(filepath.Join(root, "u.txt")); err != nil || string(b) != "unix" {
		t.Fatalf("write in the approved root over unix: %v %q", err, b)
	}
}
