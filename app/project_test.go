package app

import (
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/app/tray"
	"github.com/switchboard-hub/switchboard/internal/config"
)

// mcpOverUnix connects a go-sdk client to a hub's Unix socket.
func mcpOverUnix(t *testing.T, sock, name string) *sdk.ClientSession {
	t.Helper()
	conn, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: name, Version: "1"}, nil).Connect(ctx, &sdk.IOTransport{Reader: conn, Writer: conn}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// toolText calls a tool and returns its text and whether it failed.
func toolText(t *testing.T, cs *sdk.ClientSession, tool string, args map[string]any) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// TestLaunchFromHomeAsksForProject: the app launched as the menu does — no --workspace, its
// directory the (temporary) home — serves no project: a client's file and process calls are
// refused with how to choose one and nothing is written in the home; the dashboard's API refuses
// the home itself, / and a relative folder as the project, then takes ~/src/app, and the same
// connected client works there at once. The next launch from the home starts in that folder;
// a launch from a terminal in another project uses that directory, and --workspace ~ still serves
// the home when asked for.
func TestLaunchFromHomeAsksForProject(t *testing.T) {
	bin := binary(t)
	env := append(testEnv(t), "DISPLAY=", "WAYLAND_DISPLAY=", "SWITCHBOARD_DASHBOARD_ADDR=127.0.0.1:0", "SWITCHBOARD_WORKSPACE=")
	home := envValue(env, "HOME")
	start := func(dir string, args ...string) (url, token, sock string, w *lineWatcher, stop func()) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env, cmd.Dir = env, dir
		stderr, _ := cmd.StderrPipe()
		w = &lineWatcher{}
		go w.run(stderr)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		stop = func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() }
		t.Cleanup(stop)
		m := w.wait(t, regexp.MustCompile(`dashboard at (http://[^/\s]+)/\?token=(\S+)`))
		u := w.wait(t, regexp.MustCompile(`unix on unix://(\S+)`))
		return m[1], m[2], u[1], w, stop
	}

	url, token, sock, w, stop := start(home)
	w.wait(t, regexp.MustCompile(`no project folder chosen yet: choose one in the dashboard`))
	cs := mcpOverUnix(t, sock, "menu-client")
	for _, c := range []struct {
		tool string
		args map[string]any
	}{{"file_write", map[string]any{"path": "a.txt", "content": "x"}}, {"exec", map[string]any{"command": "pwd"}}} {
		if text, failed := toolText(t, cs, c.tool, c.args); !failed || !strings.Contains(text, NoProjectReason) {
			t.Errorf("%s with no project: failed=%v %q; want the error %q", c.tool, failed, text, NoProjectReason)
		}
	}
	if _, err := os.Stat(filepath.Join(home, "a.txt")); err == nil {
		t.Fatal("a call wrote into the home directory")
	}
	if code, p := dashAPI(t, url, token, http.MethodGet, "/api/project", nil); code != 200 || p["dir"] != "" || p["source"] != ProjectFromNone {
		t.Fatalf("GET /api/project: %d %v", code, p)
	}
	for _, c := range []struct{ dir, want string }{
		{home, "is your home directory"},
		{"~", "is your home directory"},
		{"/", "not a project"},
		{"src/app", "is relative"},
		{filepath.Join(home, "missing"), "does not exist"},
	} {
		if code, out := dashAPI(t, url, token, http.MethodPost, "/api/project", map[string]string{"dir": c.dir}); code != 400 || !strings.Contains(out["error"].(string), c.want) {
			t.Errorf("POST /api/project %q: %d %v, want 400 with %q", c.dir, code, out, c.want)
		}
	}
	if code, out := dashAPI(t, url, token, http.MethodPost, "/api/project/pick", nil); code != 400 || !strings.Contains(out["error"].(string), "type the folder's path") {
		t.Errorf("POST /api/project/pick in a browser: %d %v", code, out)
	}

	project := filepath.Join(home, "src", "app")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	project = realDir(project)
	code, out := dashAPI(t, url, token, http.MethodPost, "/api/project", map[string]string{"dir": "~/src/app"})
	if code != 200 {
		t.Fatalf("POST /api/project ~/src/app: %d %v", code, out)
	}
	if p := out["project"].(map[string]any); p["dir"] != project || p["name"] != "app" || p["source"] != ProjectFromChosen {
		t.Errorf("chosen project: %v", p)
	}
	if text, failed := toolText(t, cs, "file_write", map[string]any{"path": "a.txt", "content": "x"}); failed {
		t.Fatalf("file_write once a project is chosen: %s", text)
	}
	if _, err := os.Stat(filepath.Join(project, "a.txt")); err != nil {
		t.Fatalf("the write did not land in the project: %v", err)
	}
	if text, _ := toolText(t, cs, "exec", map[string]any{"command": "pwd"}); !strings.Contains(text, project) {
		t.Errorf("exec ran in %q, want %s", text, project)
	}
	stop()

	// The next launch from the home starts in the folder chosen last.
	_, _, sock, w, stop = start(home)
	w.wait(t, regexp.MustCompile(`project folder `+regexp.QuoteMeta(project)+` \(last\)`))
	if text, failed := toolText(t, mcpOverUnix(t, sock, "next-launch"), "file_read", map[string]any{"path": "a.txt"}); failed {
		t.Fatalf("file_read after a relaunch: %s", text)
	}
	stop()

	// A terminal in another project: that directory, whatever was chosen last.
	other := realDir(t.TempDir())
	_, _, _, w, stop = start(other)
	w.wait(t, regexp.MustCompile(`project folder `+regexp.QuoteMeta(other)+` \(cwd\)`))
	stop()

	// The home itself stays possible, asked for explicitly.
	_, _, sock, w, stop = start(home, "--workspace", home)
	w.wait(t, regexp.MustCompile(`project folder `+regexp.QuoteMeta(realDir(home))+` \(flag\)`))
	if text, failed := toolText(t, mcpOverUnix(t, sock, "explicit-home"), "file_read", map[string]any{"path": "src/app/a.txt"}); failed {
		t.Fatalf("file_read with --workspace ~: %s", text)
	}
	stop()
}

// TestTrayChoosesProject: the tray shows the project folder, and its item asks for a folder
// (the shell's picker) and switches the running hub to it; the home directory is refused with a
// notice, and a dismissed picker changes nothing.
func TestTrayChoosesProject(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	st := trayTestStack(t, "")
	c, view, shell, ctx := runTray(t, st)
	ws := filepath.Base(st.Service.WorkspaceDir())
	view.waitFor(t, "the project item", menuHas(tray.LabelProject+ws))

	project := filepath.Join(home, "proj")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	shell.mu.Lock()
	shell.pick = func(string, string) (string, error) { return project, nil }
	shell.mu.Unlock()
	trayClick(t, c, view, ctx, tray.LabelProject)
	view.waitFor(t, "the new project and the notice", func(m tray.Menu) bool {
		return menuHas(tray.LabelProject+"proj")(m) && !menuHas(tray.LabelProject+ws)(m) && menuHas("Project folder is now proj")(m)
	})
	if got := st.Service.WorkspaceDir(); got != realDir(project) {
		t.Fatalf("the hub works in %q, want %s", got, project)
	}
	if p := st.Project(); p.Source != ProjectFromChosen || p.Name != "proj" {
		t.Errorf("project after the tray's choice: %+v", p)
	}
	if last, err := loadLastProject(st.Config.DataDir); err != nil || last != realDir(project) {
		t.Errorf("remembered %q (%v), want %s", last, err, project)
	}

	shell.mu.Lock()
	shell.pick = func(string, string) (string, error) { return home, nil }
	shell.mu.Unlock()
	trayClick(t, c, view, ctx, tray.LabelProject)
	view.waitFor(t, "the refusal", menuHas("Project not changed: project folder: "+home+" is your home directory"))
	shell.mu.Lock()
	shell.pick = nil // dismissed
	starts := append([]string(nil), shell.picked...)
	shell.mu.Unlock()
	trayClick(t, c, view, ctx, tray.LabelProject)
	picks := func() int { shell.mu.Lock(); defer shell.mu.Unlock(); return len(shell.picked) }
	for picks() < 3 { // each PickFolder is announced ("pick"); earlier ones may still be queued
		shell.waitEvent(t, "pick")
	}
	if got := st.Service.WorkspaceDir(); got != realDir(project) {
		t.Errorf("after a refusal and a dismissed picker the hub works in %q, want %s", got, project)
	}
	if len(starts) != 2 || starts[1] != realDir(project) {
		t.Errorf("the picker opened in %q; want the project folder of the time", starts)
	}
}

// TestProjectChoiceKeepsConfigFileTrue: when the config file names the workspace, a folder chosen
// on the dashboard is written there too (the person's comment kept), so the file and the running
// hub agree; the answer says so.
func TestProjectChoiceKeepsConfigFileTrue(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	cfgPath := filepath.Join(t.TempDir(), "config.toml")
	st := trayTestStack(t, "", func(c *config.Config) {
		c.Path = cfgPath
		if err := os.MkdirAll(c.Workspace, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(cfgPath, []byte("workspace = \""+c.Workspace+"\"  # my project\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	})
	if p := st.Project(); p.Source != ProjectFromConfig {
		t.Fatalf("project at start: %+v", p)
	}
	next := filepath.Join(home, "next")
	if err := os.MkdirAll(next, 0o755); err != nil {
		t.Fatal(err)
	}
	ch, err := NewController(st, "test").SetProject(next)
	if err != nil {
		t.Fatal(err)
	}
	if ch.Project.Dir != realDir(next) || ch.Project.Source != ProjectFromConfig || !strings.Contains(ch.Note, "saved as workspace in "+cfgPath) {
		t.Errorf("answer %+v", ch)
	}
	if b, _ := os.ReadFile(cfgPath); string(b) != "workspace = \""+realDir(next)+"\"  # my project\n" {
		t.Errorf("config file after the choice:\n%s", b)
	}
}
