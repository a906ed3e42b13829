//go:build linux

package clients_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestClientsConnectRealCLIs runs `switchboard clients connect NAME` into a temporary HOME and
// then the client's own listing (`claude mcp list`, `gemini mcp list`, `codex mcp list`) with
// that HOME: the client must read the file Switchboard wrote and show the switchboard server.
// Claude Code and Gemini CLI also start the relay to check the server; a hub runs on the socket
// the entry names, and the listing must say it connected.
func TestClientsConnectRealCLIs(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds the binary and runs the agent CLIs")
	}
	dir := modulesDir(t)
	claudeBin := filepath.Join(dir, "@anthropic-ai", "claude-code-linux-x64", "claude")
	geminiJS := filepath.Join(dir, "@google", "gemini-cli", "bundle", "gemini.js")
	codexJS := filepath.Join(dir, "@openai", "codex", "bin", "codex.js")
	cases := []struct {
		name string
		list func(t *testing.T) []string
		// connected: what the listing says when it reached the server
		connected *regexp.Regexp
		file      string
	}{
		{"claude-code", func(t *testing.T) []string {
			return []string{need(t, claudeBin, "Claude Code (npm @anthropic-ai/claude-code)"), "mcp", "list"}
		}, regexp.MustCompile(`switchboard: .*connect --socket .*Connected`), ".claude.json"},
		{"gemini-cli", func(t *testing.T) []string {
			return []string{node22(t), need(t, geminiJS, "Gemini CLI (npm @google/gemini-cli)"), "mcp", "list"}
		}, regexp.MustCompile(`switchboard: .*connect --socket .*Connected`), ".gemini/settings.json"},
		{"codex", func(t *testing.T) []string {
			need(t, filepath.Join(dir, "@openai", "codex-linux-x64"), "Codex's native binary (npm @openai/codex-linux-x64)")
			return []string{node22(t), need(t, codexJS, "Codex (npm @openai/codex)"), "mcp", "list"}
		}, nil, ".codex/config.toml"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			argv := c.list(t) // skips (or fails under CI=true) when the client is missing
			bin := switchboardBinary(t)
			tmp := t.TempDir()
			home, workspace := filepath.Join(tmp, "home"), filepath.Join(tmp, "workspace")
			for _, d := range []string{home, filepath.Join(home, "tmp"), workspace} {
				if err := os.MkdirAll(d, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			srv := hubFor(t, "connect", bin, workspace, newHubDirs(t, filepath.Join(tmp, "hub")))
			sock := srv.args[len(srv.args)-1]
			env := baseEnv(home,
				"DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1",
				"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "GEMINI_CLI_NO_RELAUNCH=true")

			connect := exec.Command(bin, "clients", "connect", c.name, "--socket", sock)
			connect.Dir, connect.Env = workspace, env
			out, err := connect.CombinedOutput()
			t.Logf("switchboard clients connect %s:\n%s", c.name, out)
			if err != nil {
				t.Fatalf("clients connect: %v", err)
			}
			wrote, err := os.ReadFile(filepath.Join(home, c.file))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(wrote), bin) || !strings.Contains(string(wrote), sock) {
				t.Fatalf("%s does not name the binary and the socket:\n%s", c.file, wrote)
			}

			if c.name == "gemini-cli" {
				// Gemini CLI suppresses every MCP server in a folder the user has not trusted
				// (the matrix passes --skip-trust); trusting the workspace is the user's step.
				writeFile(t, filepath.Join(home, ".gemini", "trustedFolders.json"), mustJSON(map[string]string{workspace: "TRUST_FOLDER"}))
			}
			listing, _, err := runCLI(t, workspace, argv, env)
			t.Logf("%s:\n%s", strings.Join(argv[len(argv)-3:], " "), listing)
			if err != nil {
				t.Fatalf("%s mcp list: %v", c.name, err)
			}
			if !strings.Contains(listing, "switchboard") || !strings.Contains(listing, bin) {
				t.Errorf("the listing does not show the switchboard server with %s", bin)
			}
			if c.connected != nil && !c.connected.MatchString(listing) {
				t.Errorf("the listing does not say the switchboard server connected (want %s)", c.connected)
			}

			list := exec.Command(bin, "clients", "list", "--socket", sock)
			list.Dir, list.Env = workspace, env
			out, _ = list.CombinedOutput()
			if !regexp.MustCompile(c.name + `\s+user\s+connected to this hub`).Match(out) {
				t.Errorf("switchboard clients list:\n%s", out)
			}

			// The entry carries the client's own token, which the client hands its relay and the
			// relay presents to the hub: with the token replaced by one the hub never issued, the
			// client's own check fails to connect.
			token := regexp.MustCompile(`sbc_[0-9a-f]{64}`).FindString(string(wrote))
			if token == "" {
				t.Fatalf("%s carries no client token:\n%s", c.file, wrote)
			}
			if strings.Contains(string(out), token) {
				t.Errorf("clients connect printed the token")
			}
			if c.connected != nil {
				writeFile(t, filepath.Join(home, c.file), strings.ReplaceAll(string(wrote), token, "sbc_"+strings.Repeat("0", 64)))
				listing, _, _ := runCLI(t, workspace, argv, env)
				t.Logf("with a token the hub never issued:\n%s", listing)
				if c.connected.MatchString(listing) {
					t.Errorf("%s connected with a token the hub never issued", c.name)
				}
			}
		})
	}
}
