package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/testutil"
	"github.com/switchboard-hub/switchboard/internal/workspace"
	"github.com/switchboard-hub/switchboard/mcp/tool"
)

// oneWorkspace is the Workspaces of a group tested on its own: every call works in one
// directory, nothing is left out of walks and no policy applies.
type oneWorkspace struct{ root *workspace.Root }

func openWorkspace(t *testing.T, dir string) oneWorkspace {
	t.Helper()
	root, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return oneWorkspace{root}
}

func (w oneWorkspace) WorkspaceFor(context.Context, *sdk.CallToolRequest) (*workspace.Root, error) {
	return w.root, nil
}

func (w oneWorkspace) ResolveWorkspace(context.Context, *sdk.CallToolRequest, bool) (*workspace.Root, error) {
	return w.root, nil
}

func (oneWorkspace) WalkSkip(*sdk.CallToolRequest, *workspace.Root) func(string, bool) bool {
	return func(string, bool) bool { return false }
}

func (oneWorkspace) PolicyFile() string { return "(no policy)" }

func (w oneWorkspace) HubDir() string { return w.root.Dir() }

// serveGroup is a bare go-sdk server with group bound to deps: the group as a hub would serve
// it, without the hub's policy, audit or workspaces.
func serveGroup(t *testing.T, group tool.Group, deps any) *sdk.Server {
	t.Helper()
	server := sdk.NewServer(&sdk.Implementation{Name: "group-test", Version: "0"}, nil)
	for _, tl := range group.Bind(deps) {
		server.AddTool(tl.Def, tl.Handler)
	}
	return server
}

// writeTree creates files (slash-separated relative paths) under root.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A client that sends a progress token hears how many files were searched.
func TestFileGrepProgress(t *testing.T) {
	old := progressInterval
	progressInterval = 2 * time.Millisecond
	t.Cleanup(func() { progressInterval = old })
	ws := t.TempDir()
	server := serveGroup(t, SearchGroup(), NewSearchTools(openWorkspace(t, ws)))
	files := map[string]string{}
	for i := range 2000 {
		files[fmt.Sprintf("d%02d/f%04d.txt", i%40, i)] = strings.Repeat("some text without the word\n", 20)
	}
	writeTree(t, ws, files)

	var mu sync.Mutex
	var got []*sdk.ProgressNotificationParams
	done := make(chan struct{}, 1) // the "done: ..." notification arrived
	ct, st := sdk.NewInMemoryTransports()
	ss, err := server.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "p", Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
			mu.Lock()
			got = append(got, r.Params)
			mu.Unlock()
			if strings.HasPrefix(r.Params.Message, "done:") {
				select {
				case done <- struct{}{}:
				default:
				}
			}
		},
	}).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	params := &sdk.CallToolParams{Name: "file_grep", Arguments: map[string]any{"pattern": "needle", "literal": true}}
	params.SetProgressToken("grep-1")
	res, err := cs.CallTool(context.Background(), params)
	if err != nil || res.IsError {
		t.Fatalf("call: %v %+v", err, res)
	}
	// The final notification may arrive after the result: wait for it.
	testutil.Receive(t, done, "the final progress notification")
	mu.Lock()
	n := len(got)
	last := got[n-1]
	mu.Unlock()
	if last.ProgressToken != "grep-1" || last.Progress != 2000 || !strings.HasPrefix(last.Message, "done: 2000 files searched") {
		t.Errorf("final progress = %+v (of %d)", last, n)
	}
}
