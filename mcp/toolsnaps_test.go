package mcp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/switchboard-hub/switchboard/internal/fetch"
	"github.com/switchboard-hub/switchboard/internal/ml"
	"github.com/switchboard-hub/switchboard/internal/process"
	"github.com/switchboard-hub/switchboard/internal/rag"
	"github.com/switchboard-hub/switchboard/internal/webview"
	"github.com/switchboard-hub/switchboard/internal/wshub"
	"github.com/switchboard-hub/switchboard/mcp"
	"github.com/switchboard-hub/switchboard/mcp/ide"
)

// TestToolSnapshots pins every tool's name, description, annotations and schemas to a JSON file
// under __toolsnaps__, so a change to a tool's contract shows up in review. Regenerate with
// UPDATE_TOOLSNAPS=1 go test ./mcp -run TestToolSnapshots.
func TestToolSnapshots(t *testing.T) {
	svc := everyGroup(t)
	dir := "__toolsnaps__"
	update := os.Getenv("UPDATE_TOOLSNAPS") != ""
	seen := map[string]bool{}
	for _, tool := range svc.Tools() {
		seen[tool.Name+".json"] = true
		got, err := json.MarshalIndent(tool, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, '\n')
		path := filepath.Join(dir, tool.Name+".json")
		if update {
			os.MkdirAll(dir, 0o755)
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s: no snapshot (%v); run UPDATE_TOOLSNAPS=1 go test ./mcp -run TestToolSnapshots", tool.Name, err)
			continue
		}
		if string(want) != string(got) {
			t.Errorf("%s: schema changed; review and run UPDATE_TOOLSNAPS=1 go test ./mcp -run TestToolSnapshots\n--- want\n%s\n--- got\n%s", tool.Name, want, got)
		}
	}
	if !update {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if !seen[e.Name()] {
				t.Errorf("stale snapshot %s: the tool is no longer registered; delete the file", e.Name())
			}
		}
	}
}

// mlRegistry is a backend registry from an empty environment (only the built-in ollama).
func mlRegistry(t *testing.T) *ml.Registry {
	t.Helper()
	reg, err := ml.NewRegistry(ml.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// everyGroup is a hub with every tool group registered (the browser, ML and IDE ones included,
// none of them connected to anything), for tests that walk every tool.
func everyGroup(t *testing.T) *mcp.Service {
	t.Helper()
	h := wshub.New(wshub.Options{})
	ragStore, err := rag.OpenEmbedded(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fetcher, err := fetch.New(fetch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := mcp.New(
		mcp.WithRAG(rag.Hold(rag.NewEngine(ragStore, nil))),
		mcp.WithWorkspaceRoot(t.TempDir()),
		mcp.WithProcessService(process.New(process.Options{})),
		mcp.WithWSHub(h),
		mcp.WithSubsystem(ide.New(nil)),
		mcp.WithML(mlRegistry(t), mcp.MLOptions{}),
		mcp.WithSearch(), mcp.WithPatch(), mcp.WithGit(), mcp.WithWebFetch(fetcher), mcp.WithNotes(t.TempDir()),
		mcp.WithBrowser(webview.New(webview.Options{})),
	)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Shutdown(t.Context()) })
	return svc
}
