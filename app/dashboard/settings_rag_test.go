package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/app"
	"github.com/switchboard-hub/switchboard/app/apptest"
	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/internal/hublog"
	"github.com/switchboard-hub/switchboard/internal/rag/ollamasim"
	"github.com/switchboard-hub/switchboard/internal/rag/qdrantsim"
	"github.com/switchboard-hub/switchboard/internal/testutil"
	"github.com/switchboard-hub/switchboard/mcp/channel"
	"github.com/switchboard-hub/switchboard/mcp/tools"
)

// ragHub is a running hub for the [rag] tests: a config file the user wrote, the dashboard API,
// an MCP client, and the hub log's records as they are written.
type ragHub struct {
	t       *testing.T
	st      *app.Stack
	cfgPath string
	dash    string // the dashboard API's base URL (token "dash-token")
	cs      *sdk.ClientSession
	ctx     context.Context

	mu      sync.Mutex
	records []hublog.Record
	logged  chan hublog.Record // every record, for waits
}

// newRAGHub starts a hub whose config file holds file, with docs/alpha.md in its workspace.
func newRAGHub(t *testing.T, file string) *ragHub {
	home := realTempDir(t)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	for _, k := range []string{"OLLAMA_HOST", "OPENAI_BASE_URL", "OPENAI_API_KEY", "SWITCHBOARD_QDRANT_URL", "SWITCHBOARD_WORKSPACE", "SWITCHBOARD_TOOLSETS", "SWITCHBOARD_DATA_DIR", "MCP_ADDR"} {
		t.Setenv(k, "")
	}
	cfgPath := filepath.Join(home, ".config", "switchboard", "config.toml")
	os.MkdirAll(filepath.Dir(cfgPath), 0o700)
	if err := os.WriteFile(cfgPath, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	st := apptest.Stack(t, "", func(c *config.Config) { c.Path = cfgPath; c.RAG = cfg.RAG })
	h := &ragHub{t: t, st: st, cfgPath: cfgPath, logged: make(chan hublog.Record, 1024)}
	t.Cleanup(st.HubLog.OnRecord(func(r hublog.Record) {
		h.mu.Lock()
		h.records = append(h.records, r)
		h.mu.Unlock()
		select {
		case h.logged <- r:
		default: // a test that does not wait on them
		}
	}))
	srv := httptest.NewServer(NewServer(app.NewController(st, "test"), "dash-token").Handler())
	t.Cleanup(srv.Close)
	h.dash = srv.URL
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	h.ctx = ctx
	h.cs = apptest.InMemoryClient(t, st, "rag-settings-test")
	ws := st.Service.WorkspaceDir()
	os.MkdirAll(filepath.Join(ws, "docs"), 0o755)
	os.WriteFile(filepath.Join(ws, "docs", "alpha.md"), []byte("# Alpha\n\nThe alpha socket is configured with unix.path.\n"), 0o644)
	return h
}

// call runs an MCP tool; it returns the tool's error text ("" when it succeeded).
func (h *ragHub) call(name string, args map[string]any, out any) string {
	h.t.Helper()
	res, err := h.cs.CallTool(h.ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		h.t.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*sdk.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String()
	}
	if out != nil {
		raw, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(raw, out); err != nil {
			h.t.Fatal(err)
		}
	}
	return ""
}

func (h *ragHub) mustCall(name string, args map[string]any, out any) {
	h.t.Helper()
	if msg := h.call(name, args, out); msg != "" {
		h.t.Fatalf("%s %v: %s", name, args, msg)
	}
}

// collections is rag_collections with stats, by name.
func (h *ragHub) collections() map[string]tools.RAGCollectionInfo {
	h.t.Helper()
	var out tools.RAGCollectionsOutput
	h.mustCall("rag_collections", map[string]any{"show_stats": true}, &out)
	m := map[string]tools.RAGCollectionInfo{}
	for _, c := range out.Collections {
		m[c.Name] = c
	}
	return m
}

func (h *ragHub) checks() settingsChecks {
	return settingsChecks{t: h.t, path: h.cfgPath, do: func(method, route string, body any) (int, map[string]any) {
		return apptest.DashAPI(h.t, h.dash, "dash-token", method, route, body)
	}}
}

// closedStores lists the RAG stores the hub log says were closed.
func (h *ragHub) closedStores() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, r := range h.records {
		if r.Msg == "rag: closed the previous store" {
			out = append(out, attr(r, "location"))
		}
	}
	return out
}

func attr(r hublog.Record, key string) string {
	for _, a := range r.Attrs {
		if a.Key == key {
			return a.Value
		}
	}
	return ""
}

// ragFeed subscribes to the dashboard's "rag" channel.
func (h *ragHub) ragFeed() *websocket.Conn {
	h.t.Helper()
	conn, _, err := websocket.DefaultDialer.Dial(h.st.WSHub.URL(), http.Header{"Authorization": {"Bearer " + h.st.WSHub.Token()}})
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { conn.Close() })
	if err := conn.WriteJSON(map[string]string{"type": "subscribe", "channel": channel.RAG}); err != nil {
		h.t.Fatal(err)
	}
	return conn
}

// snapshot reads the feed until a snapshot at location comes.
func (h *ragHub) snapshot(conn *websocket.Conn, backend, location string) tools.RAGFeedSnapshot {
	h.t.Helper()
	for {
		var frame struct {
			Type    string                `json:"type"`
			Channel string                `json:"channel"`
			Data    tools.RAGFeedSnapshot `json:"data"`
		}
		conn.SetReadDeadline(time.Now().Add(testutil.Patience))
		if err := conn.ReadJSON(&frame); err != nil {
			h.t.Fatalf("waiting for a rag snapshot of %s at %s: %v", backend, location, err)
		}
		if frame.Channel == channel.RAG && frame.Type == "snapshot" && frame.Data.Backend == backend && frame.Data.Location == location {
			return frame.Data
		}
	}
}

// TestSettingsRAGLive: the Settings view's RAG section saved over the dashboard API switches the
// running hub's RAG engine at once, and an MCP client's next rag_* calls, the dashboard's
// Knowledge API and its "rag" feed use it: from the embedded store in one directory to one in
// another, then to a Qdrant server (the real client against qdrantsim). A switch the hub cannot
// make (Qdrant unreachable, a directory it cannot create) is refused with the key to fix,
// nothing is saved, and the engine in force stays. The stores switched away from are closed.
func TestSettingsRAGLive(t *testing.T) {
	dirA, dirB := filepath.Join(realTempDir(t), "a"), filepath.Join(realTempDir(t), "b")
	h := newRAGHub(t, fmt.Sprintf("# mine\n[rag]\ndir = %q\n", dirA))
	sim, err := qdrantsim.Start("")
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Stop()
	feed := h.ragFeed()
	h.snapshot(feed, "embedded", dirA)

	var ing tools.RAGIngestOutput
	h.mustCall("rag_ingest", map[string]any{"path": "docs"}, &ing)
	if _, err := os.Stat(filepath.Join(dirA, "hostuk-docs", "manifest.json")); err != nil {
		t.Fatalf("the first ingest is not in %s: %v", dirA, err)
	}

	// Embedded → embedded in another directory.
	c := h.checks()
	out := c.saved("/api/settings/rag", map[string]any{"dir": dirB})
	if out["applies"] != "now" || fmt.Sprint(out["settings"].(map[string]any)["pending"]) != "[]" {
		t.Fatalf("save dir: applies %v, pending %v", out["applies"], out["settings"].(map[string]any)["pending"])
	}
	h.snapshot(feed, "embedded", dirB)
	if cols := h.collections(); len(cols) != 0 {
		t.Fatalf("collections after the switch to %s: %+v; want none (a new store)", dirB, cols)
	}
	if msg := h.call("rag_query", map[string]any{"question": "alpha socket"}, nil); !strings.Contains(msg, "no collections yet") {
		t.Fatalf("rag_query on the new, empty store: %q", msg)
	}
	h.mustCall("rag_ingest", map[string]any{"path": "docs"}, &ing)
	if _, err := os.Stat(filepath.Join(dirB, "hostuk-docs", "manifest.json")); err != nil {
		t.Fatalf("the ingest after the switch is not in %s: %v", dirB, err)
	}
	var q tools.RAGQueryOutput
	h.mustCall("rag_query", map[string]any{"question": "how is the alpha socket configured"}, &q)
	if len(q.Results) == 0 || q.Results[0].Source != "docs/alpha.md" {
		t.Fatalf("rag_query on %s: %+v", dirB, q)
	}
	if got := h.closedStores(); !slices.Equal(got, []string{dirA}) {
		t.Fatalf("closed stores = %v, want [%s]", got, dirA)
	}

	// Embedded → Qdrant.
	out = c.saved("/api/settings/rag", map[string]any{"backend": "qdrant", "url": sim.Addr})
	if out["applies"] != "now" || h.st.RunningRAG().Backend != "qdrant" {
		t.Fatalf("save qdrant: applies %v, running %+v", out["applies"], h.st.RunningRAG())
	}
	h.snapshot(feed, "qdrant", sim.Addr)
	if cols := h.collections(); len(cols) != 0 {
		t.Fatalf("collections on the new Qdrant server: %+v", cols)
	}
	h.mustCall("rag_ingest", map[string]any{"path": "docs"}, &ing)
	cols := h.collections()
	if c := cols["hostuk-docs"]; c.Backend != "qdrant" || c.PointsCount == 0 {
		t.Fatalf("collections on Qdrant after an ingest: %+v", cols)
	}
	h.mustCall("rag_query", map[string]any{"question": "how is the alpha socket configured"}, &q)
	if len(q.Results) == 0 || q.Results[0].Source != "docs/alpha.md" {
		t.Fatalf("rag_query on Qdrant: %+v", q)
	}
	code, list := apptest.DashAPI(t, h.dash, "dash-token", http.MethodGet, "/api/rag/collections", nil)
	if code != http.StatusOK || !strings.Contains(fmt.Sprint(list), "backend:qdrant") {
		t.Fatalf("the Knowledge view's collections: %d %v", code, list)
	}
	if got := h.closedStores(); !slices.Equal(got, []string{dirA, dirB}) {
		t.Fatalf("closed stores = %v, want [%s %s]", got, dirA, dirB)
	}

	// Refused: nothing saved, the Qdrant engine stays.
	c.refused("/api/settings/rag", map[string]any{"backend": "qdrant", "url": "127.0.0.1:1"}, "rag.url: qdrant at 127.0.0.1:1 is unreachable")
	c.refused("/api/settings/rag", map[string]any{"backend": "qdrant", "url": "localhost:port"}, `rag.url: "localhost:port" has no valid port`)
	// A server that wants another key than the file's: refused naming the key. (The keyless
	// server takes the reference; the keyed one refuses the key it resolves to.)
	keyed, err := qdrantsim.Start("lab-key")
	if err != nil {
		t.Fatal(err)
	}
	defer keyed.Stop()
	t.Setenv("LAB_QDRANT_KEY", "not-the-lab-key")
	if out := c.saved("/api/settings/rag/apikey", map[string]any{"action": "reference", "ref": "${LAB_QDRANT_KEY}"}); out["applies"] != "now" {
		t.Fatalf("key reference: %v", out)
	}
	c.refused("/api/settings/rag", map[string]any{"backend": "qdrant", "url": keyed.Addr}, "rag.api_key: qdrant at "+keyed.Addr+" refused the request")
	notADir := filepath.Join(realTempDir(t), "file")
	os.WriteFile(notADir, nil, 0o600)
	c.refused("/api/settings/rag", map[string]any{"dir": filepath.Join(notADir, "rag")}, "rag.dir: ")
	if c := h.collections()["hostuk-docs"]; c.Backend != "qdrant" {
		t.Fatalf("after refused switches the hub serves %+v", c)
	}
	if r := h.st.RunningRAG(); r.Backend != "qdrant" || r.URL != sim.Addr {
		t.Fatalf("running [rag] after refused switches: %+v", r)
	}
}

// TestHandEditedRAGIsLive: the config file is the source of truth; a [rag] section edited by
// hand is put in force by the file watcher like a save from the Settings view. One the hub cannot
// switch to is logged in the hub log and leaves the engine in force (and Settings lists rag as
// pending).
func TestHandEditedRAGIsLive(t *testing.T) {
	h := newRAGHub(t, "# mine\n")
	dirB := filepath.Join(realTempDir(t), "b")
	// The watcher may be set up after the first write: write again until the hub has it.
	edit := func(text string, done func() bool) {
		t.Helper()
		var last time.Time
		testutil.Eventually(t, "the hub to take the edit "+text, func() bool {
			if done() {
				return true
			}
			if time.Since(last) > 500*time.Millisecond {
				last = time.Now()
				if err := os.WriteFile(h.cfgPath, []byte(text), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			return false
		})
	}
	edit(fmt.Sprintf("# mine\n[rag]\ndir = %q\ncollection = \"notes\"\n", dirB), func() bool { return h.st.RunningRAG().Dir == dirB })
	var ing tools.RAGIngestOutput
	h.mustCall("rag_ingest", map[string]any{"path": "docs"}, &ing)
	if _, err := os.Stat(filepath.Join(dirB, "notes", "manifest.json")); ing.Collection != "notes" || err != nil {
		t.Fatalf("rag_ingest after the hand edit: %+v, %v; want collection notes in %s", ing, err, dirB)
	}
	if got := settingsPending(t, app.NewController(h.st, "test")); slices.Contains(got, "rag") {
		t.Errorf("pending = %v after the hand edit was applied", got)
	}

	refusedLogged := func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		for _, r := range h.records {
			if r.Msg == "config: the file on disk is not in force" && strings.Contains(attr(r, "err"), "rag.url: qdrant at 127.0.0.1:1 is unreachable") {
				return true
			}
		}
		return false
	}
	edit("# mine\n[rag]\nbackend = \"qdrant\"\nurl = \"127.0.0.1:1\"\n", refusedLogged)
	if r := h.st.RunningRAG(); r.Dir != dirB || r.Backend == "qdrant" {
		t.Fatalf("running [rag] after a refused hand edit: %+v", r)
	}
	if c := h.collections()["notes"]; c.Backend != "embedded" || c.PointsCount == 0 {
		t.Fatalf("after a refused hand edit the hub serves %+v", h.collections())
	}
	if got := settingsPending(t, app.NewController(h.st, "test")); !slices.Contains(got, "rag") {
		t.Errorf("pending = %v; the file's [rag] is not in force", got)
	}
}

// TestRAGSwitchDrainsIngestInFlight: an ingest running when [rag] is switched finishes on the
// engine it started on (its store and embedder), while new calls already use the new engine;
// the old store is closed only once the ingest has ended.
func TestRAGSwitchDrainsIngestInFlight(t *testing.T) {
	release := make(chan struct{})
	srv := ollamasim.Start(t, ollamasim.Options{Hold: release})
	ollama, started := srv.URL, srv.Started
	dirA := filepath.Join(realTempDir(t), "a")
	h := newRAGHub(t, fmt.Sprintf("# mine\n[rag]\ndir = %q\nembedder = \"ollama\"\nembedder_url = %q\n", dirA, ollama))
	sim, err := qdrantsim.Start("")
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Stop()

	inFlight := make(chan string, 1)
	go func() {
		res, err := h.cs.CallTool(h.ctx, &sdk.CallToolParams{Name: "rag_ingest", Arguments: map[string]any{"path": "docs"}})
		switch {
		case err != nil:
			inFlight <- err.Error()
		case res.IsError:
			inFlight <- fmt.Sprint(res.Content)
		default:
			inFlight <- ""
		}
	}()
	testutil.Receive(t, started, "the ingest's first embedding request")

	h.checks().saved("/api/settings/rag", map[string]any{"backend": "qdrant", "url": sim.Addr, "embedder": "offline"})
	// New calls use the new engine while the ingest still runs on the old one.
	var ing tools.RAGIngestOutput
	h.mustCall("rag_ingest", map[string]any{"path": "docs"}, &ing)
	if c := h.collections()["hostuk-docs"]; c.Backend != "qdrant" || c.Embedder != "offline" || c.PointsCount == 0 {
		t.Fatalf("a new ingest after the switch went to %+v; want Qdrant with the offline embedder", c)
	}
	if got := h.closedStores(); len(got) != 0 {
		t.Fatalf("closed %v while an ingest was running on it", got)
	}

	close(release)
	if msg := testutil.Receive(t, inFlight, "the ingest in flight"); msg != "" {
		t.Fatalf("the ingest in flight failed: %s", msg)
	}
	var man struct {
		Meta    struct{ Embedder string }
		Sources map[string]any
	}
	raw, err := os.ReadFile(filepath.Join(dirA, "hostuk-docs", "manifest.json"))
	if err == nil {
		err = json.Unmarshal(raw, &man)
	}
	if err != nil || man.Meta.Embedder != "ollama" || man.Sources["docs/alpha.md"] == nil {
		t.Fatalf("the ingest in flight did not finish in %s with ollama: %v\n%s", dirA, err, raw)
	}
	for {
		r := testutil.Receive(t, h.logged, "the hub log's note that the old store is closed")
		if r.Msg == "rag: closed the previous store" {
			if loc := attr(r, "location"); loc != dirA {
				t.Fatalf("closed %s; want %s", loc, dirA)
			}
			break
		}
	}
}
