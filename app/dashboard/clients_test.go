package dashboard

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/app/apptest"
)

// TestClientsThroughDashboardAPI drives the Clients view's API in a temporary HOME holding
// real-looking client files (other servers, comments): GET /api/clients lists every client with
// its state; POST /api/clients/{name} with dryRun previews the diff and writes nothing; without
// dryRun it writes the CLI's relay entry with a backup, and the list shows "connected to this
// hub"; disconnect removes it again. A file the client could not read is refused with a 400 that
// names the line; bad requests name the field. Writes are audited as the dashboard's.
func TestClientsThroughDashboardAPI(t *testing.T) {
	home := realTempDir(t)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	t.Setenv("CODEX_HOME", "")
	write := func(rel, text string) string {
		t.Helper()
		p := filepath.Join(home, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cursorOrig := `{
  "mcpServers": {
    "github": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": { "GITHUB_TOKEN": "ghp_example" }
    }
  }
}
`
	cursor := write(".cursor/mcp.json", cursorOrig)
	geminiOrig := `{
  // theme picked in /settings
  "theme": "GitHub",
  "mcpServers": {
    "fs": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/srv"] } // read-only share
  }
}
`
	gemini := write(".gemini/settings.json", geminiOrig)
	// Windsurf reads strict JSON: a comment there is a file it cannot read (clientconf names the
	// comment's line).
	windsurfOrig := "{\n  // my servers\n  \"mcpServers\": {}\n}\n"
	windsurf := write(".codeium/windsurf/mcp_config.json", windsurfOrig)

	st := apptest.Stack(t, "")
	srv := httptest.NewServer(NewServer(app.NewController(st, "test"), "dash-token").Handler())
	defer srv.Close()
	do := func(method, route string, body any) (int, map[string]any) {
		t.Helper()
		return apptest.DashAPI(t, srv.URL, "dash-token", method, route, body)
	}
	list := func() app.ClientList {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/api/clients", nil)
		req.Header.Set("Authorization", "Bearer dash-token")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var l app.ClientList
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET /api/clients: %d", res.StatusCode)
		}
		if err := json.NewDecoder(res.Body).Decode(&l); err != nil {
			t.Fatal(err)
		}
		return l
	}
	scopeOf := func(l app.ClientList, name, scope string) (app.ClientInfo, app.ClientScope) {
		t.Helper()
		for _, c := range l.Clients {
			if c.Name != name {
				continue
			}
			for _, s := range c.Scopes {
				if s.Scope == scope {
					return c, s
				}
			}
		}
		t.Fatalf("no %s %s in %+v", name, scope, l)
		return app.ClientInfo{}, app.ClientScope{}
	}
	read := func(p string) string {
		t.Helper()
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	exe, _ := os.Executable()
	if p, err := filepath.EvalSymlinks(exe); err == nil {
		exe = p
	}

	// The list: all eleven clients, in the CLI's order, project scope for the hub's workspace.
	l := list()
	var names []string
	for _, c := range l.Clients {
		names = append(names, c.Name)
	}
	if got := strings.Join(names, ","); got != "claude-desktop,claude-code,cursor,vscode,windsurf,zed,gemini-cli,codex,cline,continue,junie" {
		t.Errorf("clients: %s", got)
	}
	if l.Project != st.Service.Workspace().Dir() {
		t.Errorf("project %q, want the hub's workspace %q", l.Project, st.Service.Workspace().Dir())
	}
	if c, s := scopeOf(l, "cursor", "user"); !c.Installed || s.Path != cursor || !s.Exists || s.State != "not set up" || c.Display != "Cursor" || c.Format != "JSON" {
		t.Errorf("cursor: %+v %+v", c, s)
	}
	if _, s := scopeOf(l, "cursor", "project"); s.Path != filepath.Join(l.Project, ".cursor", "mcp.json") || s.Exists || s.State != "not set up" {
		t.Errorf("cursor project: %+v", s)
	}
	if _, s := scopeOf(l, "windsurf", "user"); s.State != "cannot read the config" || !strings.Contains(s.Detail, "line 2: a comment") {
		t.Errorf("windsurf: %+v", s)
	}
	if c, _ := scopeOf(l, "zed", "user"); len(c.Scopes) != 1 {
		t.Errorf("zed has user scope only: %+v", c.Scopes)
	}

	// Preview: the diff the CLI prints, nothing written.
	code, out := do(http.MethodPost, "/api/clients/cursor", map[string]any{"scope": "user", "action": "connect", "dryRun": true})
	diff, _ := out["diff"].(string)
	if code != http.StatusOK || out["changed"] != true || out["applied"] != false || out["path"] != cursor ||
		!strings.Contains(diff, "+    \"switchboard\": {") || !strings.Contains(diff, exe) || !strings.Contains(diff, st.Config.Unix.Path) || !strings.HasPrefix(diff, "--- "+cursor) {
		t.Fatalf("preview: %d %v", code, out)
	}
	if read(cursor) != cursorOrig {
		t.Fatal("a preview wrote the file")
	}

	// Connect: written with a backup of the original; the other server stays.
	code, out = do(http.MethodPost, "/api/clients/cursor", map[string]any{"scope": "user", "action": "connect"})
	backup, _ := out["backup"].(string)
	if code != http.StatusOK || out["applied"] != true || out["state"] != "connected to this hub" || backup == "" || !strings.Contains(out["message"].(string), backup) {
		t.Fatalf("connect: %d %v", code, out)
	}
	if read(backup) != cursorOrig {
		t.Errorf("backup %s does not hold the original", backup)
	}
	now := read(cursor)
	if !strings.Contains(now, "server-github") || !strings.Contains(now, `"GITHUB_TOKEN": "ghp_example"`) || !strings.Contains(now, exe) {
		t.Errorf("after connect:\n%s", now)
	}
	if _, s := scopeOf(list(), "cursor", "user"); s.State != "connected to this hub" || !s.HasToken {
		t.Errorf("list after connect: %+v", s)
	}
	// The entry carries cursor's own token (Settings › Client tokens lists it), never shown in a
	// diff: connecting again would replace it, which the preview shows without either token.
	token := regexp.MustCompile(`sbc_[0-9a-f]{64}`).FindString(now)
	if token == "" || strings.Contains(fmt.Sprint(out), token) {
		t.Errorf("connect: no token in the entry, or the token in the answer:\n%s", now)
	}
	if code, toks := do(http.MethodGet, "/api/settings/client-tokens", nil); code != http.StatusOK || !strings.Contains(fmt.Sprint(toks), "client:cursor") {
		t.Errorf("client tokens after connect: %d %v", code, toks)
	}
	code, out = do(http.MethodPost, "/api/clients/cursor", map[string]any{"scope": "user", "action": "connect", "dryRun": true})
	if diff, _ := out["diff"].(string); code != http.StatusOK || out["changed"] != true || strings.Contains(diff, token) || !strings.Contains(diff, "sbc_…(hidden)") {
		t.Errorf("preview when connected: %d %v", code, out)
	}

	// Gemini CLI (comments kept) and a project-scope file created in the hub's workspace.
	code, out = do(http.MethodPost, "/api/clients/gemini-cli", map[string]any{"action": "connect"})
	if code != http.StatusOK || out["state"] != "connected to this hub" || out["scope"] != "user" {
		t.Fatalf("connect gemini: %d %v", code, out)
	}
	if g := read(gemini); !strings.Contains(g, "// theme picked in /settings") || !strings.Contains(g, "// read-only share") {
		t.Errorf("gemini lost its comments:\n%s", g)
	}
	code, out = do(http.MethodPost, "/api/clients/gemini-cli", map[string]any{"scope": "project", "action": "connect"})
	proj := filepath.Join(l.Project, ".gemini", "settings.json")
	if code != http.StatusOK || out["path"] != proj || out["backup"] != nil || out["state"] != "connected to this hub" {
		t.Fatalf("connect gemini project: %d %v", code, out)
	}
	if strings.Contains(read(proj), "sbc_") {
		t.Errorf("a project-scope file (committed with the repository) got a client token:\n%s", read(proj))
	}
	if _, s := scopeOf(list(), "gemini-cli", "project"); !s.Exists || s.State != "connected to this hub" {
		t.Errorf("gemini project after connect: %+v", s)
	}

	// Disconnect: the preview removes the entry, the write restores the other server alone.
	code, out = do(http.MethodPost, "/api/clients/cursor", map[string]any{"scope": "user", "action": "disconnect", "dryRun": true})
	if diff, _ := out["diff"].(string); code != http.StatusOK || out["changed"] != true || !strings.Contains(diff, "-    \"switchboard\": {") {
		t.Fatalf("preview disconnect: %d %v", code, out)
	}
	code, out = do(http.MethodPost, "/api/clients/cursor", map[string]any{"scope": "user", "action": "disconnect"})
	if code != http.StatusOK || out["applied"] != true || out["state"] != "not set up" || out["backup"] == nil {
		t.Fatalf("disconnect: %d %v", code, out)
	}
	if read(cursor) != cursorOrig {
		t.Errorf("after disconnect:\n%s", read(cursor))
	}
	if code, toks := do(http.MethodGet, "/api/settings/client-tokens", nil); code != http.StatusOK || strings.Contains(fmt.Sprint(toks), "client:cursor") {
		t.Errorf("cursor's token outlived its entry: %d %v", code, toks)
	}

	// Refusals: the broken file (with its line and the fix), and bad requests naming the field.
	for _, tc := range []struct {
		name, route string
		body        any
		want        string
	}{
		{"broken file", "/api/clients/windsurf", map[string]any{"action": "connect", "dryRun": true}, windsurf + ": line 2: a comment, which this client's JSON parser does not accept; remove it"},
		{"broken file, apply", "/api/clients/windsurf", map[string]any{"action": "connect"}, "line 2: a comment"},
		{"unknown client", "/api/clients/nosuch", map[string]any{"action": "connect"}, `unknown client "nosuch"; one of: claude-desktop`},
		{"bad action", "/api/clients/cursor", map[string]any{"action": "remove"}, `action: "remove" is not an action`},
		{"no action", "/api/clients/cursor", map[string]any{"scope": "user", "dryRun": true}, `action: "" is not an action`},
		{"bad scope", "/api/clients/cursor", map[string]any{"scope": "global", "action": "connect"}, `scope: "global" is not a scope`},
		{"no project scope", "/api/clients/zed", map[string]any{"scope": "project", "action": "connect"}, "Zed has no project configuration (scopes: user)"},
		{"bad JSON", "/api/clients/cursor", "[", "body: invalid JSON"},
	} {
		code, out := do(http.MethodPost, tc.route, tc.body)
		if msg, _ := out["error"].(string); code != http.StatusBadRequest || !strings.Contains(msg, tc.want) {
			t.Errorf("%s: %d %v, want 400 with %q", tc.name, code, out, tc.want)
		}
	}
	if read(windsurf) != windsurfOrig {
		t.Error("the broken file was written")
	}

	// Audit: every write the hub attempted (requests refused before, such as a bad scope, leave no line), as the dashboard's, with the client and scope.
	if err := st.Audit.Flush(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(st.Config.LogDir(), "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ln := range strings.Split(string(b), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(ln), &m) != nil || m["actor"] != "dashboard" {
			continue
		}
		tool, _ := m["tool"].(string)
		if !strings.HasPrefix(tool, "client_") {
			continue
		}
		args, _ := m["args"].(string) // client="cursor" scope="user"
		args = strings.NewReplacer("client=", "", "scope=", "", `"`, "").Replace(args)
		got = append(got, tool+" "+args+" "+m["outcome"].(string))
	}
	want := []string{
		"client_connect cursor user started", "client_connect cursor user ok",
		"client_connect gemini-cli user started", "client_connect gemini-cli user ok",
		"client_connect gemini-cli project started", "client_connect gemini-cli project ok",
		"client_disconnect cursor user started", "client_disconnect cursor user ok",
		"client_connect windsurf user started", "client_connect windsurf user error",
		"client_connect zed project started", "client_connect zed project error",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("audit:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestClientsProjectScopeSymlinkThroughDashboardAPI: the Clients view's project scope is the
// hub's workspace, a repository the user opened. A .vscode/mcp.json there that links to the
// user's ~/.claude.json is listed as unreadable and refused (400 naming the link), the file
// stays as it was and no copy of it lands in the workspace; a real project file is written with
// its backup in the hub's data dir.
func TestClientsProjectScopeSymlinkThroughDashboardAPI(t *testing.T) {
	home := realTempDir(t)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	claude := filepath.Join(home, ".claude.json")
	orig := "{\"mcpServers\": {}, \"oauthAccount\": {\"accessToken\": \"s3cret\"}}\n"
	if err := os.WriteFile(claude, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	st := apptest.Stack(t, "")
	ws := st.Service.WorkspaceDir()
	link := filepath.Join(ws, ".vscode", "mcp.json")
	os.MkdirAll(filepath.Dir(link), 0o755)
	if err := os.Symlink(claude, link); err != nil {
		t.Fatal(err)
	}
	ctl := app.NewController(st, "test")
	srv := httptest.NewServer(NewServer(ctl, "dash-token").Handler())
	defer srv.Close()

	l, err := ctl.ListClients()
	if err != nil {
		t.Fatal(err)
	}
	for _, cl := range l.Clients {
		for _, s := range cl.Scopes {
			if cl.Name == "vscode" && s.Scope == "project" && (s.State != "cannot read the config" || !strings.Contains(s.Detail, "outside the project")) {
				t.Errorf("vscode project listed as %+v", s)
			}
		}
	}
	for _, dry := range []bool{true, false} {
		code, out := apptest.DashAPI(t, srv.URL, "dash-token", http.MethodPost, "/api/clients/vscode", map[string]any{"scope": "project", "action": "connect", "dryRun": dry})
		if msg, _ := out["error"].(string); code != http.StatusBadRequest || !strings.Contains(msg, link) || !strings.Contains(msg, "outside the project") {
			t.Errorf("dryRun %v: %d %v", dry, code, out)
		}
	}
	if b, _ := os.ReadFile(claude); string(b) != orig {
		t.Errorf("~/.claude.json changed:\n%s", b)
	}

	mcp := filepath.Join(ws, ".mcp.json")
	os.WriteFile(mcp, []byte("{}\n"), 0o644)
	code, out := apptest.DashAPI(t, srv.URL, "dash-token", http.MethodPost, "/api/clients/claude-code", map[string]any{"scope": "project", "action": "connect"})
	backup, _ := out["backup"].(string)
	if code != http.StatusOK || filepath.Dir(backup) != app.ClientBackupDir(st.Config) {
		t.Fatalf("connect claude-code project: %d %v", code, out)
	}
	if b, err := os.ReadFile(backup); err != nil || string(b) != "{}\n" {
		t.Errorf("backup: %v %q", err, b)
	}
	filepath.WalkDir(ws, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), "switchboard-backup") {
			t.Errorf("backup in the workspace: %s", p)
		}
		return nil
	})
}
