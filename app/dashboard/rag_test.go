package dashboard

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/app/apptest"
	"github.com/switchboard-hub/switchboard/mcp/tools"
)

// TestDashboardRAGAPI: the Knowledge view's controls over the headless dashboard API on a real
// stack: collections with counts, backend and embedder after an ingest made by an MCP client,
// ranked query results, and errors that name the field.
func TestDashboardRAGAPI(t *testing.T) {
	cfg := apptest.Config(t)
	st, err := app.BuildStack(cfg, "test", app.StackOptions{WithHub: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.CloseBounded()
	os.MkdirAll(filepath.Join(cfg.Workspace, "docs"), 0o755)
	os.WriteFile(filepath.Join(cfg.Workspace, "docs", "config.md"), []byte("# Configuration\n\nThe socket path is set with unix.path.\n\n## Tokens\n\nThe HTTP bearer token comes from SWITCHBOARD_TOKEN.\n"), 0o644)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs := apptest.InMemoryClient(t, st, "t")
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "rag_ingest", Arguments: map[string]any{"path": "docs"}})
	if err != nil || res.IsError {
		t.Fatalf("rag_ingest: %v %+v", err, res)
	}
	if _, err := os.Stat(filepath.Join(cfg.DataDir, "rag", "hostuk-docs", "manifest.json")); err != nil {
		t.Errorf("the embedded store is not under <data_dir>/rag: %v", err)
	}

	srv := httptest.NewServer(NewServer(app.NewController(st, "test"), "tok").Handler())
	defer srv.Close()
	do := func(method, path, body string, out any) int {
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer tok")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		json.NewDecoder(resp.Body).Decode(out)
		return resp.StatusCode
	}
	var cols tools.RAGCollectionsOutput
	if code := do("GET", "/api/rag/collections", "", &cols); code != 200 || len(cols.Collections) != 1 {
		t.Fatalf("collections: %d %+v", code, cols)
	}
	if c := cols.Collections[0]; c.Name != "hostuk-docs" || c.PointsCount != 2 || c.Backend != "embedded" || c.Embedder != "offline" || c.Dimension != 256 {
		t.Errorf("collection: %+v", c)
	}
	var q tools.RAGQueryOutput
	if code := do("POST", "/api/rag/query", `{"collection":"hostuk-docs","question":"where does the bearer token come from","topK":1}`, &q); code != 200 || len(q.Results) != 1 {
		t.Fatalf("query: %d %+v", code, q)
	}
	if r := q.Results[0]; r.Source != "docs/config.md" || r.Section != "Configuration > Tokens" || r.Score <= 0 {
		t.Errorf("result: %+v", r)
	}
	var e struct{ Error string }
	if code := do("POST", "/api/rag/query", `{"question":""}`, &e); code != 400 || !strings.HasPrefix(e.Error, "question: is empty") {
		t.Errorf("empty question: %d %q", code, e.Error)
	}
}
