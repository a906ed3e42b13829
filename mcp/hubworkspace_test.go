package mcp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/policy"
	"github.com/switchboard-hub/switchboard/internal/process"
	"github.com/switchboard-hub/switchboard/mcp/tools"
)

const noProjectReason = "no project folder chosen yet: pick one in the Switchboard window or the tray, or pass --workspace DIR"

// TestHubWithoutWorkspace: a hub started without a workspace of its own (a desktop launch from
// the home directory) refuses, with the reason it was given, every call that would work in the
// hub's workspace — for a plain client and for a connect relay started in the home directory —
// while a client whose root is a project works there. SetWorkspace then gives the hub one while
// it runs: the same connected sessions work in it, and a later change moves them again, the
// Sessions view following each time.
func TestHubWithoutWorkspace(t *testing.T) {
	home := t.TempDir()
	if real, err := filepath.EvalSymlinks(home); err == nil {
		home = real
	}
	t.Setenv("HOME", home)
	p, err := policy.Compile(policy.Config{AskTimeout: "60s"}, policy.RootsConfig{})
	if err != nil {
		t.Fatal(err)
	}
	procs := process.New(process.Options{})
	s, err := New(WithNoWorkspace(noProjectReason), WithPolicy(policy.NewStore("", p), policy.NewBroker()), WithProcessService(procs))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	sock := filepath.Join(shortTempDir(t), "m.sock")
	listen(t, s, TransportUnix, TransportConfig{UnixPath: sock})
	if s.Workspace() != nil || s.WorkspaceDir() != "" {
		t.Fatalf("hub started with workspace %q", s.WorkspaceDir())
	}

	plain := dialHub(t, sock, "", sdk.NewClient(&sdk.Implementation{Name: "plain", Version: "1"}, nil))
	relayed := dialHub(t, sock, home, sdk.NewClient(&sdk.Implementation{Name: "from-home", Version: "1"}, nil))
	for _, tc := range []struct {
		cs   *sdk.ClientSession
		tool string
		args map[string]any
	}{
		{plain, "file_write", map[string]any{"path": "a.txt", "content": "x"}},
		{plain, "dir_list", map[string]any{"path": "."}},
		{plain, "exec", map[string]any{"command": "pwd"}},
		{relayed, "file_write", map[string]any{"path": "a.txt", "content": "x"}},
	} {
		if msg := call(t, tc.cs, tc.tool, tc.args, nil); !strings.Contains(msg, noProjectReason) {
			t.Errorf("%s without a project: %q, want the reason %q", tc.tool, msg, noProjectReason)
		}
	}
	if _, err := os.Stat(filepath.Join(home, "a.txt")); err == nil {
		t.Fatal("a call without a project wrote into the home directory")
	}
	// Tools that need no workspace keep working.
	mustCall(t, plain, "process_list", map[string]any{}, nil)

	project := filepath.Join(home, "src", "app")
	mkdirs(t, project)
	c := sdk.NewClient(&sdk.Implementation{Name: "rooted", Version: "1"}, nil)
	c.AddRoots(&sdk.Root{URI: fileURI(project)})
	rooted := dialHub(t, sock, "", c)
	mustCall(t, rooted, "file_write", map[string]any{"path": "r.txt", "content": "root"}, nil)
	if _, err := os.Stat(filepath.Join(project, "r.txt")); err != nil {
		t.Fatalf("a client with a project root could not work there: %v", err)
	}

	var mu sync.Mutex
	var changes []string
	cancel := s.OnWorkspaceChange(func(dir string) { mu.Lock(); changes = append(changes, dir); mu.Unlock() })
	defer cancel()

	first := filepath.Join(home, "first")
	mkdirs(t, first)
	if err := s.SetWorkspace(first); err != nil {
		t.Fatal(err)
	}
	mustCall(t, plain, "file_write", map[string]any{"path": "a.txt", "content": "first"}, nil)
	mustCall(t, relayed, "file_write", map[string]any{"path": "b.txt", "content": "first"}, nil)
	var ex tools.ExecOutput
	mustCall(t, plain, "exec", map[string]any{"command": "pwd"}, &ex)
	if strings.TrimSpace(ex.Stdout) != first {
		t.Errorf("exec ran in %q, want the new workspace %s", ex.Stdout, first)
	}
	for _, f := range []string{"a.txt", "b.txt"} {
		if _, err := os.Stat(filepath.Join(first, f)); err != nil {
			t.Errorf("%s not in the chosen workspace: %v", f, err)
		}
	}
	if si := sessionNamed(t, s, "from-home"); si.Workspace != first || si.WorkspaceFrom != policy.FromHub {
		t.Errorf("Sessions view: relay session's workspace %q from %q, want %s from hub", si.Workspace, si.WorkspaceFrom, first)
	}

	// Again, to the directory a client holds as its root: the one sandbox is shared, and the
	// client with that root keeps working in it.
	if err := s.SetWorkspace(project); err != nil {
		t.Fatal(err)
	}
	mustCall(t, plain, "file_write", map[string]any{"path": "p.txt", "content": "project"}, nil)
	mustCall(t, rooted, "file_read", map[string]any{"path": "p.txt"}, nil)
	if got := s.WorkspaceDir(); got != project {
		t.Errorf("WorkspaceDir = %q, want %s", got, project)
	}
	// The same directory again changes nothing and tells nobody.
	if err := s.SetWorkspace(project); err != nil {
		t.Fatal(err)
	}
	if err := s.SetWorkspace(filepath.Join(home, "missing")); err == nil {
		t.Error("SetWorkspace accepted a directory that does not exist")
	}
	if s.WorkspaceDir() != project {
		t.Errorf("a refused SetWorkspace moved the workspace to %q", s.WorkspaceDir())
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(changes, ",") != first+","+project {
		t.Errorf("OnWorkspaceChange saw %q, want %s then %s", changes, first, project)
	}
}
