package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCodeConfig: [code] loads with its default idle time, and bad values are refused with the
// key and the fix.
func TestCodeConfig(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, file, wantErr string
		idle                time.Duration
		servers             int
	}{
		{name: "absent", file: "read_only = true\n", idle: 10 * time.Minute},
		{name: "set", file: "[code]\nidle = \"90s\"\n[code.servers]\ngo = [\"/opt/gopls\", \"serve\"]\npython = [\"basedpyright-langserver\", \"--stdio\"]\n", idle: 90 * time.Second, servers: 2},
		{name: "never", file: "[code]\nidle = \"0s\"\n", idle: -1},
		{name: "bad duration", file: "[code]\nidle = \"soon\"\n", wantErr: `"soon" is not a duration`},
		{name: "too short", file: "[code]\nidle = \"5ms\"\n", wantErr: "code.idle: 5ms is too short"},
		{name: "unknown language", file: "[code.servers]\ncobol = [\"cobol-ls\"]\n", wantErr: "code.servers.cobol: not a language with a server; use one of go, typescript, python, c, rust"},
		{name: "empty command", file: "[code.servers]\ngo = []\n", wantErr: `code.servers.go: empty command; write the program and its arguments, e.g. go = ["gopls"]`},
		{name: "unknown key", file: "[code]\nidle_time = \"1m\"\n", wantErr: "code.idle_time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".toml")
			if err := os.WriteFile(file, []byte(tc.file), 0o600); err != nil {
				t.Fatal(err)
			}
			c, err := Load(file)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Code.IdleTimeout(); got != tc.idle {
				t.Errorf("idle = %v, want %v", got, tc.idle)
			}
			if len(c.Code.Servers) != tc.servers {
				t.Errorf("servers = %v", c.Code.Servers)
			}
		})
	}
}
