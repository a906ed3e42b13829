package cli

import (
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/internal/config"
)

// TestDoctorCodeChecks: doctor has a line for every language server; a missing one is a
// warning that says how to install it, never with `go run`.
func TestDoctorCodeChecks(t *testing.T) {
	cfg := config.Default()
	cfg.Code.Servers = map[string][]string{"go": {"/nonexistent/gopls"}, "rust": {"/nonexistent/rust-analyzer"}}
	checks := codeChecks(cfg)
	if len(checks) != 5 {
		t.Fatalf("%d checks: %+v", len(checks), checks)
	}
	for _, c := range checks {
		if !c.optional {
			t.Errorf("%s: a missing language server must be a warning", c.name)
		}
		if strings.Contains(c.fix, "go run") {
			t.Errorf("%s: fix %q uses go run", c.name, c.fix)
		}
	}
	goCheck := checks[0]
	if goCheck.name != "lsp go" || goCheck.ok || !strings.Contains(goCheck.fix, "go install golang.org/x/tools/gopls@v0.23.0") {
		t.Errorf("go check = %+v", goCheck)
	}
}
