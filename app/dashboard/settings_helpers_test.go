package dashboard

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/app/apptest"
	"github.com/switchboard-hub/switchboard/internal/config"
)

// settingsHub is a hub on a fresh HOME whose config file holds settingsConfig, served over the
// dashboard's API, with what the Settings API tests check through: the hub's stack and the
// config file's checks.
func settingsHub(t *testing.T) (home string, st *app.Stack, chk settingsChecks) {
	t.Helper()
	home = realTempDir(t)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	for _, k := range []string{"MCP_ADDR", "SWITCHBOARD_WORKSPACE", "SWITCHBOARD_TOOLSETS", "SWITCHBOARD_SOCKET", "SWITCHBOARD_QDRANT_URL", "OPENAI_BASE_URL", "OPENAI_API_KEY"} {
		t.Setenv(k, "")
	}
	cfgPath := filepath.Join(home, ".config", "switchboard", "config.toml")
	if err := os.MkdirAll(filepath.Dir(cfgPath), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfgPath, []byte(settingsConfig), 0o640); err != nil {
		t.Fatal(err)
	}
	st = apptest.Stack(t, "", func(c *config.Config) { c.Path = cfgPath })
	srv := httptest.NewServer(NewServer(app.NewController(st, "test"), "dash-token").Handler())
	t.Cleanup(srv.Close)
	do := func(method, route string, body any) (int, map[string]any) {
		t.Helper()
		return apptest.DashAPI(t, srv.URL, "dash-token", method, route, body)
	}
	return home, st, settingsChecks{t, cfgPath, do}
}

// settingsChecks are the checks every Settings API test makes of a save: a refused one answers
// 400 naming the fault and leaves the config file byte for byte, an accepted one answers 200.
type settingsChecks struct {
	t    *testing.T
	path string // the config file
	do   func(method, route string, body any) (int, map[string]any)
}

func (c settingsChecks) read() string {
	c.t.Helper()
	b, err := os.ReadFile(c.path)
	if err != nil {
		c.t.Fatal(err)
	}
	return string(b)
}

func (c settingsChecks) refused(route string, body any, want string) {
	c.t.Helper()
	before := c.read()
	code, out := c.do(http.MethodPost, route, body)
	if code != http.StatusBadRequest || !strings.Contains(fmt.Sprint(out["error"]), want) {
		c.t.Fatalf("POST %s %v: %d %v; want 400 naming %q", route, body, code, out, want)
	}
	if c.read() != before {
		c.t.Fatalf("POST %s was refused but the file changed:\n%s", route, c.read())
	}
}

func (c settingsChecks) saved(route string, body any) map[string]any {
	c.t.Helper()
	code, out := c.do(http.MethodPost, route, body)
	if code != http.StatusOK {
		c.t.Fatalf("POST %s %v: %d %v", route, body, code, out)
	}
	return out
}

// settingsPending is what the Settings view lists as pending (Settings.Pending): the sections
// whose saved values differ from what the hub runs.
func settingsPending(t *testing.T, c *app.Controller) []string {
	t.Helper()
	s, err := c.Settings()
	if err != nil {
		t.Fatal(err)
	}
	return s.Pending
}
