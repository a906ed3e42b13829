package dashboard

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/app/apptest"
)

// TestSettingsPreviewWritesNothing: the Settings view's review (POST /api/settings/preview)
// answers, per section and in the view's order, the diff its save would make, or the error the
// save would answer with; the file stays byte for byte, no transport opens, nothing is audited;
// and the diff shown is the one the save then writes.
func TestSettingsPreviewWritesNothing(t *testing.T) {
	_, _, chk := settingsHub(t)
	cfgPath, do := chk.path, chk.do
	auditLines := func() int {
		code, out := do(http.MethodGet, "/api/audit", nil)
		if code != http.StatusOK {
			t.Fatalf("GET /api/audit: %d %v", code, out)
		}
		entries, _ := out["entries"].([]any)
		return len(entries)
	}
	audited := auditLines()

	port := apptest.FreePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	policy := map[string]any{"default": "allow", "rules": []map[string]any{{"tool": "exec", "args": map[string]string{"command": "rm*"}, "action": "deny"}}}
	out := chk.saved("/api/settings/preview", map[string]any{
		"transports": []map[string]any{{"name": "tcp", "enabled": true, "addr": addr}},
		"policy":     policy,
		"workspace":  "relative/dir",
		"web":        map[string]any{"allow": []string{"https://intranet.example/"}},
	})
	if out["path"] != cfgPath {
		t.Fatalf("path = %v", out["path"])
	}
	sections := map[string]map[string]any{}
	var order []string
	for _, s := range out["sections"].([]any) {
		m := s.(map[string]any)
		order = append(order, m["section"].(string))
		sections[m["section"].(string)] = m
	}
	if got := strings.Join(order, ","); got != "transports,workspace,policy,web" {
		t.Fatalf("sections in order %s; want the view's order transports,workspace,policy,web", got)
	}
	if d := fmt.Sprint(sections["transports"]["diff"]); !strings.Contains(d, "+enabled = true  # only while testing clients") || !strings.Contains(d, addr) || sections["transports"]["applies"] != "now" {
		t.Fatalf("transports preview: %v", sections["transports"])
	}
	if e := fmt.Sprint(sections["workspace"]["error"]); !strings.Contains(e, "workspace") || sections["workspace"]["diff"] != "" {
		t.Fatalf("workspace preview: %v; want the save's error", sections["workspace"])
	}
	if e := fmt.Sprint(sections["web"]["error"]); !strings.Contains(e, "web.allow") {
		t.Fatalf("web preview: %v; want the save's error naming web.allow", sections["web"])
	}
	shown := fmt.Sprint(sections["policy"]["diff"])
	if !strings.Contains(shown, `+tool = "exec"`) || sections["policy"]["error"] != nil {
		t.Fatalf("policy preview: %v", sections["policy"])
	}

	// Nothing written, opened or audited.
	if chk.read() != settingsConfig {
		t.Fatalf("the preview changed the file:\n%s", chk.read())
	}
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Fatalf("the preview opened TCP on %s", addr)
	}
	if n := auditLines(); n != audited {
		t.Fatalf("the preview was audited: %d entries, %d before", n, audited)
	}

	// The diff shown is the diff written.
	saved := chk.saved("/api/settings/policy", policy)
	if saved["diff"] != shown {
		t.Fatalf("saved diff differs from the preview's:\nsaved:\n%v\npreview:\n%s", saved["diff"], shown)
	}
	if n := auditLines(); n != audited+1 {
		t.Fatalf("the save made %d audit entries; want 1 (the audit count above counts)", n-audited)
	}
	// A section whose save would change nothing previews as an empty diff.
	again := chk.saved("/api/settings/preview", map[string]any{"policy": policy})
	if s := again["sections"].([]any)[0].(map[string]any); s["diff"] != "" || s["error"] != nil {
		t.Fatalf("preview of what the file already says: %v", s)
	}
}
