package app

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/mcp"
)

// testConfig is a default config confined to temp dirs, so tests never touch the user's files.
func testConfig(t *testing.T) config.Config {
	t.Helper()
	cfg := config.Default()
	cfg.Workspace = t.TempDir()
	cfg.DataDir = t.TempDir()
	dir, err := os.MkdirTemp("", "sb-") // short: Unix socket paths are limited to 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	cfg.Unix.Path = filepath.Join(dir, "mcp.sock")
	cfg.TCP.Addr = "127.0.0.1:0"
	cfg.HTTP.Addr = "127.0.0.1:0"
	cfg.IDE.URL = "ws://127.0.0.1:1/ws" // nothing listens: the bridge just retries
	return cfg
}

// TestToolsDocIsCurrent fails when docs/tools.md no longer matches the registered tools.
func TestToolsDocIsCurrent(t *testing.T) {
	st, err := BuildStack(testConfig(t), "test", StackOptions{WithHub: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(t.Context()) })
	want := mcp.ToolsMarkdown(st.Service.Tools())
	got, err := os.ReadFile(filepath.Join("..", "docs", "tools.md"))
	if err != nil || string(got) != want {
		t.Fatalf("docs/tools.md is stale (%v); regenerate it with `make docs`", err)
	}
}
