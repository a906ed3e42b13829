package dashboard

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/app/apptest"
	"github.com/switchboard-hub/switchboard/internal/config"
)

// TestSaveWorkspaceRefusesWhatTheProjectChooserRefuses: the Settings view's workspace is the
// folder of every start, so it takes what the header's project chooser takes and nothing more:
// /, the home directory (also written with a trailing slash or through a symlink) and a folder
// holding the home are a 400 naming the field, the file stays byte for byte and the running hub
// keeps its folder; a folder inside the home is saved and served.
func TestSaveWorkspaceRefusesWhatTheProjectChooserRefuses(t *testing.T) {
	top := realTempDir(t)
	home := filepath.Join(top, "home", "me")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("SWITCHBOARD_WORKSPACE", "")
	linkToHome := filepath.Join(top, "me-link")
	if err := os.Symlink(home, linkToHome); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(top, "config.toml")
	if err := os.WriteFile(cfgPath, []byte("# mine\nread_only = false\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	st := apptest.Stack(t, "", func(c *config.Config) { c.Path = cfgPath })
	srv := httptest.NewServer(NewServer(app.NewController(st, "test"), "dash-token").Handler())
	defer srv.Close()
	chk := settingsChecks{t, cfgPath, func(method, route string, body any) (int, map[string]any) {
		return apptest.DashAPI(t, srv.URL, "dash-token", method, route, body)
	}}
	running := st.Service.WorkspaceDir()
	for _, c := range []struct{ dir, want string }{
		{"/", "workspace: / is the whole computer, not a project"},
		{home, "workspace: " + home + " is your home directory"},
		{home + "/", "is your home directory"},
		{linkToHome, "is your home directory"},
		{filepath.Join(top, "home"), "holds your home directory"},
		{top, "holds your home directory"},
		{"~/src", `workspace: "~/src" is relative`},
	} {
		chk.refused("/api/settings/workspace", map[string]any{"workspace": c.dir}, c.want)
		if got := st.Service.WorkspaceDir(); got != running {
			t.Fatalf("after refusing %q the hub serves %q", c.dir, got)
		}
	}
	project := filepath.Join(home, "src", "app")
	os.MkdirAll(project, 0o755)
	if out := chk.saved("/api/settings/workspace", map[string]any{"workspace": project}); out["applies"] != "now" {
		t.Fatalf("workspace answer: %v", out)
	}
	if got := st.Service.WorkspaceDir(); got != project {
		t.Errorf("hub serves %q, want %q", got, project)
	}
	if !strings.Contains(chk.read(), "workspace = \""+project+"\"") {
		t.Errorf("file:\n%s", chk.read())
	}
}

// TestConfigWorkspaceOfHomeIsNotServed: a config file whose workspace is the home directory or /
// (written by hand, or by an older Settings view) is not served at the next start: the hub comes
// up in the directory it was started in, says why on its log (stderr for serve), and the same
// folder given as --workspace is served, since the user asked for it. The desktop's choice
// (ResolveProject) falls back the same way, to the folder chosen last.
func TestConfigWorkspaceOfHomeIsNotServed(t *testing.T) {
	home := realTempDir(t)
	t.Setenv("HOME", home)
	cwd := realTempDir(t)
	t.Chdir(cwd)
	for _, ws := range []string{home, "/"} {
		cfg := apptest.Config(t)
		cfg.Workspace = ws
		cfg.Path = filepath.Join(t.TempDir(), "config.toml")
		var log strings.Builder
		st, err := app.BuildStack(cfg, "test", app.StackOptions{LogSink: &log, Quiet: true, ProjectSource: app.ProjectFromConfig})
		if err != nil {
			t.Fatalf("workspace %s: BuildStack: %v", ws, err)
		}
		if got, p := st.Service.WorkspaceDir(), st.Project(); got != cwd || p.Source != app.ProjectFromCwd {
			t.Errorf("workspace %s in the file: serving %q (%s), want the start directory %s", ws, got, p.Source, cwd)
		}
		if !strings.Contains(log.String(), "workspace") || !strings.Contains(log.String(), cfg.Path) || !strings.Contains(log.String(), "is not used") {
			t.Errorf("workspace %s: no warning:\n%s", ws, log.String())
		}
		st.CloseBounded()

		start := app.ResolveProject(cfg, app.ProjectFromConfig, home, home)
		if start.Dir != "" || start.Source != app.ProjectFromNone || !strings.Contains(start.Warning, "is not used") {
			t.Errorf("desktop start from the home with workspace %s in the file: %+v", ws, start)
		}
		if start := app.ResolveProject(cfg, app.ProjectFromFlag, home, home); start.Dir != ws || start.Warning != "" {
			t.Errorf("--workspace %s: %+v", ws, start)
		}
	}
	cfg := apptest.Config(t)
	cfg.Workspace = home
	st, err := app.BuildStack(cfg, "test", app.StackOptions{ProjectSource: app.ProjectFromFlag})
	if err != nil {
		t.Fatal(err)
	}
	defer st.CloseBounded()
	if got := st.Service.WorkspaceDir(); got != home {
		t.Errorf("--workspace ~ serves %q, want the home", got)
	}
}
