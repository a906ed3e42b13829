package cli

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/app/apptest"
)

// TestLaunchFromHomeAsksForProject: the app launched as the menu does — no --workspace, its
// directory the (temporary) home — serves no project: a client's file and process calls are
// refused with how to choose one and nothing is written in the home; the dashboard's API refuses
// the home itself, / and a relative folder as the project, then takes ~/src/app, and the same
// connected client works there at once. The next launch from the home starts in that folder;
// a launch from a terminal in another project uses that directory, and --workspace ~ still serves
// the home when asked for.
func TestLaunchFromHomeAsksForProject(t *testing.T) {
	bin := apptest.Binary(t)
	env := append(apptest.Env(t), "DISPLAY=", "WAYLAND_DISPLAY=", "SWITCHBOARD_DASHBOARD_ADDR=127.0.0.1:0", "SWITCHBOARD_WORKSPACE=")
	home := apptest.EnvValue(env, "HOME")
	start := func(dir string, args ...string) (url, token, sock string, w *apptest.LineWatcher, stop func()) {
		t.Helper()
		h := apptest.StartHeadless(t, bin, env, dir, args...)
		u := h.Stderr.Wait(t, regexp.MustCompile(`unix on unix://(\S+)`))
		return h.URL, h.Token, u[1], h.Stderr, h.Stop
	}

	url, token, sock, w, stop := start(home)
	w.Wait(t, regexp.MustCompile(`no project folder chosen yet: choose one in the dashboard`))
	cs := apptest.MCPOverUnix(t, sock, "menu-client")
	for _, c := range []struct {
		tool string
		args map[string]any
	}{{"file_write", map[string]any{"path": "a.txt", "content": "x"}}, {"exec", map[string]any{"command": "pwd"}}} {
		if text, failed := apptest.ToolText(t, cs, c.tool, c.args); !failed || !strings.Contains(text, app.NoProjectReason) {
			t.Errorf("%s with no project: failed=%v %q; want the error %q", c.tool, failed, text, app.NoProjectReason)
		}
	}
	if _, err := os.Stat(filepath.Join(home, "a.txt")); err == nil {
		t.Fatal("a call wrote into the home directory")
	}
	if code, p := apptest.DashAPI(t, url, token, http.MethodGet, "/api/project", nil); code != 200 || p["dir"] != "" || p["source"] != app.ProjectFromNone {
		t.Fatalf("GET /api/project: %d %v", code, p)
	}
	for _, c := range []struct{ dir, want string }{
		{home, "is your home directory"},
		{"~", "is your home directory"},
		{"/", "not a project"},
		{"src/app", "is relative"},
		{filepath.Join(home, "missing"), "does not exist"},
	} {
		if code, out := apptest.DashAPI(t, url, token, http.MethodPost, "/api/project", map[string]string{"dir": c.dir}); code != 400 || !strings.Contains(out["error"].(string), c.want) {
			t.Errorf("POST /api/project %q: %d %v, want 400 with %q", c.dir, code, out, c.want)
		}
	}
	if code, out := apptest.DashAPI(t, url, token, http.MethodPost, "/api/project/pick", nil); code != 400 || !strings.Contains(out["error"].(string), "type the folder's path") {
		t.Errorf("POST /api/project/pick in a browser: %d %v", code, out)
	}

	project := filepath.Join(home, "src", "app")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	project = apptest.RealDir(project)
	code, out := apptest.DashAPI(t, url, token, http.MethodPost, "/api/project", map[string]string{"dir": "~/src/app"})
	if code != 200 {
		t.Fatalf("POST /api/project ~/src/app: %d %v", code, out)
	}
	if p := out["project"].(map[string]any); p["dir"] != project || p["name"] != "app" || p["source"] != app.ProjectFromChosen {
		t.Errorf("chosen project: %v", p)
	}
	if text, failed := apptest.ToolText(t, cs, "file_write", map[string]any{"path": "a.txt", "content": "x"}); failed {
		t.Fatalf("file_write once a project is chosen: %s", text)
	}
	if _, err := os.Stat(filepath.Join(project, "a.txt")); err != nil {
		t.Fatalf("the write did not land in the project: %v", err)
	}
	if text, _ := apptest.ToolText(t, cs, "exec", map[string]any{"command": "pwd"}); !strings.Contains(text, project) {
		t.Errorf("exec ran in %q, want %s", text, project)
	}
	stop()

	// The next launch from the home starts in the folder chosen last.
	_, _, sock, w, stop = start(home)
	w.Wait(t, regexp.MustCompile(`project folder `+regexp.QuoteMeta(project)+` \(last\)`))
	if text, failed := apptest.ToolText(t, apptest.MCPOverUnix(t, sock, "next-launch"), "file_read", map[string]any{"path": "a.txt"}); failed {
		t.Fatalf("file_read after a relaunch: %s", text)
	}
	stop()

	// A terminal in another project: that directory, whatever was chosen last.
	other := apptest.RealDir(t.TempDir())
	_, _, _, w, stop = start(other)
	w.Wait(t, regexp.MustCompile(`project folder `+regexp.QuoteMeta(other)+` \(cwd\)`))
	stop()

	// The home itself stays possible, asked for explicitly.
	_, _, sock, w, stop = start(home, "--workspace", home)
	w.Wait(t, regexp.MustCompile(`project folder `+regexp.QuoteMeta(apptest.RealDir(home))+` \(flag\)`))
	if text, failed := apptest.ToolText(t, apptest.MCPOverUnix(t, sock, "explicit-home"), "file_read", map[string]any{"path": "src/app/a.txt"}); failed {
		t.Fatalf("file_read with --workspace ~: %s", text)
	}
	stop()
}

// TestConfigWorkspaceOfHomeIsNotServedAtStart: a config file naming the home directory (or /) as
// the workspace — what the Settings view used to save — is not served by the next plain start nor
// by `serve`: each warns, naming the file and the reason, and keeps serving the directory it was
// started in.
func TestConfigWorkspaceOfHomeIsNotServedAtStart(t *testing.T) {
	bin := apptest.Binary(t)
	env := append(apptest.Env(t), "DISPLAY=", "WAYLAND_DISPLAY=", "SWITCHBOARD_DASHBOARD_ADDR=127.0.0.1:0", "SWITCHBOARD_WORKSPACE=")
	home := apptest.EnvValue(env, "HOME")
	cfgPath := filepath.Join(apptest.EnvValue(env, "XDG_CONFIG_HOME"), "switchboard", "config.toml")
	if err := os.MkdirAll(filepath.Dir(cfgPath), 0o700); err != nil {
		t.Fatal(err)
	}
	project := apptest.RealDir(t.TempDir())
	for _, ws := range []string{home, "/"} {
		if err := os.WriteFile(cfgPath, []byte("workspace = \""+ws+"\"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		warning := regexp.MustCompile(`workspace \\?"` + regexp.QuoteMeta(ws) + `\\?" in ` + regexp.QuoteMeta(cfgPath) + ` is not used: .*(home directory|whole computer)`)

		h := apptest.StartHeadless(t, bin, env, project)
		h.Stderr.Wait(t, warning)
		h.Stderr.Wait(t, regexp.MustCompile(`project folder `+regexp.QuoteMeta(project)+` \(cwd\)`))
		h.Stop()

		sock := filepath.Join(apptest.ShortDir(t), "mcp.sock")
		p, _ := apptest.Start(t, bin, env, project, regexp.MustCompile(`unix listening on`), "serve", "--unix", sock)
		p.Stderr.Wait(t, warning)
		if text, _ := apptest.ToolText(t, apptest.MCPOverUnix(t, sock, "serve-client"), "exec", map[string]any{"command": "pwd"}); !strings.Contains(text, project) {
			t.Errorf("workspace %s in the file: serve ran exec in %q, want %s", ws, text, project)
		}
		p.Stop()
	}
}
