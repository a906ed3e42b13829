package clientconf

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/tailscale/hujson"
)

// Real-world shaped samples: other servers, comments where the client reads them, trailing
// commas where it allows them, unusual indentation.
var samples = []struct {
	client, name, file string
	// exact: disconnect restores the file byte for byte (otherwise wantAfterDisconnect).
	wantAfterDisconnect string
}{
	{client: "claude-desktop", name: "other servers, 2 spaces", file: `{
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/me/Desktop"]
    }
  },
  "globalShortcut": "Ctrl+Space"
}
`},
	{client: "claude-desktop", name: "no servers yet", file: `{"globalShortcut": ""}`,
		wantAfterDisconnect: `{"globalShortcut": "", "mcpServers": {}}`},
	{client: "claude-desktop", name: "empty file", file: ``,
		wantAfterDisconnect: "{\n  \"mcpServers\": {}\n}\n"},
	{client: "claude-code", name: "the CLI's own file, 2 spaces", file: `{
  "numStartups": 12,
  "installMethod": "native",
  "projects": {
    "/home/me/src/app": {
      "allowedTools": [],
      "mcpServers": {}
    }
  },
  "mcpServers": {
    "github": {
      "type": "http",
      "url": "https://api.githubcopilot.com/mcp/"
    }
  },
  "userID": "abc"
}
`},
	{client: "cursor", name: "4 spaces, empty servers", file: `{
    "mcpServers": {
    }
}
`, wantAfterDisconnect: `{
    "mcpServers": {}
}
`},
	{client: "vscode", name: "JSONC: comments and trailing commas", file: `// VS Code user MCP servers
{
	"servers": {
		// GitHub's remote server
		"github": {
			"type": "http",
			"url": "https://api.githubcopilot.com/mcp/",
		}, /* keep */
		"memory": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]},
	},
	"inputs": [],
}
`},
	{client: "vscode", name: "JSONC: comment on the last member, no trailing comma", file: `{
  "servers": {
    "fetch": { "command": "uvx", "args": ["mcp-server-fetch"] } // python
  }
}`},
	{client: "windsurf", name: "compact one-liner", file: `{"mcpServers":{"git":{"command":"uvx","args":["mcp-server-git"]}}}`},
	{client: "zed", name: "settings.json with comments", file: `// Zed settings
//
// For information on how to configure Zed, see the Zed
// documentation: https://zed.dev/docs/configuring-zed
{
  "ui_font_size": 16,
  "buffer_font_size": 15,
  "theme": {
    "mode": "system",
    "light": "One Light",
    "dark": "One Dark",
  },
  "context_servers": {
    "postgres": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-postgres", "postgres://localhost/db"],
      "env": {},
    },
  },
}
`},
	{client: "zed", name: "no context_servers, trailing comma", file: `{
  "vim_mode": true, // modal
  "ui_font_size": 16,
}
`, wantAfterDisconnect: `{
  "vim_mode": true, // modal
  "ui_font_size": 16,
  "context_servers": {},
}
`},
	{client: "gemini-cli", name: "comments, other servers", file: `{
  // Gemini CLI strips comments
  "theme": "GitHub",
  "mcpServers": {
    "pythonTools": {
      "command": "python",
      "args": ["-m", "my_mcp_server", "--port", "8080"],
      "cwd": "./mcp-servers/python",
      "timeout": 15000
    }
  },
  "security": {"auth": {"selectedType": "oauth-personal"}}
}
`},
	{client: "codex", name: "model, providers, another server", file: `# Codex configuration
model = "gpt-5.5"
approval_policy = "on-request"

[model_providers.local]
name = "local"
base_url = "http://localhost:11434/v1"

[mcp_servers.docs]
command = "npx"
args = ["-y", "mcp-docs"]
env = { "API_KEY" = "x" } # inline

# trailing comment about profiles
[profiles.fast]
model = "gpt-5.5-mini"
`},
	// Cline writes its file with JSON.stringify(settings, null, 2): marketplace servers keyed by
	// their repository URL, its own disabled/autoApprove/timeout keys, and the nested transport
	// form its SDK writes for remote servers.
	{client: "cline", name: "the extension's own file", file: `{
  "mcpServers": {
    "github.com/modelcontextprotocol/servers/tree/main/src/brave-search": {
      "command": "npx",
      "args": [
        "-y",
        "@modelcontextprotocol/server-brave-search"
      ],
      "env": {
        "BRAVE_API_KEY": "BSA-xxxx"
      },
      "disabled": false,
      "autoApprove": []
    },
    "linear": {
      "transport": {
        "type": "streamableHttp",
        "url": "https://mcp.linear.app/mcp"
      },
      "disabled": false,
      "timeout": 60
    }
  }
}`},
	{client: "cline", name: "freshly created, no servers", file: "{\n  \"mcpServers\": {}\n}",
		wantAfterDisconnect: "{\n  \"mcpServers\": {}\n}"},
	// Continue: Switchboard's own block file in ~/.continue/mcpServers; a user may have added a
	// comment or a server of their own to it (comment-json keeps both).
	{client: "continue", name: "our block file, edited by the user", file: `{
  // Switchboard's entry goes here; Continue also reads my other servers from this folder
  "mcpServers": {
    "sqlite": {
      "command": "uvx",
      "args": ["mcp-server-sqlite", "--db-path", "/home/me/test.db"]
    }
  }
}
`},
	{client: "continue", name: "empty file", file: ``,
		wantAfterDisconnect: "{\n  \"mcpServers\": {}\n}\n"},
	// Junie: the IDE's MCP settings page writes ~/.junie/mcp/mcp.json; JetBrains' own proxy
	// to the IDE is a common first entry.
	{client: "junie", name: "the IDE proxy configured", file: `{
  "mcpServers": {
    "jetbrains": {
      "command": "npx",
      "args": ["-y", "@jetbrains/mcp-proxy"],
      "env": {
        "IDE_PORT": "63342"
      }
    }
  }
}
`},
	{client: "codex", name: "no trailing newline", file: `model = "o3"`,
		wantAfterDisconnect: "model = \"o3\"\n"},
	{client: "codex", name: "empty", file: ``},
}

func testEnv(t *testing.T) Env {
	home := t.TempDir()
	return Env{Home: home, ConfigHome: filepath.Join(home, ".config"), Project: filepath.Join(home, "project"),
		Getenv: func(string) string { return "" }, LookPath: func(string) (string, error) { return "", os.ErrNotExist }}
}

func testEntry(t *testing.T) Entry {
	exe := filepath.Join(t.TempDir(), "switchboard")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return Entry{Command: exe, Args: []string{"connect"}}
}

// decoded is the file as the client reads it.
func decoded(t *testing.T, c Client, data []byte) map[string]any {
	t.Helper()
	m := map[string]any{}
	if strings.TrimSpace(string(data)) == "" {
		return m
	}
	if c.format == formatTOML {
		if _, err := toml.Decode(string(data), &m); err != nil {
			t.Fatalf("result does not parse as TOML: %v\n%s", err, data)
		}
		return m
	}
	if _, err := parseJSON(data, c.dialect, "result"); err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	std, err := hujson.Standardize(append([]byte{}, data...))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(std, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func servers(c Client, m map[string]any) map[string]any {
	key := c.container
	if c.format == formatTOML {
		key = "mcp_servers"
	}
	s, _ := m[key].(map[string]any)
	return s
}

func TestConnectDisconnectRoundTrip(t *testing.T) {
	for _, s := range samples {
		t.Run(s.client+"/"+s.name, func(t *testing.T) {
			c, err := Lookup(s.client)
			if err != nil {
				t.Fatal(err)
			}
			env, e := testEnv(t), testEntry(t)
			path, _ := c.Path(env, ScopeUser)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(s.file), 0o640); err != nil {
				t.Fatal(err)
			}
			if st := c.Check(env, ScopeUser, e); st.State != NotSetUp {
				t.Fatalf("before: state %q (%s), want %q", st.State, st.Detail, NotSetUp)
			}
			before := decoded(t, c, []byte(s.file))

			ch, err := c.Plan(env, ScopeUser, &e)
			if err != nil {
				t.Fatal(err)
			}
			if ch.Empty() || !strings.Contains(ch.Diff(), "+") {
				t.Fatalf("connect plans no change; diff:\n%s", ch.Diff())
			}
			backup, err := ch.Apply(time.Now())
			if err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(path)
			t.Logf("connected:\n%s", got)
			if b, err := os.ReadFile(backup); err != nil || string(b) != s.file {
				t.Errorf("backup %s = %q, %v; want the original", backup, b, err)
			}
			if st, _ := os.Stat(path); st.Mode().Perm() != 0o640 {
				t.Errorf("mode %v, want 0640 kept", st.Mode().Perm())
			}
			after := decoded(t, c, got)
			entry, _ := servers(c, after)[ServerName].(map[string]any)
			if entry["command"] != e.Command || len(entry["args"].([]any)) != 1 || entry["args"].([]any)[0] != "connect" {
				t.Errorf("entry %v, want command %s args [connect]", entry, e.Command)
			}
			if c.typ != "" && entry["type"] != c.typ {
				t.Errorf("entry type %v, want %s", entry["type"], c.typ)
			}
			delete(servers(c, after), ServerName)
			if len(servers(c, after)) == 0 && servers(c, before) == nil {
				delete(after, c.container)
				delete(after, "mcp_servers")
			}
			if !jsonEqual(before, after) {
				t.Errorf("other settings changed:\nbefore %v\nafter  %v", before, after)
			}
			// Every line of the original outside the entry is still there, in order.
			if !keepsLines(s.file, string(got)) {
				t.Errorf("the original's lines are not all kept in order")
			}
			if st := c.Check(env, ScopeUser, e); st.State != Connected {
				t.Errorf("after connect: state %q (%s)", st.State, st.Detail)
			}

			again, err := c.Plan(env, ScopeUser, &e)
			if err != nil || !again.Empty() {
				t.Errorf("connect again: err %v, diff:\n%s", err, again.Diff())
			}

			other := Entry{Command: "/opt/elsewhere/switchboard", Args: []string{"connect", "--socket", "/tmp/x.sock"}}
			if st := c.Check(env, ScopeUser, other); st.State != Different || !strings.Contains(st.Detail, e.Command) {
				t.Errorf("checked against another hub: state %q (%s), want %q", st.State, st.Detail, Different)
			}

			ch, err = c.Plan(env, ScopeUser, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ch.Apply(time.Now()); err != nil {
				t.Fatal(err)
			}
			got, _ = os.ReadFile(path)
			want := s.file
			if s.wantAfterDisconnect != "" {
				want = s.wantAfterDisconnect
			}
			if string(got) != want {
				t.Errorf("after disconnect:\n%s\nwant:\n%s", got, want)
			}
			if st := c.Check(env, ScopeUser, e); st.State != NotSetUp {
				t.Errorf("after disconnect: state %q", st.State)
			}
		})
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// keepsLines reports whether every byte of orig is still in got, in order: connect only
// inserts (the entry, a comma, a line break), it never changes or drops what was there.
func keepsLines(orig, got string) bool {
	j := 0
	for i := 0; i < len(orig); i++ {
		for j < len(got) && got[j] != orig[i] {
			j++
		}
		if j == len(got) {
			return false
		}
		j++
	}
	return true
}

func TestRefusesFilesTheClientCannotRead(t *testing.T) {
	cases := []struct{ client, file, want string }{
		{"claude-desktop", "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"},\n  }\n}\n", "line 3: a trailing comma"},
		{"claude-desktop", "{\n  // note\n  \"mcpServers\": {}\n}\n", "line 2: a comment"},
		{"claude-code", "{\n  \"mcpServers\": {\n    \"a\" {}\n  }\n}\n", "line 3, column"},
		{"gemini-cli", "{\n  \"mcpServers\": {},\n}\n", "line 2: a trailing comma"},
		{"vscode", "{\n  \"servers\": {\n    \"a\": {\"command\": }\n  }\n}\n", "line 3, column"},
		{"codex", "model = \"o3\"\n[mcp_servers.x\ncommand = \"y\"\n", "line 3"},
		{"zed", "[]", "not a JSON object"},
		{"cline", "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"}, // mine\n  }\n}\n", "line 3: a comment"},
		{"continue", "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"},\n  }\n}\n", "line 3: a trailing comma"},
		{"junie", "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"},\n  }\n}\n", "line 3: a trailing comma"},
	}
	for _, tc := range cases {
		t.Run(tc.client, func(t *testing.T) {
			c, _ := Lookup(tc.client)
			env, e := testEnv(t), testEntry(t)
			path, _ := c.Path(env, ScopeUser)
			os.MkdirAll(filepath.Dir(path), 0o755)
			os.WriteFile(path, []byte(tc.file), 0o600)
			_, err := c.Plan(env, ScopeUser, &e)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "run this again") {
				t.Fatalf("err %v, want one naming %q and the fix", err, tc.want)
			}
			if st := c.Check(env, ScopeUser, e); st.State != Unreadable {
				t.Errorf("state %q", st.State)
			}
			if b, _ := os.ReadFile(path); string(b) != tc.file {
				t.Error("file changed")
			}
			if m, _ := filepath.Glob(path + ".switchboard-backup-*"); len(m) != 0 {
				t.Errorf("backup written for a refused file: %v", m)
			}
		})
	}
}

func TestReplacesAnEntryThatPointsElsewhere(t *testing.T) {
	for _, tc := range []struct{ client, file string }{
		{"gemini-cli", "{\n  \"mcpServers\": {\n    \"switchboard\": {\"command\": \"/old/switchboard\", \"args\": [\"connect\"], \"trust\": true},\n    \"b\": {\"command\": \"b\"}\n  }\n}\n"},
		{"codex", "[mcp_servers.switchboard]\ncommand = \"/old/switchboard\"\nargs = [\"serve\", \"--stdio\"]\ndefault_tools_approval_mode = \"approve\"\n\n[mcp_servers.switchboard.env]\nA = \"1\"\n"},
	} {
		t.Run(tc.client, func(t *testing.T) {
			c, _ := Lookup(tc.client)
			env, e := testEnv(t), testEntry(t)
			path, _ := c.Path(env, ScopeUser)
			os.MkdirAll(filepath.Dir(path), 0o755)
			os.WriteFile(path, []byte(tc.file), 0o600)
			if st := c.Check(env, ScopeUser, e); st.State != Different || !strings.Contains(st.Detail, "/old/switchboard") {
				t.Fatalf("state %q (%s)", st.State, st.Detail)
			}
			ch, err := c.Plan(env, ScopeUser, &e)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ch.Apply(time.Now()); err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(path)
			t.Logf("%s", got)
			if st := c.Check(env, ScopeUser, e); st.State != Connected {
				t.Errorf("state %q (%s)", st.State, st.Detail)
			}
			if tc.client == "codex" && (!strings.Contains(string(got), "default_tools_approval_mode") || !strings.Contains(string(got), "A = \"1\"")) {
				t.Error("the table's other keys were lost")
			}
		})
	}
}

func TestCommandOnPathCountsAsConnected(t *testing.T) {
	e := testEntry(t)
	t.Setenv("PATH", filepath.Dir(e.Command))
	got := map[string]any{"command": "switchboard", "args": []any{"connect"}}
	if !entryMatches(got, e) {
		t.Error("a bare command name resolving to this binary should match")
	}
}

func TestInstalledAndPaths(t *testing.T) {
	env := testEnv(t)
	vars := map[string]string{"CODEX_HOME": filepath.Join(env.Home, "cx"), "CLAUDE_CONFIG_DIR": filepath.Join(env.Home, "cc")}
	env.Getenv = func(k string) string { return vars[k] }
	c, _ := Lookup("codex")
	if c.Installed(env) {
		t.Error("codex installed in an empty home")
	}
	os.MkdirAll(vars["CODEX_HOME"], 0o700)
	if !c.Installed(env) {
		t.Error("CODEX_HOME exists: installed")
	}
	if p, _ := c.Path(env, ScopeUser); p != filepath.Join(vars["CODEX_HOME"], "config.toml") {
		t.Error(p)
	}
	cc, _ := Lookup("claude-code")
	if p, _ := cc.Path(env, ScopeUser); p != filepath.Join(vars["CLAUDE_CONFIG_DIR"], ".claude.json") {
		t.Error(p)
	}
	if p, _ := cc.Path(env, ScopeProject); p != filepath.Join(env.Project, ".mcp.json") {
		t.Error(p)
	}
	z, _ := Lookup("zed")
	if p, _ := z.Path(env, ScopeUser); p != filepath.Join(env.ConfigHome, "zed", "settings.json") {
		t.Error(p)
	}
	if _, err := z.Path(env, ScopeProject); err == nil {
		t.Error("zed has no project scope here")
	}
	env.LookPath = func(n string) (string, error) {
		if n == "zeditor" {
			return "/usr/bin/zeditor", nil
		}
		return "", os.ErrNotExist
	}
	if !z.Installed(env) {
		t.Error("zeditor on PATH: installed")
	}
	if st := z.Check(env, ScopeUser, Entry{}); st.State != NotSetUp {
		t.Error(st.State)
	}
	w, _ := Lookup("windsurf")
	if st := w.Check(env, ScopeUser, Entry{}); st.State != NotInstalled {
		t.Error(st.State)
	}

	// Cline: ~/.cline/data/settings, moved by CLINE_DIR, CLINE_DATA_DIR, CLINE_MCP_SETTINGS_PATH
	// (most specific wins); the VS Code extension's globalStorage folder also counts as installed.
	cl, _ := Lookup("cline")
	for _, tc := range []struct {
		vars map[string]string
		want string
	}{
		{nil, filepath.Join(env.Home, ".cline", "data", "settings", "cline_mcp_settings.json")},
		{map[string]string{"CLINE_DIR": "/c"}, "/c/data/settings/cline_mcp_settings.json"},
		{map[string]string{"CLINE_DIR": "/c", "CLINE_DATA_DIR": "/d"}, "/d/settings/cline_mcp_settings.json"},
		{map[string]string{"CLINE_DATA_DIR": "/d", "CLINE_MCP_SETTINGS_PATH": "/m.json"}, "/m.json"},
	} {
		e := env
		e.Getenv = func(k string) string { return tc.vars[k] }
		if p, _ := cl.Path(e, ScopeUser); p != tc.want {
			t.Errorf("cline with %v: %s, want %s", tc.vars, p, tc.want)
		}
	}
	if cl.Installed(env) {
		t.Error("cline installed in an empty home")
	}
	os.MkdirAll(filepath.Join(env.ConfigHome, "Code", "User", "globalStorage", "saoudrizwan.claude-dev"), 0o700)
	if !cl.Installed(env) {
		t.Error("the extension's globalStorage exists: installed")
	}
	// Continue: Switchboard's own block file, user and project; CONTINUE_GLOBAL_DIR moves the first.
	co, _ := Lookup("continue")
	if p, _ := co.Path(env, ScopeUser); p != filepath.Join(env.Home, ".continue", "mcpServers", "switchboard.json") {
		t.Error(p)
	}
	if p, _ := co.Path(env, ScopeProject); p != filepath.Join(env.Project, ".continue", "mcpServers", "switchboard.json") {
		t.Error(p)
	}
	e := env
	e.Getenv = func(k string) string { return map[string]string{"CONTINUE_GLOBAL_DIR": "/g"}[k] }
	if p, _ := co.Path(e, ScopeUser); p != "/g/mcpServers/switchboard.json" {
		t.Error(p)
	}
	ju, _ := Lookup("junie")
	if p, _ := ju.Path(env, ScopeUser); p != filepath.Join(env.Home, ".junie", "mcp", "mcp.json") {
		t.Error(p)
	}
	if p, _ := ju.Path(env, ScopeProject); p != filepath.Join(env.Project, ".junie", "mcp", "mcp.json") {
		t.Error(p)
	}
}

func TestApplyKeepsSymlinkAndRefusesAConcurrentChange(t *testing.T) {
	c, _ := Lookup("cursor")
	env, e := testEnv(t), testEntry(t)
	path, _ := c.Path(env, ScopeUser)
	os.MkdirAll(filepath.Dir(path), 0o755)
	real := filepath.Join(env.Home, "dotfiles-mcp.json")
	os.WriteFile(real, []byte("{}\n"), 0o644)
	os.Symlink(real, path)
	ch, err := c.Plan(env, ScopeUser, &e)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(real, []byte("{\"mcpServers\": {}}\n"), 0o644)
	if _, err := ch.Apply(time.Now()); err == nil || !strings.Contains(err.Error(), "changed while") {
		t.Fatalf("err %v", err)
	}
	ch, _ = c.Plan(env, ScopeUser, &e)
	if _, err := ch.Apply(time.Now()); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(path); fi.Mode()&os.ModeSymlink == 0 {
		t.Error("symlink replaced by a file")
	}
	if b, _ := os.ReadFile(real); !strings.Contains(string(b), ServerName) {
		t.Errorf("target not written: %s", b)
	}
}

// backupsIn lists the switchboard backups anywhere under dir.
func backupsIn(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".switchboard-backup-") {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// TestProjectScopeStaysInsideTheProject: a repository decides what its .vscode/mcp.json or
// .cursor is. A symlink out of the project (to the user's ~/.claude.json, to ~/.ssh, dangling)
// is refused by Check, Plan and Apply, and the outside file is neither changed nor copied into
// the repository; a symlink that stays inside the project is followed as before.
func TestProjectScopeStaysInsideTheProject(t *testing.T) {
	env, e := testEnv(t), testEntry(t)
	env.ProjectBackups = filepath.Join(env.Home, "data", "client-backups")
	secret := filepath.Join(env.Home, ".claude.json")
	secretText := "{\"mcpServers\": {}, \"oauthAccount\": {\"token\": \"s3cret\"}}\n"
	if err := os.WriteFile(secret, []byte(secretText), 0o600); err != nil {
		t.Fatal(err)
	}
	ssh := filepath.Join(env.Home, ".ssh")
	if err := os.MkdirAll(ssh, 0o700); err != nil {
		t.Fatal(err)
	}
	vscode, _ := Lookup("vscode")
	cursor, _ := Lookup("cursor")
	refused := func(t *testing.T, c Client, link string) {
		t.Helper()
		if st := c.Check(env, ScopeProject, e); st.State != Unreadable || !strings.Contains(st.Detail, link) || strings.Contains(st.Detail, "s3cret") {
			t.Errorf("check: %s %q", st.State, st.Detail)
		}
		ch, err := c.Plan(env, ScopeProject, &e)
		if err == nil || !strings.Contains(err.Error(), link) || !strings.Contains(err.Error(), "outside the project") && !strings.Contains(err.Error(), "cannot be resolved") {
			t.Fatalf("plan: %v", err)
		}
		if strings.Contains(string(ch.Old), "s3cret") {
			t.Error("plan read the file outside the project")
		}
		if b, _ := os.ReadFile(secret); string(b) != secretText {
			t.Errorf("the file outside the project changed:\n%s", b)
		}
		if got, _ := os.ReadDir(ssh); len(got) != 0 {
			t.Errorf("written into ~/.ssh: %v", got)
		}
		if b := backupsIn(t, env.Project); len(b) != 0 {
			t.Errorf("backups in the project: %v", b)
		}
	}

	t.Run("symlinked file", func(t *testing.T) {
		link := filepath.Join(env.Project, ".vscode", "mcp.json")
		os.MkdirAll(filepath.Dir(link), 0o755)
		if err := os.Symlink(secret, link); err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(filepath.Dir(link))
		refused(t, vscode, link)
	})
	t.Run("relative symlink climbing out", func(t *testing.T) {
		link := filepath.Join(env.Project, ".vscode", "mcp.json")
		os.MkdirAll(filepath.Dir(link), 0o755)
		if err := os.Symlink("../../.claude.json", link); err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(filepath.Dir(link))
		refused(t, vscode, link)
	})
	t.Run("symlinked directory", func(t *testing.T) {
		link := filepath.Join(env.Project, ".cursor")
		os.MkdirAll(env.Project, 0o755)
		if err := os.Symlink(ssh, link); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(link)
		refused(t, cursor, link)
	})
	t.Run("dangling symlink", func(t *testing.T) {
		link := filepath.Join(env.Project, ".vscode", "mcp.json")
		os.MkdirAll(filepath.Dir(link), 0o755)
		if err := os.Symlink(filepath.Join(env.Home, "nowhere", "mcp.json"), link); err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(filepath.Dir(link))
		refused(t, vscode, link)
		if _, err := os.Stat(filepath.Join(env.Home, "nowhere")); err == nil {
			t.Error("created the link's target outside the project")
		}
	})
	t.Run("link appears after the preview", func(t *testing.T) {
		ch, err := cursor.Plan(env, ScopeProject, &e)
		if err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(env.Project, ".cursor")
		if err := os.Symlink(ssh, link); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(link)
		if _, err := ch.Apply(time.Now()); err == nil || !strings.Contains(err.Error(), "outside the project") {
			t.Fatalf("apply: %v", err)
		}
		if got, _ := os.ReadDir(ssh); len(got) != 0 {
			t.Errorf("written into ~/.ssh: %v", got)
		}
	})
	t.Run("symlink inside the project is followed", func(t *testing.T) {
		shared := filepath.Join(env.Project, "config", "mcp.json")
		os.MkdirAll(filepath.Dir(shared), 0o755)
		os.WriteFile(shared, []byte("{}\n"), 0o644)
		link := filepath.Join(env.Project, ".vscode", "mcp.json")
		os.MkdirAll(filepath.Dir(link), 0o755)
		if err := os.Symlink("../config/mcp.json", link); err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(filepath.Dir(link))
		ch, err := vscode.Plan(env, ScopeProject, &e)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ch.Apply(time.Now()); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(shared); !strings.Contains(string(b), ServerName) {
			t.Errorf("target not written: %s", b)
		}
	})
}

// TestProjectScopeBackupOutsideTheProject: the previous version of a project file is kept in
// Env.ProjectBackups, named after the file's path, and never beside the file; with no backup
// directory there is no backup at all. A user-scope file's backup stays beside it.
func TestProjectScopeBackupOutsideTheProject(t *testing.T) {
	env, e := testEnv(t), testEntry(t)
	env.ProjectBackups = filepath.Join(env.Home, "data", "client-backups")
	c, _ := Lookup("claude-code")
	path, _ := c.Path(env, ScopeProject)
	orig := "{\"mcpServers\": {}}\n"
	os.MkdirAll(env.Project, 0o755)
	os.WriteFile(path, []byte(orig), 0o644)
	ch, err := c.Plan(env, ScopeProject, &e)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	backup, err := ch.Apply(now)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(backup) != env.ProjectBackups || !strings.Contains(filepath.Base(backup), "project%.mcp.json.switchboard-backup-") {
		t.Errorf("backup at %s", backup)
	}
	if b, err := os.ReadFile(backup); err != nil || string(b) != orig {
		t.Errorf("backup: %v %q", err, b)
	}
	if fi, err := os.Stat(env.ProjectBackups); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("backup dir: %v %v", err, fi)
	}
	if b := backupsIn(t, env.Project); len(b) != 0 {
		t.Errorf("backups in the project: %v", b)
	}
	// A second change in the same second gets a name of its own.
	ch, _ = c.Plan(env, ScopeProject, nil)
	second, err := ch.Apply(now)
	if err != nil || second == backup || second == "" {
		t.Errorf("second backup %q (first %q): %v", second, backup, err)
	}

	env.ProjectBackups = ""
	ch, _ = c.Plan(env, ScopeProject, &e)
	if b, err := ch.Apply(time.Now()); err != nil || b != "" {
		t.Errorf("no backup dir: backup %q, %v", b, err)
	}
	if b := backupsIn(t, env.Project); len(b) != 0 {
		t.Errorf("backups in the project: %v", b)
	}

	u, _ := Lookup("cursor")
	upath, _ := u.Path(env, ScopeUser)
	os.MkdirAll(filepath.Dir(upath), 0o755)
	os.WriteFile(upath, []byte("{}\n"), 0o644)
	ch, _ = u.Plan(env, ScopeUser, &e)
	if b, err := ch.Apply(time.Now()); err != nil || filepath.Dir(b) != filepath.Dir(upath) {
		t.Errorf("user-scope backup %q: %v", b, err)
	}
}

// TestToolsModeEntry: an entry whose relay asks for a tools mode of its own counts as connected
// to this hub, with that mode; connecting in another mode rewrites it.
func TestToolsModeEntry(t *testing.T) {
	for _, name := range []string{"claude-code", "codex"} {
		t.Run(name, func(t *testing.T) {
			c, err := Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			env, plain := testEnv(t), testEntry(t)
			path, _ := c.Path(env, ScopeUser)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			search := Entry{Command: plain.Command, Args: append(slices.Clone(plain.Args), ToolsModeArg, "search")}
			ch, err := c.Plan(env, ScopeUser, &search)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ch.Apply(time.Now()); err != nil {
				t.Fatal(err)
			}
			if st := c.Check(env, ScopeUser, plain); st.State != Connected || st.ToolsMode != "search" {
				t.Fatalf("check: %q mode %q (%s)", st.State, st.ToolsMode, st.Detail)
			}
			if ch, _ := c.Plan(env, ScopeUser, &search); !ch.Empty() {
				t.Fatalf("connecting again in the same mode changes the file:\n%s", ch.Diff())
			}
			if ch, _ := c.Plan(env, ScopeUser, &plain); ch.Empty() {
				t.Fatal("connecting in the hub's mode leaves the client's own mode")
			}
		})
	}
}
