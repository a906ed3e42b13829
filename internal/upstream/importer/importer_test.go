package importer

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/internal/clientconf"
	"github.com/switchboard-hub/switchboard/internal/upstream"
)

// importHome writes every client's file, shaped like the real ones, into a temporary HOME.
func importHome(t *testing.T) clientconf.Env {
	t.Helper()
	home := t.TempDir()
	env := clientconf.Env{Home: home, ConfigHome: filepath.Join(home, ".config"), Project: filepath.Join(home, "src", "app"),
		Getenv: func(string) string { return "" }, LookPath: func(string) (string, error) { return "", os.ErrNotExist }}
	files := map[string]string{
		// Claude Desktop: strict JSON
		".config/Claude/claude_desktop_config.json": `{
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/me/Desktop"]
    },
    "GitHub": {
      "command": "docker",
      "args": ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"],
      "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_abcdefghijklmnopqrstuvwxyz0123456789"}
    },
    "switchboard": {"command": "/usr/bin/switchboard", "args": ["connect"]},
    "old-relay": {"command": "/opt/sb/switchboard", "args": ["connect", "--socket", "/run/x.sock"]},
    "puppeteer": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-puppeteer"], "disabled": true}
  },
  "globalShortcut": "Ctrl+Space"
}
`,
		// Claude Code: user servers, and local ones for the project in the same file
		".claude.json": `{
  "numStartups": 3,
  "mcpServers": {
    "github-remote": {"type": "http", "url": "https://api.githubcopilot.com/mcp/", "headers": {"Authorization": "Bearer ${GITHUB_PAT}"}}
  },
  "projects": {
    "` + filepath.Join(home, "src", "app") + `": {
      "mcpServers": {
        "sentry": {"type": "sse", "url": "https://mcp.sentry.dev/sse"},
        "memory": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"], "env": {}}
      }
    },
    "/elsewhere": {"mcpServers": {"other-project": {"command": "other"}}}
  }
}
`,
		"src/app/.mcp.json": `{
  "mcpServers": {
    "Local Tools": {"command": "./bin/tools", "args": ["--root", "${CLAUDE_PROJECT_DIR}"], "env": {"API_BASE": "${API_BASE:-http://localhost:8080}"}}
  }
}
`,
		// Cursor: the same filesystem server as Claude Desktop
		".cursor/mcp.json": `{
  "mcpServers": {
    "filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/me/Desktop"]},
    "everything": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"], "env": {"EVERYTHING_KEY": "${env:EVERYTHING_KEY}"}}
  }
}
`,
		// VS Code: JSONC, "servers", type, inputs
		".config/Code/User/mcp.json": `// my servers
{
	"inputs": [{"type": "promptString", "id": "perplexity-key", "description": "Perplexity API key", "password": true}],
	"servers": {
		"perplexity": {
			"type": "stdio",
			"command": "npx",
			"args": ["-y", "server-perplexity-ask"],
			"env": {"PERPLEXITY_API_KEY": "${input:perplexity-key}"}, // asked at start
		},
		"sock": {"type": "ws", "url": "ws://localhost:9000"},
		"docs": {"type": "http", "url": "https://docs.example.test/mcp", "gallery": true},
	},
}
`,
		// Windsurf: serverUrl
		".codeium/windsurf/mcp_config.json": `{"mcpServers": {"linear": {"serverUrl": "https://mcp.linear.app/sse", "disabledTools": ["delete_issue"]}}}`,
		// Zed: context_servers, old {path,args,env} command, an extension's entry, a remote one
		".config/zed/settings.json": `// Zed settings
{
  "ui_font_size": 16,
  "context_servers": {
    "git": {"source": "custom", "command": {"path": "uvx", "args": ["mcp-server-git"], "env": {}}},
    "mcp-server-postgres": {"source": "extension", "settings": {"database_url": "postgres://localhost/db"}},
    "remote-zed": {"url": "https://zed.example.test/mcp", "headers": {"X-Api-Key": "0123456789abcdefghijklmnopqrstuvwxyzABCD"}, "enabled": false},
  },
}
`,
		// Gemini CLI: httpUrl (Streamable HTTP), url (SSE), $VAR in env, its own keys
		".gemini/settings.json": `{
  // comments allowed
  "mcpServers": {
    "stripe": {"httpUrl": "https://mcp.stripe.com", "headers": {"Authorization": "Bearer $STRIPE_KEY"}, "timeout": 30000},
    "events": {"url": "http://localhost:8081/events"},
    "pythonTools": {"command": "python", "args": ["-m", "my_mcp_server"], "cwd": "./mcp-servers/python", "trust": true, "env": {"DB": "$DATABASE_URL"}}
  }
}
`,
		// Codex: TOML
		".codex/config.toml": `model = "gpt-5"

[mcp_servers.docs]
command = "npx"
args = ["-y", "mcp-docs"]
env = { "DOCS_API_KEY" = "sk-live-abcdefghijklmnop" }
startup_timeout_sec = 20

[mcp_servers.remote-docs]
url = "https://docs.example.test/mcp"
bearer_token_env_var = "DOCS_TOKEN"
http_headers = { "X-Team" = "core" }

[mcp_servers.off]
command = "off-server"
enabled = false

[mcp_servers.switchboard]
command = "/usr/local/bin/switchboard"
args = ["connect", "--socket", "/run/user/1000/switchboard/mcp.sock"]
`,
	}
	for name, text := range files {
		p := filepath.Join(home, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return env
}

func TestImport(t *testing.T) {
	env := importHome(t)
	found, err := Import(env, true)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Found{}
	var names []string
	for _, f := range found {
		byName[f.Spec.Name] = f
		names = append(names, f.Spec.Name)
	}
	wantNames := []string{"filesystem", "github", "puppeteer", "github-remote", "sentry", "memory-mcp", "local-tools",
		"everything", "perplexity", "sock", "docs", "linear", "git-mcp", "mcp-server-postgres", "remote-zed",
		"stripe", "events", "pythontools", "docs-2", "off"}
	if !reflect.DeepEqual(names, wantNames) {
		t.Fatalf("names:\n got %q\nwant %q", names, wantNames)
	}
	project := env.Project
	for _, tc := range []struct {
		name          string
		client, scope string
		spec          upstream.Spec
		notes         []string // substrings of Note
		also          int
	}{
		{name: "filesystem", client: "claude-desktop", scope: "user", also: 1,
			spec: upstream.Spec{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/home/me/Desktop"}}},
		{name: "github", client: "claude-desktop", scope: "user",
			spec:  upstream.Spec{Command: "docker", Args: []string{"run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"}, Env: map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_abcdefghijklmnopqrstuvwxyz0123456789"}},
			notes: []string{"named github (GitHub:", "env GITHUB_PERSONAL_ACCESS_TOKEN holds a literal secret", "${secret:github-personal-access-token}"}},
		{name: "puppeteer", client: "claude-desktop", scope: "user",
			spec: upstream.Spec{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-puppeteer"}, Enabled: ptrFalse()}},
		{name: "github-remote", client: "claude-code", scope: "user",
			spec: upstream.Spec{URL: "https://api.githubcopilot.com/mcp/", Headers: map[string]string{"Authorization": "Bearer ${GITHUB_PAT}"}}},
		{name: "sentry", client: "claude-code", scope: "local", spec: upstream.Spec{URL: "https://mcp.sentry.dev/sse", Transport: "sse"}},
		{name: "memory-mcp", client: "claude-code", scope: "local", also: 0,
			spec:  upstream.Spec{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-memory"}, Env: map[string]string{}, Cwd: project},
			notes: []string{`"memory" is one of the hub's own toolsets`}},
		{name: "local-tools", client: "claude-code", scope: "project",
			spec:  upstream.Spec{Command: "./bin/tools", Args: []string{"--root", project}, Env: map[string]string{"API_BASE": "${API_BASE}"}, Cwd: project},
			notes: []string{"the default of ${API_BASE:-http://localhost:8080} was dropped"}},
		{name: "everything", client: "cursor", scope: "user",
			spec: upstream.Spec{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-everything"}, Env: map[string]string{"EVERYTHING_KEY": "${EVERYTHING_KEY}"}}},
		{name: "perplexity", client: "vscode", scope: "user",
			spec:  upstream.Spec{Command: "npx", Args: []string{"-y", "server-perplexity-ask"}, Env: map[string]string{"PERPLEXITY_API_KEY": "${secret:perplexity-key}"}},
			notes: []string{`asks for input "perplexity-key"`, "store the value in the keyring as perplexity-key"}},
		{name: "sock", client: "vscode", scope: "user", spec: upstream.Spec{URL: "ws://localhost:9000", Transport: "ws"},
			notes: []string{`transport "ws" is not one the hub speaks`}},
		// the same URL in Codex, with headers: one server, with Codex's headers
		{name: "docs", client: "vscode", scope: "user", also: 1,
			spec:  upstream.Spec{URL: "https://docs.example.test/mcp", Headers: map[string]string{"Authorization": "Bearer ${DOCS_TOKEN}", "X-Team": "core"}},
			notes: []string{"headers Authorization, X-Team from codex"}},
		{name: "linear", client: "windsurf", scope: "user", spec: upstream.Spec{URL: "https://mcp.linear.app/sse", Transport: "sse"},
			notes: []string{"transport sse guessed from the URL", "not imported: disabledTools"}},
		{name: "git-mcp", client: "zed", scope: "user", spec: upstream.Spec{Command: "uvx", Args: []string{"mcp-server-git"}, Env: map[string]string{}},
			notes: []string{`"git" is one of the hub's own toolsets`}},
		{name: "mcp-server-postgres", client: "zed", scope: "user", spec: upstream.Spec{Transport: "unknown"},
			notes: []string{"provided by a Zed extension"}},
		{name: "remote-zed", client: "zed", scope: "user",
			spec:  upstream.Spec{URL: "https://zed.example.test/mcp", Headers: map[string]string{"X-Api-Key": "0123456789abcdefghijklmnopqrstuvwxyzABCD"}, Enabled: ptrFalse()},
			notes: []string{"headers X-Api-Key holds a literal secret"}},
		{name: "stripe", client: "gemini-cli", scope: "user",
			spec:  upstream.Spec{URL: "https://mcp.stripe.com", Headers: map[string]string{"Authorization": "Bearer ${STRIPE_KEY}"}},
			notes: []string{"not imported: timeout"}},
		{name: "events", client: "gemini-cli", scope: "user", spec: upstream.Spec{URL: "http://localhost:8081/events", Transport: "sse"}},
		{name: "pythontools", client: "gemini-cli", scope: "user",
			spec:  upstream.Spec{Command: "python", Args: []string{"-m", "my_mcp_server"}, Cwd: "./mcp-servers/python", Env: map[string]string{"DB": "${DATABASE_URL}"}},
			notes: []string{`cwd "./mcp-servers/python" is relative`, "not imported: trust", "named pythontools (pythonTools:"}},
		{name: "docs-2", client: "codex", scope: "user",
			spec:  upstream.Spec{Command: "npx", Args: []string{"-y", "mcp-docs"}, Env: map[string]string{"DOCS_API_KEY": "sk-live-abcdefghijklmnop"}},
			notes: []string{"another imported server has that name", "env DOCS_API_KEY holds a literal secret", "not imported: startup_timeout_sec"}},
		{name: "off", client: "codex", scope: "user", spec: upstream.Spec{Command: "off-server", Enabled: ptrFalse()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, ok := byName[tc.name]
			if !ok {
				t.Fatal("not found")
			}
			tc.spec.Name = tc.name
			if !reflect.DeepEqual(f.Spec, tc.spec) {
				t.Errorf("spec:\n got %#v\nwant %#v", f.Spec, tc.spec)
			}
			if f.Client != tc.client || f.Scope != tc.scope || f.Path == "" || f.Original == "" {
				t.Errorf("from %s %s %s %q, want %s %s", f.Client, f.Scope, f.Path, f.Original, tc.client, tc.scope)
			}
			for _, n := range tc.notes {
				if !strings.Contains(f.Note, n) {
					t.Errorf("note %q lacks %q", f.Note, n)
				}
			}
			if len(tc.notes) == 0 && f.Note != "" {
				t.Errorf("unexpected note %q", f.Note)
			}
			if len(f.Also) != tc.also {
				t.Errorf("also = %+v, want %d", f.Also, tc.also)
			}
		})
	}
	if a := byName["filesystem"].Also; len(a) == 1 && (a[0].Client != "cursor" || a[0].Original != "filesystem") {
		t.Errorf("filesystem also = %+v", a)
	}
}

// TestImportUnreadableFile: a file that does not parse is an error naming it and its line, and the
// other files are still imported.
func TestImportUnreadableFile(t *testing.T) {
	env := importHome(t)
	bad := filepath.Join(env.Home, ".cursor", "mcp.json")
	os.WriteFile(bad, []byte("{\n  \"mcpServers\": {,\n}\n"), 0o600)
	found, err := Import(env, true)
	if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("err = %v", err)
	}
	if len(found) < 10 {
		t.Errorf("only %d found", len(found))
	}
	empty := clientconf.Env{Home: t.TempDir(), Project: t.TempDir()}
	empty.ConfigHome = filepath.Join(empty.Home, ".config")
	if found, err := Import(empty, true); err != nil || len(found) != 0 {
		t.Errorf("no clients: %v, %v", found, err)
	}
}

func TestSanitizeName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"GitHub!", "github"},
		{"@modelcontextprotocol/server-memory", "modelcontextprotocol-server-memo"},
		{"  my__server  ", "my-server"},
		{"Ünïcode Tools", "n-code-tools"},
		{"!!!", "server"},
		{strings.Repeat("abc-", 10), "abc-abc-abc-abc-abc-abc-abc-abc"},
		{"a-very-long-server-name-that-goes-on-and-on", "a-very-long-server-name-that-goe"},
	} {
		got := SanitizeName(tc.in)
		if got != tc.want {
			t.Errorf("SanitizeName(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if err := (upstream.Spec{Name: got, Command: "x"}).Validate(nil); err != nil {
			t.Errorf("%q: %v", got, err)
		}
	}
	if got := withSuffix(strings.Repeat("a", 32), "-2"); got != strings.Repeat("a", 30)+"-2" {
		t.Errorf("withSuffix = %q", got)
	}
}

func TestLooksSecret(t *testing.T) {
	for _, tc := range []struct {
		key, val string
		want     bool
	}{
		{"GITHUB_TOKEN", "ghp_abcdefghijklmnopqrstuv", true},
		{"API_KEY", "hunter22", true},
		{"Authorization", "Bearer abcdef123456", true},
		{"Authorization", "Bearer ${TOKEN}", false},
		{"TOKEN_FILE", "/home/me/.token", false},
		{"AUTH_URL", "https://auth.example.test", false},
		{"DEBUG", "1", false},
		{"ROOT", "/home/me/src", false},
		{"X", "sk-abcdefghijklmnopqrstuvwxyz", true},
		{"X", "d41d8cd98f00b204e9800998ecf8427e0123", true},
		{"MODEL", "claude-sonnet-4-5", false},
	} {
		if got := LooksSecret(tc.key, tc.val); got != tc.want {
			t.Errorf("LooksSecret(%q, %q) = %v", tc.key, tc.val, got)
		}
	}
}

func TestMergeImports(t *testing.T) {
	existing := []upstream.Spec{
		{Name: "github", Command: "docker", Args: []string{"run", "ghcr.io/github/github-mcp-server"}},
		{Name: "fs", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/home/me"}, Env: map[string]string{"A": "${secret:a}"}},
		{Name: "remote", URL: "https://example.test/mcp"},
	}
	found := []Found{
		{Spec: upstream.Spec{Name: "github", URL: "https://api.githubcopilot.com/mcp/"}, Client: "vscode", Original: "github"},
		{Spec: upstream.Spec{Name: "filesystem", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/home/me"}, Env: map[string]string{"A": "literal"}}, Client: "cursor", Original: "filesystem"},
		{Spec: upstream.Spec{Name: "remote-2", URL: "https://example.test/mcp", Transport: "sse"}, Client: "zed", Original: "remote"},
		{Spec: upstream.Spec{Name: "sock", URL: "ws://localhost:9000", Transport: "ws"}, Client: "vscode", Original: "sock"},
		{Spec: upstream.Spec{Name: "everything", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-everything"}}, Client: "cursor", Original: "everything"},
		{Spec: upstream.Spec{Name: "stripe", URL: "https://mcp.stripe.com"}, Client: "gemini-cli", Original: "stripe"},
	}
	add, skipped := MergeImports(existing, found)
	var names []string
	for _, s := range add {
		names = append(names, s.Name)
	}
	if strings.Join(names, ",") != "everything,stripe" {
		t.Errorf("add = %v", names)
	}
	for i, want := range []string{
		"github (github in vscode): a server named github is configured already",
		"filesystem (filesystem in cursor): configured already as fs (same command)",
		"remote-2 (remote in zed): configured already as remote (same URL)",
		`sock (sock in vscode): cannot be imported as it is: servers: "sock": transport: "ws" is not a transport`,
	} {
		if i >= len(skipped) || !strings.HasPrefix(skipped[i], want) {
			t.Errorf("skipped[%d] = %q, want %q", i, at(skipped, i), want)
		}
	}
	if len(skipped) != 4 {
		t.Errorf("skipped = %q", skipped)
	}
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return ""
}

// TestImportLeavesProjectFilesOut: without project, a repository's own files (.mcp.json,
// .vscode/mcp.json, ...) are not read: a cloned repository cannot slip a command in.
func TestImportLeavesProjectFilesOut(t *testing.T) {
	env := importHome(t)
	all, err := Import(env, true)
	if err != nil {
		t.Fatal(err)
	}
	user, err := Import(env, false)
	if err != nil {
		t.Fatal(err)
	}
	var project int
	for _, f := range all {
		if f.Scope == string(clientconf.ScopeProject) {
			project++
		}
	}
	if project == 0 || len(user) >= len(all) {
		t.Fatalf("fixture has %d project entries; %d found with, %d without", project, len(all), len(user))
	}
	for _, f := range user {
		if f.Scope == string(clientconf.ScopeProject) {
			t.Errorf("project entry %s read without project", f.Spec.Name)
		}
	}
	if files := ProjectFiles(env); len(files) == 0 {
		t.Fatal("ProjectFiles found none")
	}
}
