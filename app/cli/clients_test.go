package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var clientToken = regexp.MustCompile(`sbc_[0-9a-f]{64}`)

// tokenIn is the client token in a client's config file, "" when there is none.
func tokenIn(text string) string { return clientToken.FindString(text) }

func runClients(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := NewRootCommand("test")
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(append([]string{"clients"}, args...))
	err := root.Execute()
	return out.String(), err
}

// TestClientsVerbs drives the cobra verbs in a temporary HOME: --dry-run writes nothing,
// connect (stdin is not a terminal here: no question) writes the entry with a backup, list
// reports it, disconnect restores the file.
func TestClientsVerbs(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("XDG_RUNTIME_DIR", filepath.Join(home, "run"))
	t.Setenv("PATH", "/nonexistent")
	orig := "{\n  // my settings\n  \"theme\": \"dark\",\n}\n"
	settings := filepath.Join(home, ".config", "zed", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(settings, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runClients(t, "list")
	if err != nil || !strings.Contains(out, "zed") || !strings.Contains(out, "not set up") || !strings.Contains(out, "not installed") {
		t.Fatalf("list: %v\n%s", err, out)
	}
	out, err = runClients(t, "connect", "zed", "--dry-run")
	if err != nil || !strings.Contains(out, `+  "context_servers": {`) || !strings.Contains(out, "nothing written") {
		t.Fatalf("dry run: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(settings); string(b) != orig {
		t.Fatal("--dry-run wrote the file")
	}
	if out, err = runClients(t, "connect", "zed"); err != nil || !strings.Contains(out, "switchboard-backup-") {
		t.Fatalf("connect: %v\n%s", err, out)
	}
	connectOut := out
	b, _ := os.ReadFile(settings)
	exe, _ := os.Executable()
	if p, err := filepath.EvalSymlinks(exe); err == nil {
		exe = p
	}
	if !strings.Contains(string(b), "// my settings") || !strings.Contains(string(b), exe) || strings.Contains(string(b), "--socket") {
		t.Errorf("written:\n%s", b)
	}
	if out, _ = runClients(t, "list"); !strings.Contains(out, "connected to this hub") {
		t.Errorf("list after connect:\n%s", out)
	}
	// The entry carries the client's own token, shown in no diff; connecting again replaces it.
	first := tokenIn(string(b))
	if first == "" || strings.Contains(connectOut, first) {
		t.Errorf("connect: token %q in the file, or printed:\n%s", first, out)
	}
	if out, _ = runClients(t, "connect", "zed"); strings.Contains(out, "already connected") || !strings.Contains(out, "sbc_…(hidden)") {
		t.Errorf("connect again:\n%s", out)
	}
	b, _ = os.ReadFile(settings)
	if second := tokenIn(string(b)); second == "" || second == first {
		t.Errorf("connect again kept the token %q (now %q)", first, second)
	}
	if out, _ = runClients(t, "list", "--socket", "/elsewhere.sock"); !strings.Contains(out, "set up differently") {
		t.Errorf("list for another socket:\n%s", out)
	}
	if _, err = runClients(t, "disconnect", "zed"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(settings); string(b) != strings.Replace(orig, "\n}", "\n  \"context_servers\": {},\n}", 1) {
		t.Errorf("after disconnect:\n%s", b)
	}
	if _, err = runClients(t, "connect", "nosuch"); err == nil || !strings.Contains(err.Error(), "one of: claude-desktop") {
		t.Errorf("unknown client: %v", err)
	}
	if _, err = runClients(t, "connect", "zed", "--scope", "project"); err == nil || !strings.Contains(err.Error(), "scopes: user") {
		t.Errorf("zed --scope project: %v", err)
	}
	wd := t.TempDir()
	t.Chdir(wd)
	if _, err = runClients(t, "connect", "claude-code", "--scope", "project"); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(wd, ".mcp.json")); err != nil || !strings.Contains(string(b), `"type": "stdio"`) {
		t.Errorf(".mcp.json: %v\n%s", err, b)
	}
}

// TestClientsProjectScopeRefusesSymlinksOut: `clients connect --scope project` in a repository
// whose .vscode/mcp.json links to the user's ~/.claude.json, or whose .cursor links to ~/.ssh,
// is refused naming the link; the user's files stay as they were and no backup (a copy of
// ~/.claude.json) is left in the repository. A plain project file's backup goes to the data dir.
func TestClientsProjectScopeRefusesSymlinksOut(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, "data"))
	t.Setenv("XDG_RUNTIME_DIR", filepath.Join(home, "run"))
	t.Setenv("PATH", "/nonexistent")
	claude := filepath.Join(home, ".claude.json")
	orig := "{\"mcpServers\": {}, \"oauthAccount\": {\"accessToken\": \"s3cret\"}}\n"
	if err := os.WriteFile(claude, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	ssh := filepath.Join(home, ".ssh")
	os.MkdirAll(ssh, 0o700)
	repo := filepath.Join(t.TempDir(), "repo")
	os.MkdirAll(filepath.Join(repo, ".vscode"), 0o755)
	if err := os.Symlink(claude, filepath.Join(repo, ".vscode", "mcp.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(ssh, filepath.Join(repo, ".cursor")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(repo)
	for _, c := range []struct{ client, link string }{
		{"vscode", filepath.Join(repo, ".vscode", "mcp.json")},
		{"cursor", filepath.Join(repo, ".cursor")},
	} {
		out, err := runClients(t, "connect", c.client, "--scope", "project", "--yes")
		if err == nil || !strings.Contains(err.Error(), c.link) || !strings.Contains(err.Error(), "outside the project") {
			t.Errorf("%s: %v\n%s", c.client, err, out)
		}
		if strings.Contains(out, "s3cret") {
			t.Errorf("%s: printed the outside file:\n%s", c.client, out)
		}
	}
	if b, _ := os.ReadFile(claude); string(b) != orig {
		t.Errorf("~/.claude.json changed:\n%s", b)
	}
	if got, _ := os.ReadDir(ssh); len(got) != 0 {
		t.Errorf("written into ~/.ssh: %v", got)
	}
	backups := func(dir string) (out []string) {
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && strings.Contains(d.Name(), "switchboard-backup") {
				out = append(out, p)
			}
			return nil
		})
		return out
	}
	if b := backups(repo); len(b) != 0 {
		t.Errorf("backups in the repository: %v", b)
	}
	if out, _ := runClients(t, "list"); !strings.Contains(out, "cannot read the config") {
		t.Errorf("list does not show the refusal:\n%s", out)
	}

	// A real project file: written, its backup in the data dir rather than the repository.
	mcp := filepath.Join(repo, ".mcp.json")
	os.WriteFile(mcp, []byte("{}\n"), 0o644)
	if out, err := runClients(t, "connect", "claude-code", "--scope", "project"); err != nil || !strings.Contains(out, filepath.Join(home, "data", "switchboard", "client-backups")) {
		t.Errorf("connect claude-code: %v\n%s", err, out)
	}
	if b := backups(repo); len(b) != 0 {
		t.Errorf("backups in the repository: %v", b)
	}
}

// TestClientsDisconnectAll: --all takes Switchboard's entry out of every client that has one
// (before an uninstall) and leaves the rest of each file, and clients without one, alone.
func TestClientsDisconnectAll(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("XDG_RUNTIME_DIR", filepath.Join(home, "run"))
	t.Setenv("PATH", "/nonexistent")
	zed := filepath.Join(home, ".config", "zed", "settings.json")
	cursor := filepath.Join(home, ".cursor", "mcp.json")
	for _, f := range []string{zed, cursor} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("{\n  \"theme\": \"dark\"\n}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []string{"zed", "cursor"} {
		if _, err := runClients(t, "connect", c); err != nil {
			t.Fatal(err)
		}
	}
	if out, _ := runClients(t, "list"); strings.Count(out, "connected to this hub") != 2 {
		t.Fatalf("list after connecting two:\n%s", out)
	}
	out, err := runClients(t, "disconnect", "--all")
	if err != nil || !strings.Contains(out, "Removed Switchboard from Zed") || !strings.Contains(out, "Removed Switchboard from Cursor") {
		t.Fatalf("disconnect --all: %v\n%s", err, out)
	}
	if out, _ := runClients(t, "list"); strings.Contains(out, "connected to this hub") {
		t.Fatalf("an entry is left:\n%s", out)
	}
	for _, f := range []string{zed, cursor} {
		if b, _ := os.ReadFile(f); !strings.Contains(string(b), `"theme": "dark"`) {
			t.Errorf("%s lost the rest of its settings:\n%s", f, b)
		}
	}
	if out, err := runClients(t, "disconnect", "--all"); err != nil || !strings.Contains(out, "nothing to change") {
		t.Fatalf("disconnect --all again: %v\n%s", err, out)
	}
	if _, err := runClients(t, "disconnect"); err == nil || !strings.Contains(err.Error(), "name the client") {
		t.Fatalf("disconnect without a name: %v", err)
	}
}
