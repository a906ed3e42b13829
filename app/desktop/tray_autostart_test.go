package desktop

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/app/apptest"
	"github.com/switchboard-hub/switchboard/app/tray"
	"github.com/switchboard-hub/switchboard/internal/config"
)

// TestTrayFollowsSettingsAutostart: "Start at login" switched in the Settings view shows in the
// running tray's menu without a restart, and back: the tray's switch is on the activity feed (the
// dashboard's "activity" channel), which the Settings view re-reads on.
func TestTrayFollowsSettingsAutostart(t *testing.T) {
	cfgHome := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfgHome)
	cfgPath := filepath.Join(t.TempDir(), "config.toml")
	st := apptest.Stack(t, "", func(c *config.Config) { c.Path = cfgPath })
	ctl := app.NewController(st, "test")
	c, view, _, ctx := runTray(t, st, func(c *tray.Controller) { c.NoticeTTL = time.Hour })
	m := view.waitFor(t, "initial menu", menuHas(tray.LabelAutostart))
	if itemWithPrefix(t, m, tray.LabelAutostart).Checked {
		t.Fatal("Start at login checked with no autostart entry")
	}
	if _, err := ctl.SetAutostart(true); err != nil {
		t.Fatal(err)
	}
	view.waitFor(t, "Start at login checked after the Settings view switched it on", func(m tray.Menu) bool {
		for _, it := range m.Items {
			if strings.HasPrefix(it.Label, tray.LabelAutostart) {
				return it.Checked
			}
		}
		return false
	})

	seen := len(st.Service.Activity())
	trayClick(t, c, view, ctx, tray.LabelAutostart)
	view.waitFor(t, "autostart off", menuHas("Switchboard will not start at login"))
	if s, err := ctl.Settings(); err != nil || s.Autostart.Enabled {
		t.Fatalf("Settings after the tray switched it off: %+v %v", s.Autostart, err)
	}
	var told bool
	for _, e := range st.Service.Activity()[seen:] {
		if e.Tool == app.ActionAutostartSet && e.Actor == "tray" && e.Outcome == "ok" {
			told = true
		}
	}
	if !told {
		t.Fatal("the tray's switch is not on the activity feed, so an open Settings view would not hear of it")
	}
}
