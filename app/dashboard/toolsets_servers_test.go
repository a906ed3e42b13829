package dashboard

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/app/apptest"
	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/internal/testutil"
	"github.com/switchboard-hub/switchboard/internal/upstream"
)

// TestToolsetsKeyNamesServers: with the toolsets key listing toolsets one by one, a server is
// served only when the key names it. Adding a server from the dashboard names it there and serves
// it once approved; the Settings view's save keeps the servers that are on; a server's switch
// saves like a hub set's; removing the server takes it off the key. A key naming an unknown
// toolset stops the start with the valid names, the configured servers among them.
func TestToolsetsKeyNamesServers(t *testing.T) {
	sdkDir := testutil.NodeModule(t, "@modelcontextprotocol/sdk")
	fixture := filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(sdkDir))), "upstream-fixture.mjs")
	cfgPath := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(cfgPath, []byte("toolsets = [\"files\"]  # just files\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	st := apptest.Stack(t, "", func(c *config.Config) { c.Path, c.Toolsets = cfgPath, []string{"files"} })
	ctl := app.NewController(st, "test")
	key := func() []string {
		t.Helper()
		file, _, err := config.ReadFile(cfgPath)
		if err != nil {
			t.Fatal(err)
		}
		return file.Toolsets
	}
	served := func(name string) bool {
		for _, tl := range st.Service.ActiveTools() {
			if tl.Name == name {
				return true
			}
		}
		return false
	}

	if _, err := ctl.AddServer(upstream.Spec{Name: "fixture", Command: "node", Args: []string{fixture}}); err != nil {
		t.Fatal(err)
	}
	if got := key(); !slices.Equal(got, []string{"files", "fixture"}) {
		t.Fatalf("key after adding the server: %v", got)
	}
	if b, _ := os.ReadFile(cfgPath); !strings.Contains(string(b), "# just files") {
		t.Errorf("the key lost its comment:\n%s", b)
	}
	if _, err := ctl.ApproveServer("fixture", nil); err != nil {
		t.Fatal(err)
	}
	if !served("fixture__greet") || !served("file_read") || served("exec") {
		t.Fatalf("served after approval: %v", st.Service.ActiveToolsets())
	}

	// Settings: the hub's sets saved; the server, on, stays in the key.
	if _, err := ctl.SaveToolsets([]string{"files", "process"}); err != nil {
		t.Fatal(err)
	}
	if got := key(); !slices.Equal(got, []string{"files", "process", "fixture"}) {
		t.Errorf("key after the Settings save: %v", got)
	}
	// The server's switch saves too, now that the key names servers.
	if _, err := ctl.SetToolset("fixture", false); err != nil {
		t.Fatal(err)
	}
	if got := key(); !slices.Equal(got, []string{"files", "process"}) || served("fixture__greet") {
		t.Errorf("after switching the server off: key %v, served %v", got, served("fixture__greet"))
	}
	if _, err := ctl.SetToolset("fixture", true); err != nil {
		t.Fatal(err)
	}
	if got := key(); !slices.Equal(got, []string{"files", "process", "fixture"}) || !served("fixture__greet") {
		t.Errorf("after switching the server on: key %v, served %v", got, served("fixture__greet"))
	}
	if _, err := ctl.RemoveServer("fixture"); err != nil {
		t.Fatal(err)
	}
	if got := key(); !slices.Equal(got, []string{"files", "process"}) {
		t.Errorf("key after removing the server: %v", got)
	}

	// At start: a server's name is a valid toolset, an unknown name is refused naming the servers.
	cfg := apptest.Config(t)
	cfg.Servers = []upstream.Spec{{Name: "github", Command: "gh-mcp", Enabled: new(false)}}
	cfg.Toolsets = []string{"files", "gitlab"}
	if _, err := app.BuildStack(cfg, "test", app.StackOptions{}); err == nil || !strings.Contains(err.Error(), `toolsets: unknown toolset "gitlab"`) || !strings.Contains(err.Error(), "or a configured server: github") {
		t.Errorf("unknown toolset at start: %v", err)
	}
	cfg.Toolsets = []string{"files", "github"}
	st2, err := app.BuildStack(cfg, "test", app.StackOptions{})
	if err != nil {
		t.Fatalf("a server's name in toolsets: %v", err)
	}
	st2.CloseBounded()
}
