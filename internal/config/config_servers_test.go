package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServers: [[servers]] entries load, and Load refuses invalid ones with the field and fix.
func TestServers(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, file, wantErr string
		wantNames           []string
	}{
		{name: "none", file: "read_only = true\n"},
		{name: "two servers", file: `[[servers]]
name = "everything"
command = "npx"
args = ["-y", "@modelcontextprotocol/server-everything"]
env = { API_KEY = "${secret:api-key}" }

[[servers]]
name = "remote"
url = "https://example.test/mcp"
transport = "sse"
enabled = false
`, wantNames: []string{"everything", "remote"}},
		{name: "a toolset's name", file: "[[servers]]\nname = \"git\"\ncommand = \"uvx\"\n", wantErr: `"git" is one of the hub's own toolsets`},
		{name: "same name twice", file: "[[servers]]\nname = \"a\"\ncommand = \"x\"\n[[servers]]\nname = \"a\"\ncommand = \"y\"\n", wantErr: "configured twice"},
		{name: "no command", file: "[[servers]]\nname = \"a\"\n", wantErr: "command: required"},
		{name: "unknown key", file: "[[servers]]\nname = \"a\"\ncommand = \"x\"\nargv = []\n", wantErr: "servers.argv"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".toml")
			if err := os.WriteFile(file, []byte(tc.file), 0o600); err != nil {
				t.Fatal(err)
			}
			c, err := Load(file)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), file) {
					t.Fatalf("err = %v, want it to name %s and contain %q", err, file, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, s := range c.Servers {
				names = append(names, s.Name)
			}
			if strings.Join(names, ",") != strings.Join(tc.wantNames, ",") {
				t.Errorf("servers = %v, want %v", names, tc.wantNames)
			}
		})
	}
}

func TestServerToolsMode(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ val, want string }{{`"search"`, ""}, {`"all"`, ""}, {`"some"`, `server_tools: "some" is not a mode`}} {
		p := filepath.Join(dir, "c.toml")
		if err := os.WriteFile(p, []byte("server_tools = "+tc.val+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Load(p)
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("server_tools = %s: %v, want %q", tc.val, err, tc.want)
		}
	}
}
