package dashboard

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/app/apptest"
	"github.com/switchboard-hub/switchboard/internal/code"
	"github.com/switchboard-hub/switchboard/internal/testutil"
)

// TestSettingsCodeThroughDashboardAPI: Settings › Code intelligence saves [code] and the running
// pool uses it without a restart. A bad idle time, an unknown language and a program that does
// not exist are refused naming the key (the file stays byte for byte); a new gopls command is
// written to the file and used at gopls's next start (the running one keeps its process); a
// shorter idle time stops the running server at once; an edit of the file by hand is put in
// force too.
func TestSettingsCodeThroughDashboardAPI(t *testing.T) {
	gopls, err := code.Locate("go", nil, nil)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v (make lsp-deps installs the pinned test servers)", err)
		}
		t.Skipf("%v (make lsp-deps installs the pinned test servers)", err)
	}
	_, st, chk := settingsHub(t)
	ws := st.Service.WorkspaceDir()
	for name, body := range map[string]string{
		"go.mod":       "module example.com/settingscode\n\ngo 1.22\n",
		"util/util.go": "package util\n\n// Double doubles.\nfunc Double(x int) int { return x * 2 }\n",
		"main.go":      "package main\n\nimport \"example.com/settingscode/util\"\n\nfunc main() { println(util.Double(2)) }\n",
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(ws, name)), 0o755)
		if err := os.WriteFile(filepath.Join(ws, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Another name for gopls, in a directory of its own: the command the Settings view saves.
	other := filepath.Join(realTempDir(t), "gopls-settings")
	if err := os.Symlink(gopls[0], other); err != nil {
		t.Fatal(err)
	}

	chk.refused("/api/settings/code", map[string]any{"idle": "soon"}, `code.idle: "soon" is not a duration`)
	chk.refused("/api/settings/code", map[string]any{"idle": "500ms"}, `code.idle: 500ms is too short`)
	chk.refused("/api/settings/code", map[string]any{"idle": "-5m"}, `code.idle: "-5m" is negative`)
	chk.refused("/api/settings/code", map[string]any{"servers": map[string]any{"cobol": []string{"cobol-ls"}}}, "code.servers.cobol: not a language with a server")
	chk.refused("/api/settings/code", map[string]any{"servers": map[string]any{"go": []string{"/nonexistent/gopls"}}}, "code.servers.go:")
	// Hostile values: nothing of them reaches the file (each is refused as a whole).
	chk.refused("/api/settings/code", map[string]any{"idle": "10m\"\nread_only = true\n#"}, `code.idle:`)
	chk.refused("/api/settings/code", map[string]any{"servers": map[string]any{"go\"]\n[evil": []string{"/bin/true"}}}, "not a language with a server")
	chk.refused("/api/settings/code", map[string]any{"servers": map[string]any{"go": []string{"/bin/true\n[evil]"}}}, "code.servers.go: the program name holds a control character")
	chk.refused("/api/settings/code", map[string]any{"servers": map[string]any{"go": []string{"../../bin/true"}}}, `code.servers.go: "../../bin/true" is a relative path`)

	cs := apptest.InMemoryClient(t, st, "settings-code")
	definition := func() {
		t.Helper()
		res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "code_definition", Arguments: map[string]any{"symbol": "util.Double"}})
		if err != nil || res.IsError {
			t.Fatalf("code_definition: %v %v", err, res)
		}
	}
	goCommand := func() []string { // the command line the running gopls was started with
		for _, s := range st.Code.Status() {
			if s.Language == "go" && s.PID != 0 {
				return strings.Fields(s.Command)
			}
		}
		return nil
	}
	definition()
	if c := goCommand(); len(c) == 0 || c[0] != gopls[0] {
		t.Fatalf("gopls started as %q, want %s", c, gopls[0])
	}

	// The Save bar's review: the diff the save would write, nothing written, nothing applied.
	before := chk.read()
	code_, review := chk.do("POST", "/api/settings/preview", map[string]any{"code": map[string]any{"idle": "1s", "servers": map[string]any{"go": []string{other}}}})
	if secs, _ := review["sections"].([]any); code_ != 200 || len(secs) != 1 || !strings.Contains(fmt.Sprint(secs[0]), `+idle = "1s"`) {
		t.Fatalf("preview: %d %v", code_, review)
	}
	if chk.read() != before {
		t.Fatal("the preview wrote the file")
	}
	if idle, cmds := st.Code.Config(); idle != code.DefaultIdle || len(cmds) != 0 {
		t.Fatalf("the preview changed the pool: idle %s, commands %v", idle, cmds)
	}

	out := chk.saved("/api/settings/code", map[string]any{"idle": "10m", "servers": map[string]any{"go": []string{other}, "python": []string{}}})
	if out["applies"] != "now" || !strings.Contains(fmt.Sprint(out["note"]), "next start") {
		t.Errorf("saved: applies %v, note %v", out["applies"], out["note"])
	}
	if f := chk.read(); !strings.Contains(f, "[code]\nidle = \"10m\"\n") || !strings.Contains(f, "[code.servers]\ngo = [\""+other+"\"]\n") || !strings.HasPrefix(f, "# my switchboard\n") {
		t.Fatalf("[code] not saved as expected:\n%s", f)
	}
	// The running gopls keeps its process: the command is for the next start.
	definition()
	if c := goCommand(); len(c) == 0 || c[0] != gopls[0] {
		t.Fatalf("the running gopls was replaced by %q", c)
	}
	// A shorter idle time applies to the running server: it is stopped.
	chk.saved("/api/settings/code", map[string]any{"idle": "1s", "servers": map[string]any{"go": []string{other}}})
	testutil.Eventually(t, "the idle gopls stopped", func() bool { return len(st.Code.Status()) == 0 })
	definition()
	if c := goCommand(); len(c) == 0 || c[0] != other {
		t.Fatalf("gopls started again as %q, want the saved %s", c, other)
	}

	s, err := app.NewController(st, "test").Settings()
	if err != nil {
		t.Fatal(err)
	}
	var goSetting app.CodeServerSetting
	for _, sv := range s.Code.Servers {
		if sv.Language == "go" {
			goSetting = sv
		}
	}
	if s.Code.Idle != "1s" || s.Code.IdleRunning != "1s" || s.Code.IdleDefault != code.DefaultIdle.String() ||
		strings.Join(goSetting.Command, " ") != other || goSetting.Found != other || goSetting.Default != "gopls" {
		t.Errorf("code settings: %+v, go %+v", s.Code, goSetting)
	}

	// By hand: the file is the source of truth, as for the other sections.
	f := strings.Replace(chk.read(), `idle = "1s"`, `idle = "0s"`, 1)
	if err := os.WriteFile(chk.path, []byte(f), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := st.ReloadConfig(); err != nil {
		t.Fatal(err)
	}
	if idle, _ := st.Code.Config(); idle >= 0 {
		t.Errorf("after a hand edit to idle = \"0s\" the pool's idle is %s, want never", idle)
	}
	definition()
	time.Sleep(1500 * time.Millisecond) // past the old idle time: the server stays
	if goCommand() == nil {
		t.Error("gopls was stopped although idle is now never")
	}
}
