package dashboard

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/app/apptest"
	"github.com/switchboard-hub/switchboard/internal/config"
)

// TestProjectChoiceKeepsConfigFileTrue: when the config file names the workspace, a folder chosen
// on the dashboard is written there too (the person's comment kept), so the file and the running
// hub agree; the answer says so.
func TestProjectChoiceKeepsConfigFileTrue(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	cfgPath := filepath.Join(t.TempDir(), "config.toml")
	st := apptest.Stack(t, "", func(c *config.Config) {
		c.Path = cfgPath
		if err := os.MkdirAll(c.Workspace, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(cfgPath, []byte("workspace = \""+c.Workspace+"\"  # my project\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	})
	if p := st.Project(); p.Source != app.ProjectFromConfig {
		t.Fatalf("project at start: %+v", p)
	}
	next := filepath.Join(home, "next")
	if err := os.MkdirAll(next, 0o755); err != nil {
		t.Fatal(err)
	}
	ch, err := app.NewController(st, "test").SetProject(next)
	if err != nil {
		t.Fatal(err)
	}
	if ch.Project.Dir != apptest.RealDir(next) || ch.Project.Source != app.ProjectFromConfig || !strings.Contains(ch.Note, "saved as workspace in "+cfgPath) {
		t.Errorf("answer %+v", ch)
	}
	if b, _ := os.ReadFile(cfgPath); string(b) != "workspace = \""+apptest.RealDir(next)+"\"  # my project\n" {
		t.Errorf("config file after the choice:\n%s", b)
	}
}
