package desktop

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/app/apptest"
	"github.com/switchboard-hub/switchboard/app/tray"
)

// TestTrayChoosesProject: the tray shows the project folder, and its item asks for a folder
// (the shell's picker) and switches the running hub to it; the home directory is refused with a
// notice, and a dismissed picker changes nothing.
func TestTrayChoosesProject(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	st := apptest.Stack(t, "")
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
	if got := st.Service.WorkspaceDir(); got != apptest.RealDir(project) {
		t.Fatalf("the hub works in %q, want %s", got, project)
	}
	if p := st.Project(); p.Source != app.ProjectFromChosen || p.Name != "proj" {
		t.Errorf("project after the tray's choice: %+v", p)
	}
	next := st.Config // the next launch from the home, no folder given
	next.Workspace = ""
	if p := app.ResolveProject(next, "", home, home); p.Dir != apptest.RealDir(project) || p.Source != app.ProjectFromLast {
		t.Errorf("the next launch from the home resolves %+v, want the remembered %s", p, project)
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
	if got := st.Service.WorkspaceDir(); got != apptest.RealDir(project) {
		t.Errorf("after a refusal and a dismissed picker the hub works in %q, want %s", got, project)
	}
	if len(starts) != 2 || starts[1] != apptest.RealDir(project) {
		t.Errorf("the picker opened in %q; want the project folder of the time", starts)
	}
}
