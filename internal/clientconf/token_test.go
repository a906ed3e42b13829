package clientconf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTokenInTheEntry: connect writes the client's token in the entry's env beside the user's
// own variables (JSON and Codex's TOML, an inline env merged), a reconnect replaces only the
// token, the file becomes 0600, the diff never shows a token, and a Codex env kept as a table of
// its own is refused with the fix rather than rewritten.
func TestTokenInTheEntry(t *testing.T) {
	tok := func(c byte) string { return "sbc_" + strings.Repeat(string(c), 64) }
	for _, tc := range []struct{ client, file, rel string }{
		{"cursor", "{\n  \"mcpServers\": {\n    \"switchboard\": {\"command\": \"old\", \"args\": [], \"env\": {\"MY_VAR\": \"mine\"}}\n  }\n}\n", ".cursor/mcp.json"},
		{"codex", "model = \"o3\"\n\n[mcp_servers.switchboard]\ncommand = \"old\"\nargs = []\nenv = { MY_VAR = \"mine\" }\n", ".codex/config.toml"},
	} {
		t.Run(tc.client, func(t *testing.T) {
			env := testEnv(t)
			c, err := Lookup(tc.client)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(env.Home, tc.rel)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(tc.file), 0o644); err != nil {
				t.Fatal(err)
			}
			e := testEntry(t)
			for i, token := range []string{tok('a'), tok('b')} {
				e.Env = map[string]string{TokenEnv: token}
				ch, err := c.Plan(env, ScopeUser, &e)
				if err != nil {
					t.Fatal(err)
				}
				if d := ch.Diff(); strings.Contains(d, token) || strings.Contains(d, tok('a')) || !strings.Contains(d, "sbc_…(hidden)") {
					t.Errorf("connect %d: the diff shows a token, or hides none:\n%s", i, d)
				}
				if _, err := ch.Apply(time.Now()); err != nil {
					t.Fatal(err)
				}
				data, _ := os.ReadFile(path)
				srv, _ := servers(c, decoded(t, c, data))["switchboard"].(map[string]any)
				got, _ := srv["env"].(map[string]any)
				if got[TokenEnv] != token || got["MY_VAR"] != "mine" || len(got) != 2 {
					t.Errorf("connect %d: env %v, want the token beside MY_VAR\n%s", i, got, data)
				}
				if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
					t.Errorf("connect %d: %s is %v with a token in it, want 0600", i, path, fi.Mode().Perm())
				}
				st := c.Check(env, ScopeUser, e)
				if st.State != Connected || !st.HasToken {
					t.Errorf("connect %d: %+v", i, st)
				}
			}
			// The same token again: nothing to write.
			if ch, err := c.Plan(env, ScopeUser, &e); err != nil || !ch.Empty() {
				t.Errorf("the same token again: %v, empty %v", err, ch.Empty())
			}
		})
	}

	t.Run("codex env table", func(t *testing.T) {
		env := testEnv(t)
		c, _ := Lookup("codex")
		path := filepath.Join(env.Home, ".codex", "config.toml")
		os.MkdirAll(filepath.Dir(path), 0o700)
		orig := "[mcp_servers.switchboard]\ncommand = \"old\"\nargs = []\n\n[mcp_servers.switchboard.env]\nMY_VAR = \"mine\"\n"
		os.WriteFile(path, []byte(orig), 0o600)
		e := testEntry(t)
		e.Env = map[string]string{TokenEnv: tok('c')}
		if _, err := c.Plan(env, ScopeUser, &e); err == nil || !strings.Contains(err.Error(), "add "+TokenEnv+" to it by hand") {
			t.Errorf("an env table of its own: %v", err)
		}
		if b, _ := os.ReadFile(path); string(b) != orig {
			t.Error("the file changed")
		}
	})
}
