package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/internal/upstream"
)

func runServers(t *testing.T, config string, args ...string) (string, error) {
	t.Helper()
	root := NewRootCommand("test")
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(append([]string{"--config", config, "servers"}, args...))
	err := root.Execute()
	return out.String(), err
}

const serversTestConfig = `# my Switchboard settings
workspace = "~/src"

[policy]
default = "ask"        # ask before anything risky
# ask_timeout = "60s"

[[ml.backends]]
name = "gpu"
kind = "ollama"
url = "http://gpu-box:11434"
`

// TestServersVerbs: add (local and remote), disable, enable and remove on a config with
// comments and other sections; the file comes back byte for byte.
func TestServersVerbs(t *testing.T) {
	config := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(config, []byte(serversTestConfig), 0o640); err != nil {
		t.Fatal(err)
	}
	out, err := runServers(t, config, "add", "everything", "--command", "npx", "--arg", "-y", "--arg", "@modelcontextprotocol/server-everything",
		"--env", "API_KEY=${secret:api-key}", "--on-demand", "--dry-run")
	if err != nil || !strings.Contains(out, "+[[servers]]") || !strings.Contains(out, "nothing written") {
		t.Fatalf("dry run: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(config); string(b) != serversTestConfig {
		t.Fatal("--dry-run wrote the file")
	}
	out, err = runServers(t, config, "add", "everything", "--command", "npx", "--arg", "-y", "--arg", "@modelcontextprotocol/server-everything",
		"--env", "API_KEY=${secret:api-key}", "--on-demand")
	if err != nil || !strings.Contains(out, "+args = [\"-y\", \"@modelcontextprotocol/server-everything\"]") ||
		!strings.Contains(out, "Wrote "+config) || !strings.Contains(out, "not approved") || !strings.Contains(out, "servers approve everything") {
		t.Fatalf("add: %v\n%s", err, out)
	}
	out, err = runServers(t, config, "add", "remote", "--url", "https://example.test/mcp", "--header", "Authorization=Bearer ${REMOTE_TOKEN}", "--transport", "sse")
	if err != nil {
		t.Fatalf("add remote: %v\n%s", err, out)
	}
	b, _ := os.ReadFile(config)
	specs, err := upstream.ReadSpecs(b)
	if err != nil || len(specs) != 2 || specs[0].Env["API_KEY"] != "${secret:api-key}" || specs[0].StartMode() != upstream.StartOnDemand ||
		specs[1].Headers["Authorization"] != "Bearer ${REMOTE_TOKEN}" || specs[1].Kind() != upstream.TransportSSE {
		t.Fatalf("written (%v):\n%s", err, b)
	}
	if !strings.HasPrefix(string(b), serversTestConfig) {
		t.Errorf("the rest of the file changed:\n%s", b)
	}
	if st, _ := os.Stat(config); st.Mode().Perm() != 0o640 {
		t.Errorf("mode = %v", st.Mode())
	}

	if out, err = runServers(t, config, "disable", "everything"); err != nil || !strings.Contains(out, "+enabled = false") {
		t.Fatalf("disable: %v\n%s", err, out)
	}
	if out, err = runServers(t, config, "disable", "everything"); err != nil || !strings.Contains(out, "disabled already") {
		t.Fatalf("disable again: %v\n%s", err, out)
	}
	if out, err = runServers(t, config, "enable", "everything"); err != nil || !strings.Contains(out, "-enabled = false") {
		t.Fatalf("enable: %v\n%s", err, out)
	}
	if out, err = runServers(t, config, "remove", "everything"); err != nil || !strings.Contains(out, "-[[servers]]") || !strings.Contains(out, "Removed everything") {
		t.Fatalf("remove: %v\n%s", err, out)
	}
	if _, err = runServers(t, config, "remove", "remote"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(config); string(b) != serversTestConfig {
		t.Errorf("after add+remove:\n%s\nwant:\n%s", b, serversTestConfig)
	}
	if _, err = runServers(t, config, "remove", "remote"); err == nil || !strings.Contains(err.Error(), `no server named "remote"`) || !strings.Contains(err.Error(), config) {
		t.Errorf("remove again: %v", err)
	}

	// a config that does not exist yet is created, mode 0600
	fresh := filepath.Join(t.TempDir(), "sub", "config.toml")
	if out, err = runServers(t, fresh, "add", "a", "--command", "a-server"); err != nil || !strings.Contains(out, "--- /dev/null") {
		t.Fatalf("new file: %v\n%s", err, out)
	}
	if st, err := os.Stat(fresh); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("new file: %v %v", st, err)
	}
}

// TestServersAddErrors: bad input is refused with the flag at fault and the fix, and the file
// is left alone.
func TestServersAddErrors(t *testing.T) {
	config := filepath.Join(t.TempDir(), "config.toml")
	orig := serversTestConfig + "\n[[servers]]\nname = \"taken\"\ncommand = \"x\"\n"
	if err := os.WriteFile(config, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"invalid name", []string{"GitHub!", "--command", "x"}, []string{`NAME "GitHub!"`, "lower-case letters", `e.g. "github"`}},
		{"a toolset's name", []string{"git", "--command", "x"}, []string{`NAME "git"`, "toolsets", `e.g. "git-mcp"`}},
		{"both --command and --url", []string{"a", "--command", "x", "--url", "https://a.test/mcp"}, []string{"--command and --url: give one"}},
		{"neither", []string{"a"}, []string{"give --command CMD", "or --url URL"}},
		{"--env without =", []string{"a", "--command", "x", "--env", "API_KEY"}, []string{`--env "API_KEY": write KEY=VALUE`, "e.g. --env API_KEY="}},
		{"--header without =", []string{"a", "--url", "https://a.test/mcp", "--header", "Authorization: Bearer x"}, []string{`--header "Authorization: Bearer x": write KEY=VALUE`}},
		{"--env for a remote server", []string{"a", "--url", "https://a.test/mcp", "--env", "A=b"}, []string{"--arg, --env and --cwd are for a local server"}},
		{"--header for a local server", []string{"a", "--command", "x", "--header", "A=b"}, []string{"--header and --transport are for a remote server"}},
		{"unknown transport", []string{"a", "--url", "https://a.test/mcp", "--transport", "ws"}, []string{`--transport "ws"`, "http", "sse"}},
		{"bad url", []string{"a", "--url", "ftp://a.test/"}, []string{"--url:", "is not an http(s) URL"}},
		{"bad reference", []string{"a", "--command", "x", "--env", "A=${secret:}"}, []string{"--env:", "${secret:github-token}"}},
		{"name taken", []string{"taken", "--command", "y"}, []string{"already configured (line 13)", "choose another name"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := runServers(t, config, append([]string{"add"}, tc.args...)...)
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
	if b, _ := os.ReadFile(config); string(b) != orig {
		t.Errorf("the file changed:\n%s", b)
	}
	broken := filepath.Join(t.TempDir(), "broken.toml")
	os.WriteFile(broken, []byte("[policy]\ndefault = ask\n"), 0o600)
	if _, err := runServers(t, broken, "add", "a", "--command", "x"); err == nil || !strings.Contains(err.Error(), broken) || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("unparsable config: %v", err)
	}
}

// TestServersImport: servers from Claude Desktop, Cursor and Codex files in a temporary HOME are
// listed by --dry-run with their client and notes, then added (quarantined); a second run has
// nothing left to add.
func TestServersImport(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("PATH", "/nonexistent")
	t.Setenv("CODEX_HOME", "")
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	t.Chdir(t.TempDir())
	files := map[string]string{
		".config/Claude/claude_desktop_config.json": `{"mcpServers": {
  "filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/me"]},
  "GitHub": {"command": "github-mcp-server", "args": ["stdio"], "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_abcdefghijklmnopqrstuvwxyz0123456789"}},
  "switchboard": {"command": "/usr/bin/switchboard", "args": ["connect"]}
}}`,
		".cursor/mcp.json":   `{"mcpServers": {"filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/me"]}}}`,
		".codex/config.toml": "[mcp_servers.docs]\nurl = \"https://docs.example.test/mcp\"\nbearer_token_env_var = \"DOCS_TOKEN\"\nenabled = false\n",
	}
	for name, text := range files {
		p := filepath.Join(home, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	config := filepath.Join(t.TempDir(), "config.toml")
	orig := serversTestConfig + "\n[[servers]]\nname = \"fs\"\ncommand = \"npx\"\nargs = [\"-y\", \"@modelcontextprotocol/server-filesystem\", \"/home/me\"]\n"
	os.WriteFile(config, []byte(orig), 0o600)

	out, err := runServers(t, config, "import", "--dry-run")
	if err != nil {
		t.Fatalf("dry run: %v\n%s", err, out)
	}
	for _, want := range []string{
		"To add (2):",
		"  github: github-mcp-server stdio",
		`from claude-desktop (user) "GitHub"`,
		"note: env GITHUB_PERSONAL_ACCESS_TOKEN holds a literal secret",
		"  docs (disabled, as in the client): https://docs.example.test/mcp",
		`from codex (user) "docs"`,
		"Not imported (1):",
		"filesystem (filesystem in claude-desktop): configured already as fs (same command)",
		"nothing written",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "switchboard:") {
		t.Errorf("Switchboard's own entry listed:\n%s", out)
	}
	if b, _ := os.ReadFile(config); string(b) != orig {
		t.Fatal("--dry-run wrote the file")
	}
	// Without a terminal to ask about each command, import needs --yes; nothing is written.
	if out, err = runServers(t, config, "import"); err == nil || !strings.Contains(err.Error(), "--yes") {
		t.Fatalf("import without a terminal or --yes: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(config); string(b) != orig {
		t.Fatal("a refused import wrote the file")
	}
	out, err = runServers(t, config, "import", "--yes")
	if err != nil || !strings.Contains(out, "Imported 2 servers with their commands not approved") {
		t.Fatalf("import: %v\n%s", err, out)
	}
	b, _ := os.ReadFile(config)
	specs, err := upstream.ReadSpecs(b)
	if err != nil || len(specs) != 3 || specs[2].Name != "docs" || specs[2].IsEnabled() || specs[2].Headers["Authorization"] != "Bearer ${DOCS_TOKEN}" {
		t.Fatalf("after import (%v):\n%s", err, b)
	}
	if !strings.HasPrefix(string(b), orig) {
		t.Errorf("the rest of the file changed:\n%s", b)
	}
	if out, err = runServers(t, config, "import", "--yes"); err != nil || !strings.Contains(out, "Nothing to import") {
		t.Errorf("second import: %v\n%s", err, out)
	}
}

// TestServersVerbsKeepToolsetsInStep: the toolsets key names servers, so `servers add` names a
// new server in a key that lists toolsets one by one (its tools would be off otherwise) and
// `servers remove` takes it off (a stale name would stop the next start).
func TestServersVerbsKeepToolsetsInStep(t *testing.T) {
	config := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(config, []byte("toolsets = [\"files\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := runServers(t, config, "add", "github", "--command", "gh-mcp")
	if b, _ := os.ReadFile(config); err != nil || !strings.HasPrefix(string(b), "toolsets = [\"files\", \"github\"]\n") || !strings.Contains(out, `+toolsets = ["files", "github"]`) {
		t.Fatalf("add: %v\n%s\nfile:\n%s", err, out, b)
	}
	if _, err := runServers(t, config, "remove", "github"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(config); string(b) != "toolsets = [\"files\"]\n" {
		t.Errorf("after remove:\n%s", b)
	}
}

// servers add --url with the oauth flags writes the oauth table; a literal secret is refused with
// the fix.
func TestServersAddOAuth(t *testing.T) {
	config := filepath.Join(t.TempDir(), "config.toml")
	out, err := runServers(t, config, "add", "linear", "--url", "https://mcp.example.test/mcp", "--oauth-client-id", "sb",
		"--oauth-client-secret", "${secret:linear-client-secret}", "--oauth-scope", "read", "--oauth-scope", "write")
	if err != nil || !strings.Contains(out, `+oauth = { client_id = "sb", client_secret = "${secret:linear-client-secret}", scopes = ["read", "write"] }`) {
		t.Fatalf("add: %v\n%s", err, out)
	}
	out, err = runServers(t, config, "add", "other", "--url", "https://x.example.test/mcp", "--oauth-client-id", "sb", "--oauth-client-secret", "hunter2")
	if err == nil || !strings.Contains(err.Error(), "--oauth-client-id/--oauth-client-secret/--oauth-scope: client_secret: write a reference") {
		t.Fatalf("literal secret: %v\n%s", err, out)
	}
}

// servers add --tls-fingerprint pins another hub's certificate (tls_fingerprint); a malformed one,
// or one for plain http, is refused in terms of the flag.
func TestServersAddTLSFingerprint(t *testing.T) {
	config := filepath.Join(t.TempDir(), "config.toml")
	pin := "sha256:" + strings.Repeat("3F:", 31) + "3F"
	out, err := runServers(t, config, "add", "workstation", "--url", "https://workstation:9101/mcp", "--tls-fingerprint", pin)
	if err != nil || !strings.Contains(out, `+tls_fingerprint = "`+pin+`"`) {
		t.Fatalf("add: %v\n%s", err, out)
	}
	out, err = runServers(t, config, "add", "other", "--url", "https://other:9101/mcp", "--tls-fingerprint", "3F:3F")
	if err == nil || !strings.HasPrefix(err.Error(), "--tls-fingerprint: ") || !strings.Contains(err.Error(), `"sha256:"`) {
		t.Fatalf("malformed pin: %v\n%s", err, out)
	}
	out, err = runServers(t, config, "add", "plain", "--url", "http://other:9101/mcp", "--tls-fingerprint", pin)
	if err == nil || !strings.Contains(err.Error(), "https") {
		t.Fatalf("pin for http: %v\n%s", err, out)
	}
}
