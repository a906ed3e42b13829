package app_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/app/apptest"
	"github.com/switchboard-hub/switchboard/mcp"
)

// TestToolsDocIsCurrent fails when docs/tools.md no longer matches the registered tools.
func TestToolsDocIsCurrent(t *testing.T) {
	st, err := app.BuildStack(apptest.Config(t), "test", app.StackOptions{WithHub: true})
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
