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

// TestSettingsShowsPolicyRulesThatNeverMatch: the Settings view's policy section reads the
// warnings of the policy in force from its status (a rule on servers_call, which the hub
// decides as the server tool the call names); "test a call" warns like `switchboard policy
// check`, before anything is saved; saving the rule as <server>__<tool> clears the warning.
func TestSettingsShowsPolicyRulesThatNeverMatch(t *testing.T) {
	dir := realTempDir(t)
	cfgPath := filepath.Join(dir, "config.toml")
	text := "[[policy.rules]]\ntool = \"servers_call\"\nargs = { name = \"github__*\" }\naction = \"deny\"\n"
	if err := os.WriteFile(cfgPath, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	st := apptest.Stack(t, "", func(c *config.Config) {
		c.Path = cfgPath
		file, err := config.Load(cfgPath)
		if err != nil {
			t.Fatal(err)
		}
		c.Policy = file.Policy
	})
	srv := httptest.NewServer(NewServer(app.NewController(st, "test"), "dash-token").Handler())
	defer srv.Close()
	do := func(method, route string, body any) (int, map[string]any) {
		t.Helper()
		return apptest.DashAPI(t, srv.URL, "dash-token", method, route, body)
	}
	warnings := func(s map[string]any) string {
		return fmt.Sprint(s["policy"].(map[string]any)["status"].(map[string]any)["warnings"])
	}
	code, s := do(http.MethodGet, "/api/settings", nil)
	if w := warnings(s); code != 200 || !strings.Contains(w, `policy.rules[1].tool: "servers_call" never matches`) || !strings.Contains(w, "<server>__<tool>") {
		t.Fatalf("GET /api/settings: %d, policy warnings %s", code, w)
	}

	rule := func(tool string) map[string]any {
		return map[string]any{"tool": tool, "action": "deny", "origin": 1}
	}
	code, dec := do(http.MethodPost, "/api/settings/policy/test", map[string]any{"policy": map[string]any{"rules": []any{rule("servers_call")}}, "tool": "servers_call"})
	if w := fmt.Sprint(dec["warnings"]); code != 200 || !strings.Contains(w, "the hub never decides a call named servers_call") || !strings.Contains(w, "policy.rules[1].tool") {
		t.Errorf("test servers_call: %d %v", code, dec)
	}
	code, dec = do(http.MethodPost, "/api/settings/policy/test", map[string]any{"policy": map[string]any{"rules": []any{rule("github__*")}}, "tool": "github__create_issue"})
	if code != 200 || dec["decision"] != "deny" || dec["warnings"] != nil {
		t.Errorf("test github__create_issue: %d %v", code, dec)
	}

	code, out := do(http.MethodPost, "/api/settings/policy", map[string]any{"rules": []any{rule("github__*")}})
	if code != 200 {
		t.Fatalf("save: %d %v", code, out)
	}
	if w := warnings(out["settings"].(map[string]any)); w != "<nil>" {
		t.Errorf("warnings after saving the fixed rule: %s", w)
	}
	if w := st.Policy.Status().Warnings; len(w) != 0 {
		t.Errorf("policy in force still warns: %q", w)
	}
}
