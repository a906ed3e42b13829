package dashboard_test

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/app/apptest"
	"github.com/switchboard-hub/switchboard/internal/config"
)

// TestLaunchBesideARunningHub (issue 39, item 4): the desktop app launched from the menu while a
// hub started from a terminal holds the socket finds it (control "hub.info"), opens a headless
// hub's dashboard in the browser and says so on the desktop, or says how to reach a `serve` hub —
// instead of exiting 1 with nothing shown.
func TestLaunchBesideARunningHub(t *testing.T) {
	bin := apptest.Binary(t)
	env := apptest.Env(t)
	sock := filepath.Join(apptest.EnvValue(env, "XDG_RUNTIME_DIR"), "switchboard", "mcp.sock")
	cfg := config.Config{}
	cfg.Unix.Path = sock

	if _, ok := app.RunningHub(t.Context(), cfg); ok {
		t.Fatal("a hub found where none runs")
	}

	h := apptest.StartHeadless(t, bin, env, "", "--workspace", t.TempDir())
	info, ok := app.RunningHub(t.Context(), cfg)
	if !ok || info.PID != h.Cmd.Process.Pid || info.Dashboard != h.URL+"/?token="+h.Token {
		t.Fatalf("hub.info of a headless hub: %+v (ok %v), want pid %d and %s", info, ok, h.Cmd.Process.Pid, h.URL)
	}
	var opened, notified string
	msg := app.HandOff(info, func(url string) error { opened = url; return nil }, func(s, b string) { notified = s + ": " + b })
	if opened != info.Dashboard || notified != msg || !strings.Contains(msg, "already running") || !strings.Contains(msg, "dashboard opens in your browser") {
		t.Fatalf("hand-off to a headless hub: opened %q, notified %q, said %q", opened, notified, msg)
	}
	h.Stop()

	apptest.Start(t, bin, env, "", regexp.MustCompile(`unix listening on unix://`), "serve", "--unix", sock)
	info, ok = app.RunningHub(t.Context(), cfg)
	if !ok || info.Dashboard != "" || info.Socket != sock {
		t.Fatalf("hub.info of `serve`: %+v (ok %v)", info, ok)
	}
	opened = ""
	msg = app.HandOff(info, func(url string) error { opened = url; return nil }, func(string, string) {})
	if opened != "" || !strings.Contains(msg, "`switchboard serve` runs") || !strings.Contains(msg, sock) {
		t.Fatalf("hand-off to serve: opened %q, said %q", opened, msg)
	}
}
