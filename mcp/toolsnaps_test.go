package mcp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/code"
	"github.com/switchboard-hub/switchboard/internal/fetch"
	"github.com/switchboard-hub/switchboard/internal/ml"
	"github.com/switchboard-hub/switchboard/internal/process"
	"github.com/switchboard-hub/switchboard/internal/rag"
	"github.com/switchboard-hub/switchboard/internal/upstream"
	"github.com/switchboard-hub/switchboard/internal/webview"
	"github.com/switchboard-hub/switchboard/internal/wshub"
	"github.com/switchboard-hub/switchboard/mcp"
	"github.com/switchboard-hub/switchboard/mcp/ide"
	"github.com/switchboard-hub/switchboard/mcp/tools"
)

// catalogue is every tool the hub declares, from the declarations alone (no hub, no backend).
func catalogue() []*sdk.Tool {
	var out []*sdk.Tool
	for _, g := range mcp.Catalogue(ide.Tools()) {
		out = append(out, g.Defs()...)
	}
	return out
}

// TestToolSnapshots pins every tool's name, description, annotations and schemas to a JSON file
// under __toolsnaps__, so a change to a tool's contract shows up in review. The snapshots come
// from the declarations alone (mcp.Catalogue), as docs/tools.md does. Regenerate with
// UPDATE_TOOLSNAPS=1 go test ./mcp -run TestToolSnapshots.
func TestToolSnapshots(t *testing.T) {
	dir := "__toolsnaps__"
	update := os.Getenv("UPDATE_TOOLSNAPS") != ""
	seen := map[string]bool{}
	for _, tool := range catalogue() {
		seen[tool.Name+".json"] = true
		// As a client sees it: schemas decoded into maps, keys sorted.
		got, err := json.MarshalIndent(json.RawMessage(canonical(t, tool)), "", "  ")
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

// TestCatalogueIsWhatAHubServes: the catalogue (declarations alone) lists exactly the tools a hub
// with every group configured serves, with the same definitions (the hub keeps them in name
// order), so docs and snapshots made from it cannot drift from what clients see.
func TestCatalogueIsWhatAHubServes(t *testing.T) {
	svc := everyGroup(t)
	// Served: on the hub's server, callable by name (a tools mode lists fewer: mcp/modes.go).
	served := map[string]*sdk.Tool{}
	for _, tl := range svc.ActiveTools() {
		served[tl.Name] = tl
	}
	var order []string
	for _, tl := range svc.Tools() {
		order = append(order, tl.Name)
	}
	var declared []string
	for _, want := range catalogue() {
		declared = append(declared, want.Name)
		got, ok := served[want.Name]
		if !ok {
			t.Errorf("%s is declared but a hub with every group does not serve it", want.Name)
			continue
		}
		delete(served, want.Name)
		if w, g := canonical(t, want), canonical(t, got); w != g {
			t.Errorf("%s: declared\n%s\nserved\n%s", want.Name, w, g)
		}
	}
	for name := range served {
		t.Errorf("%s is served but not in the catalogue", name)
	}
	slices.Sort(declared)
	if strings.Join(order, ",") != strings.Join(declared, ",") {
		t.Errorf("the hub's tools are not the catalogue's in name order:\nhub       %v\ncatalogue %v", order, declared)
	}
}

// canonical is v as JSON with object keys sorted (a client decodes schemas into maps).
func canonical(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var generic any
	if err := json.Unmarshal(b, &generic); err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(generic)
	return string(b)
}

// connectTo connects an in-memory client to svc.
func connectTo(t *testing.T, svc *mcp.Service) *sdk.ClientSession {
	t.Helper()
	ct, st := sdk.NewInMemoryTransports()
	ss, err := svc.Server().Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "catalogue", Version: "0"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
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

// everyGroup is a hub with every tool group registered (the browser, ML and IDE ones and the
// upstream tool search included, none of them connected to anything), for tests that walk every
// tool.
func everyGroup(t *testing.T) *mcp.Service {
	t.Helper()
	ups, err := upstream.New(upstream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return everyGroupWith(t, ups, mcp.WithUpstreamToolSearch(true))
}

// everyGroupWith is a hub with every group configured, the upstream servers ups runs and extra.
func everyGroupWith(t *testing.T, ups *upstream.Manager, extra ...mcp.Option) *mcp.Service {
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
	pool := code.NewPool(code.Options{StateDir: t.TempDir()})
	t.Cleanup(func() { pool.Close() })
	svc, err := mcp.New(append([]mcp.Option{
		mcp.WithRAG(rag.Hold(rag.NewEngine(ragStore, nil))),
		mcp.WithWorkspaceRoot(t.TempDir()),
		mcp.WithProcessService(process.New(process.Options{})),
		mcp.WithWSHub(h),
		mcp.WithSubsystem(ide.New(nil)),
		mcp.WithML(mlRegistry(t), tools.MLOptions{}),
		mcp.WithSearch(), mcp.WithPatch(), mcp.WithGit(), mcp.WithWebFetch(fetcher), mcp.WithNotes(t.TempDir()), mcp.WithTasks(t.TempDir(), time.Minute),
		mcp.WithBrowser(webview.New(webview.Options{})),
		mcp.WithUpstreams(ups),
		mcp.WithCode(pool),
	}, extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Shutdown(t.Context()) })
	return svc
}
