package clientconf

import (
	"strings"
	"testing"
)

// TestServers: every entry of each sample, in the file's order, decoded; Claude Code's local
// scope; a file the client cannot read is refused with the line.
func TestServers(t *testing.T) {
	for _, tc := range []struct {
		client, file string
		want         []string // names in order
	}{
		{"claude-desktop", `{"mcpServers": {"zeta": {"command": "z"}, "alpha": {"command": "a"}, "odd": 3}}`, []string{"zeta", "alpha", "odd"}},
		{"vscode", "// c\n{\n\t\"servers\": {\n\t\t\"b\": {\"type\": \"http\", \"url\": \"https://b.test\"}, // x\n\t\t\"a\": {\"command\": \"a\"},\n\t},\n}\n", []string{"b", "a"}},
		{"zed", `{"theme": "x"}`, nil},
		{"codex", "[mcp_servers.zeta]\ncommand = \"z\"\n[mcp_servers.alpha]\ncommand = \"a\"\n[mcp_servers.alpha.env]\nK = \"v\"\n", []string{"zeta", "alpha"}},
		{"codex", "", nil},
	} {
		c, err := Lookup(tc.client)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.Servers([]byte(tc.file), "f")
		if err != nil {
			t.Fatalf("%s: %v", tc.client, err)
		}
		var names []string
		for _, s := range got {
			names = append(names, s.Name)
		}
		if strings.Join(names, ",") != strings.Join(tc.want, ",") {
			t.Errorf("%s: names %v, want %v", tc.client, names, tc.want)
		}
		for _, s := range got {
			if s.Name == "odd" && s.Fields != nil || s.Name != "odd" && s.Fields["command"] == nil && s.Fields["url"] == nil {
				t.Errorf("%s: %s decoded as %v", tc.client, s.Name, s.Fields)
			}
		}
	}
	cc, _ := Lookup("claude-code")
	user := `{"mcpServers": {}, "projects": {"/p": {"mcpServers": {"local": {"command": "l"}}}}}`
	if got, err := cc.LocalServers([]byte(user), "/p", "f"); err != nil || len(got) != 1 || got[0].Name != "local" {
		t.Errorf("local scope: %v %v", got, err)
	}
	if got, err := cc.LocalServers([]byte(user), "/other", "f"); err != nil || got != nil {
		t.Errorf("another project: %v %v", got, err)
	}
	cd, _ := Lookup("claude-desktop")
	if _, err := cd.Servers([]byte("{\n  // no comments here\n  \"mcpServers\": {}\n}"), "f"); err == nil || !strings.Contains(err.Error(), "f: line 2: a comment") {
		t.Errorf("comment in strict JSON: %v", err)
	}
}
