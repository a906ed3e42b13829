package mcp

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/policy"
	"github.com/switchboard-hub/switchboard/internal/sessions"
	"github.com/switchboard-hub/switchboard/internal/testutil"
	mcptransport "github.com/switchboard-hub/switchboard/mcp/transport"
	"github.com/switchboard-hub/switchboard/mcp/trust"
)

// workspaceHub is a hub with the default policy (no [roots] allow) whose home directory is a
// temporary one, listening on a Unix socket, as the desktop app runs it.
func workspaceHub(t *testing.T) (s *Service, sock, home string) {
	t.Helper()
	home = t.TempDir()
	if real, err := filepath.EvalSymlinks(home); err == nil {
		home = real
	}
	t.Setenv("HOME", home)
	p, err := policy.Compile(policy.Config{AskTimeout: "60s"}, policy.RootsConfig{})
	if err != nil {
		t.Fatal(err)
	}
	s = newTestService(t, WithPolicy(policy.NewStore("", p), policy.NewBroker()))
	sock = filepath.Join(shortTempDir(t), "m.sock")
	listen(t, s, TransportUnix, TransportConfig{UnixPath: sock})
	return s, sock, home
}

// dialHub connects a go-sdk client over the Unix socket. relay, when set, is sent first as the
// connect relay does (mcptransport.RelayMethod).
func dialHub(t testing.TB, sock, relay string, c *sdk.Client) *sdk.ClientSession {
	t.Helper()
	cs, _ := dialHubConn(t, sock, relay, c)
	return cs
}

// dialHubConn is dialHub that also returns the socket, for tests that cut it.
func dialHubConn(t testing.TB, sock, relay string, c *sdk.Client) (*sdk.ClientSession, net.Conn) {
	t.Helper()
	conn, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	if relay != "" {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": mcptransport.RelayMethod, "params": map[string]any{"cwd": relay}})
		if _, err := conn.Write(append(b, '\n')); err != nil {
			t.Fatal(err)
		}
	}
	cs, err := c.Connect(context.Background(), &sdk.IOTransport{Reader: conn, Writer: conn}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, conn
}

func mkdirs(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func sessionNamed(t *testing.T, s *Service, name string) sessions.Info {
	t.Helper()
	for _, si := range s.Sessions().List() {
		if si.ClientName == name {
			return si
		}
	}
	t.Fatalf("no session of %s in %+v", name, s.Sessions().List())
	return sessions.Info{}
}

// TestRootsWithoutFriction: a client whose root is the hub's workspace (Claude Code run in the
// project the hub serves) or a project in the home directory is never asked; a root that needs
// consent and whose prompt is dismissed fails that call with how to allow it, and is asked again
// next time; a client that cannot be asked (Gemini CLI declares roots but not elicitation) fails
// within seconds, not after ask_timeout; the dashboard's grant makes the root usable.
func TestRootsWithoutFriction(t *testing.T) {
	s, sock, home := workspaceHub(t)
	project := filepath.Join(home, "src", "app")
	mkdirs(t, project)
	var elicited atomic.Int32
	cancelling := &sdk.ClientOptions{ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		elicited.Add(1)
		return &sdk.ElicitResult{Action: "cancel"}, nil // what Claude Code answers in -p mode
	}}

	// The hub's own workspace as the root: no question.
	c := sdk.NewClient(&sdk.Implementation{Name: "claude-code", Version: "2.1"}, cancelling)
	c.AddRoots(&sdk.Root{URI: fileURI(s.Workspace().Dir())})
	cs := dialHub(t, sock, "", c)
	mustCall(t, cs, "file_write", map[string]any{"path": "a.txt", "content": "in the hub workspace"}, nil)
	mustCall(t, cs, "file_read", map[string]any{"path": "a.txt"}, nil)
	if _, err := os.Stat(filepath.Join(s.Workspace().Dir(), "a.txt")); err != nil {
		t.Fatal(err)
	}
	// A project in the home directory: no question either.
	c2 := sdk.NewClient(&sdk.Implementation{Name: "in-project", Version: "1"}, cancelling)
	c2.AddRoots(&sdk.Root{URI: fileURI(project)})
	cs2 := dialHub(t, sock, "", c2)
	mustCall(t, cs2, "file_write", map[string]any{"path": "b.txt", "content": "project"}, nil)
	if _, err := os.Stat(filepath.Join(project, "b.txt")); err != nil {
		t.Fatal("write did not land in the project root")
	}
	if n := elicited.Load(); n != 0 {
		t.Fatalf("asked %d times about roots that need no consent", n)
	}
	if si := sessionNamed(t, s, "in-project"); si.Workspace != project || si.WorkspaceFrom != policy.FromRoot {
		t.Errorf("Sessions view: workspace %q from %q", si.Workspace, si.WorkspaceFrom)
	}

	// The home directory itself needs consent. A dismissed prompt fails the call at once with
	// the ways to allow it, and is not remembered: the next call asks again.
	c3 := sdk.NewClient(&sdk.Implementation{Name: "at-home", Version: "1"}, cancelling)
	c3.AddRoots(&sdk.Root{URI: fileURI(home)})
	cs3 := dialHub(t, sock, "", c3)
	for i := 1; i <= 2; i++ {
		msg := call(t, cs3, "file_write", map[string]any{"path": "h.txt", "content": "x"}, nil)
		for _, want := range []string{home, "home directory", "[roots] allow", "Sessions view", "dismissed"} {
			if !strings.Contains(msg, want) {
				t.Errorf("call %d: error %q lacks %q", i, msg, want)
			}
		}
		if n := elicited.Load(); n != int32(i) {
			t.Errorf("after call %d the client was asked %d times; a dismissed prompt must be asked again", i, n)
		}
	}
	// The dashboard grants it for this session.
	si := sessionNamed(t, s, "at-home")
	if err := s.GrantWorkspace(si.ID, home, true, policy.ByDashboard); err != nil {
		t.Fatal(err)
	}
	mustCall(t, cs3, "file_write", map[string]any{"path": "h.txt", "content": "granted"}, nil)
	if err := s.GrantWorkspace(si.ID, home, false, policy.ByDashboard); err != nil {
		t.Fatal(err)
	}
	if msg := call(t, cs3, "file_read", map[string]any{"path": "h.txt"}, nil); !strings.Contains(msg, "declined") {
		t.Errorf("after revoke: %q", msg)
	}
	if err := s.GrantWorkspace(si.ID, "/nowhere", true, policy.ByDashboard); err == nil || !strings.Contains(err.Error(), "dir:") {
		t.Errorf("granting a directory the session does not have: %v", err)
	}

	// A client that declares roots but cannot be asked, with no dashboard open: the call fails
	// within seconds, saying how to allow the root.
	outside := shortTempDir(t)
	c4 := sdk.NewClient(&sdk.Implementation{Name: "gemini-cli", Version: "0.61"}, nil)
	c4.AddRoots(&sdk.Root{URI: fileURI(outside)})
	cs4 := dialHub(t, sock, "", c4)
	start := time.Now()
	msg := call(t, cs4, "file_write", map[string]any{"path": "g.txt", "content": "x"}, nil)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("a consent nobody can give took %s", took)
	}
	for _, want := range []string{"nobody could answer", "[roots] allow", outside} {
		if !strings.Contains(msg, want) {
			t.Errorf("unanswerable root: %q lacks %q", msg, want)
		}
	}
	if len(s.Approvals().Pending()) != 0 {
		t.Errorf("question left on the dashboard: %+v", s.Approvals().Pending())
	}
}

// TestRelayDirectoryIsTheWorkspace: a client without roots that came through `switchboard
// connect` works in the directory it started the relay in; a relay started in the home directory
// (or /, as desktop apps start servers) did not choose a project and gets the hub's workspace.
func TestRelayDirectoryIsTheWorkspace(t *testing.T) {
	s, sock, home := workspaceHub(t)
	project := filepath.Join(home, "code", "site")
	mkdirs(t, project)

	cs := dialHub(t, sock, project, sdk.NewClient(&sdk.Implementation{Name: "codex", Version: "0.169"}, bare()))
	mustCall(t, cs, "file_write", map[string]any{"path": "r.txt", "content": "relay"}, nil)
	if b, err := os.ReadFile(filepath.Join(project, "r.txt")); err != nil || string(b) != "relay" {
		t.Fatalf("write did not land in the relay's directory: %v", err)
	}
	si := sessionNamed(t, s, "codex")
	if si.Workspace != project || si.WorkspaceFrom != policy.FromRelay || si.Relay == nil || si.Relay.Status != trust.RootGranted {
		t.Errorf("Sessions view: %+v relay %+v", si, si.Relay)
	}
	// Revoked on the dashboard: calls are refused, not quietly moved to the hub's workspace.
	if err := s.GrantWorkspace(si.ID, project, false, policy.ByDashboard); err != nil {
		t.Fatal(err)
	}
	if msg := call(t, cs, "file_write", map[string]any{"path": "r2.txt", "content": "x"}, nil); !strings.Contains(msg, "revoked") {
		t.Errorf("after revoking the relay directory: %q", msg)
	}
	if _, err := os.Stat(filepath.Join(s.Workspace().Dir(), "r2.txt")); err == nil {
		t.Error("a revoked relay client's write landed in the hub's workspace")
	}

	for _, dir := range []string{home, "/"} {
		name := "from-" + filepath.Base(dir)
		cs := dialHub(t, sock, dir, sdk.NewClient(&sdk.Implementation{Name: name, Version: "1"}, bare()))
		mustCall(t, cs, "file_write", map[string]any{"path": name + ".txt", "content": "hub"}, nil)
		if _, err := os.Stat(filepath.Join(s.Workspace().Dir(), name+".txt")); err != nil {
			t.Errorf("relay in %s: the write did not land in the hub's workspace", dir)
		}
		if si := sessionNamed(t, s, name); si.WorkspaceFrom != policy.FromHub || si.Relay == nil || si.Relay.Status != trust.RootPending {
			t.Errorf("relay in %s: Sessions view %+v relay %+v", dir, si, si.Relay)
		}
	}
}

// TestApprovalsWithdrawnWhenClientGoes: a client that disconnects while its call waits for
// approval takes the question with it: the dashboard shows it withdrawn at once, and a late
// Allow runs nothing.
func TestApprovalsWithdrawnWhenClientGoes(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	p, err := policy.Compile(policy.Config{AskTimeout: "60s", Rules: []policy.RuleSpec{{Tool: "file_write", Action: "ask"}}}, policy.RootsConfig{})
	if err != nil {
		t.Fatal(err)
	}
	broker := policy.NewBroker()
	broker.AddPresence(func() bool { return true }) // a dashboard is open
	s := newTestService(t, WithPolicy(policy.NewStore("", p), broker))
	sock := filepath.Join(shortTempDir(t), "m.sock")
	listen(t, s, TransportUnix, TransportConfig{UnixPath: sock})
	resolved := make(chan policy.ApprovalChange, 4)
	broker.Subscribe(func(c policy.ApprovalChange) {
		if c.Kind == "resolved" {
			resolved <- c
		}
	})

	cs, conn := dialHubConn(t, sock, "", sdk.NewClient(&sdk.Implementation{Name: "leaver", Version: "1"}, bare()))
	go func() {
		_, _ = cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "file_write", Arguments: map[string]any{"path": "late.txt", "content": "x"}})
	}()
	a := waitPending(t, s)
	if si := sessionNamed(t, s, "leaver"); a.Session != si.ID {
		t.Errorf("approval names session %q, want the caller's %q", a.Session, si.ID)
	}
	conn.Close() // the client dies: its socket closes
	select {
	case c := <-resolved:
		if c.Outcome == nil || c.Outcome.Approved || !strings.Contains(c.Outcome.Reason, "withdrawn") {
			t.Errorf("resolved as %+v", c.Outcome)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("the question outlived its client")
	}
	if err := s.DecideApproval(a.ID, "allow", policy.ByDashboard); err == nil {
		t.Error("a withdrawn question could still be allowed")
	}
	// The call has ended (the hub records it when its handler returns): a write it made would
	// be on disk.
	awaitCallsEnded(t, s, "file_write", 1)
	if _, err := os.Stat(filepath.Join(s.Workspace().Dir(), "late.txt")); err == nil {
		t.Error("the dead client's call ran")
	}
}

// TestGrantedRootHeldByHandle: a root is opened when it is granted, and calls use that handle. A
// root directory swapped for a symlink to somewhere else after roots/list does not move the
// session's sandbox there.
func TestGrantedRootHeldByHandle(t *testing.T) {
	s, sock, home := workspaceHub(t)
	project := filepath.Join(home, "proj")
	outside := filepath.Join(home, "elsewhere")
	mkdirs(t, project, outside)
	conn, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	dec := json.NewDecoder(conn)
	send := func(v string) {
		if _, err := conn.Write([]byte(v + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	next := func() map[string]any {
		conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	// A 2025-11-25 client with roots: the hub lists them right after initialized.
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"swapper","version":"1"}}}`)
	next()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	req := next()
	if req["method"] != "roots/list" {
		t.Fatalf("want roots/list, got %v", req)
	}
	id, _ := json.Marshal(req["id"])
	send(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"roots":[{"uri":"` + fileURI(project) + `"}]}}`)
	var si sessions.Info
	if !testutil.Poll(testutil.Patience, func() bool {
		si = sessionNamed(t, s, "swapper")
		return len(si.Roots) == 1 && si.Roots[0].Status == trust.RootGranted
	}) {
		t.Fatalf("root never granted: %+v", si.Roots)
	}
	// The swap: the granted directory moves away and a symlink to another directory takes its name.
	if err := os.Rename(project, project+".orig"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, project); err != nil {
		t.Fatal(err)
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"file_write","arguments":{"path":"x.txt","content":"where?"}}}`)
	for {
		m := next()
		if m["id"] == float64(1) {
			break
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "x.txt")); err == nil {
		t.Fatal("the write followed the swapped-in symlink out of the granted directory")
	}
}
