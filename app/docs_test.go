package app_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/mcp"
)

// TestToolsDocIsCurrent fails when docs/tools.md no longer matches the declared tools (the
// catalogue, which mcp's TestCatalogueIsWhatAHubServes holds equal to what a hub serves).
func TestToolsDocIsCurrent(t *testing.T) {
	want := mcp.ToolsMarkdown(app.Catalogue())
	got, err := os.ReadFile(filepath.Join("..", "docs", "tools.md"))
	if err != nil || string(got) != want {
		t.Fatalf("docs/tools.md is stale (%v); regenerate it with `make docs`", err)
	}
}
