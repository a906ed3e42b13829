package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/testutil"
	"github.com/switchboard-hub/switchboard/internal/wshub"

	"github.com/switchboard-hub/switchboard/internal/rag"
	"github.com/switchboard-hub/switchboard/mcp/tools"
)

func newRAGService(t *testing.T) (*Service, string) {
	t.Helper()
	store, err := rag.OpenEmbedded(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := newTestService(t, WithRAG(rag.Hold(rag.NewEngine(store, rag.Offline{}))))
	return s, s.Workspace().Dir()
}

const guideMD = `# Switchboard guide

Switchboard is a hub for AI clients.

## Install

### Linux

Download the tarball and unpack it into /opt. Then run the binary.

## Configuration

The socket path is set with the unix.path key in config.toml.
`

const serverGo = `package server

import "net"

// ListenUnixSocket opens the hub's Unix domain socket with mode 0600.
func ListenUnixSocket(path string) (net.Listener, error) {
	return net.Listen("unix", path)
}

// RetryBackoff doubles the reconnect interval up to a maximum.
func RetryBackoff(d int) int { return d * 2 }
`

func TestRAGIngestAndQuery(t *testing.T) {
	s, root := newRAGService(t)
	cs := connect(t, s)
	writeTree(t, root, map[string]string{
		"docs/guide.md":   guideMD,
		"src/server.go":   serverGo,
		"src/notes.txt":   "Rate limiting\n\nRequests above the quota are rejected with 429.\n",
		".gitignore":      "secret/\n*.log\n",
		"secret/keys.md":  "# Keys\n\nthe deploy key lives here\n",
		"debug.log":       "noise about sockets\n",
		"assets/logo.png": "\x89PNG\r\n\x1a\n\x00\x00\x00binary",
		"big/huge.txt":    strings.Repeat("word ", 300_000), // 1.5 MB, over the cap
	})

	var ing tools.RAGIngestOutput
	mustCall(t, cs, "rag_ingest", map[string]any{"path": "."}, &ing)
	if !ing.Success || ing.Collection != "hostuk-docs" || ing.Path != "." {
		t.Fatalf("ingest: %+v", ing)
	}
	if ing.Chunks < 5 {
		t.Errorf("directory ingest reported %d chunks, want the chunk count (>= 5)", ing.Chunks)
	}
	for _, want := range []string{"assets/logo.png (binary)", "secret/ (ignored)", "debug.log (ignored)", "big/huge.txt (", "over the"} {
		if !strings.Contains(ing.Message, want) {
			t.Errorf("message does not mention %q: %s", want, ing.Message)
		}
	}

	var q tools.RAGQueryOutput
	mustCall(t, cs, "rag_query", map[string]any{"question": "where do I configure the socket path?"}, &q)
	if q.Collection != "hostuk-docs" || q.Query != "where do I configure the socket path?" || len(q.Results) == 0 || len(q.Results) > 5 {
		t.Fatalf("query: %+v", q)
	}
	top := q.Results[0]
	if top.Source != "docs/guide.md" || top.Section != "Switchboard guide > Configuration" || top.Category != "markdown" {
		t.Errorf("top result = %+v, want docs/guide.md section 'Switchboard guide > Configuration'", top)
	}
	for i := 1; i < len(q.Results); i++ {
		if q.Results[i].Score > q.Results[i-1].Score {
			t.Errorf("results not in descending score order: %+v", q.Results)
		}
	}
	if !strings.Contains(q.Context, "docs/guide.md") || !strings.Contains(q.Context, "unix.path") {
		t.Errorf("context not ready for a prompt: %q", q.Context)
	}
	for _, r := range q.Results {
		if strings.HasPrefix(r.Source, "secret/") || r.Source == "debug.log" {
			t.Errorf("ignored file was indexed: %+v", r)
		}
	}

	// Go code: chunked by declaration, camelCase split.
	mustCall(t, cs, "rag_query", map[string]any{"question": "retry backoff", "topK": 1}, &q)
	if len(q.Results) != 1 || q.Results[0].Source != "src/server.go" || q.Results[0].Section != "func RetryBackoff" {
		t.Errorf("go query: %+v", q.Results)
	}

	// Incremental: unchanged tree writes nothing.
	man := filepath.Join(s.RAG().Info().Location, "hostuk-docs", "manifest.json")
	before, err := os.Stat(man)
	if err != nil {
		t.Fatal(err)
	}
	mustCall(t, cs, "rag_ingest", map[string]any{"path": "."}, &ing)
	if !strings.Contains(ing.Message, "0 files indexed") || !strings.Contains(ing.Message, "nothing written") {
		t.Errorf("re-ingest of an unchanged tree: %s", ing.Message)
	}
	after, _ := os.Stat(man)
	if !after.ModTime().Equal(before.ModTime()) {
		t.Error("re-ingesting an unchanged tree rewrote the manifest")
	}

	// A changed file is replaced, a deleted one removed.
	writeTree(t, root, map[string]string{"src/notes.txt": "Pagination\n\nUse the cursor parameter to page through results.\n"})
	os.Remove(filepath.Join(root, "src/server.go"))
	mustCall(t, cs, "rag_ingest", map[string]any{"path": "."}, &ing)
	if !strings.Contains(ing.Message, "1 files indexed") || !strings.Contains(ing.Message, "1 removed") {
		t.Errorf("re-ingest after changes: %s", ing.Message)
	}
	mustCall(t, cs, "rag_query", map[string]any{"question": "rate limiting quota 429", "topK": 10}, &q)
	for _, r := range q.Results {
		if strings.Contains(r.Content, "429") || r.Source == "src/server.go" {
			t.Errorf("stale content still indexed: %+v", r)
		}
	}

	// A single file into another collection; chunks counted.
	mustCall(t, cs, "rag_ingest", map[string]any{"path": "docs/guide.md", "collection": "guide"}, &ing)
	if ing.Chunks != 4 || ing.Collection != "guide" {
		t.Errorf("file ingest: %+v (want 4 chunks: intro, Install > Linux, Configuration... )", ing)
	}
	var cols tools.RAGCollectionsOutput
	mustCall(t, cs, "rag_collections", map[string]any{"show_stats": true}, &cols)
	if len(cols.Collections) != 2 || cols.Collections[0].Name != "guide" || cols.Collections[0].PointsCount != 4 ||
		cols.Collections[0].Status != "green" || cols.Collections[0].Embedder != "offline" || cols.Collections[0].Backend != "embedded" {
		t.Errorf("collections with stats: %+v", cols)
	}
	cols = tools.RAGCollectionsOutput{}
	mustCall(t, cs, "rag_collections", map[string]any{}, &cols)
	if cols.Collections[1].Name != "hostuk-docs" || cols.Collections[1].PointsCount != 0 || cols.Collections[1].Status != "" {
		t.Errorf("collections without stats: %+v", cols)
	}

	// recreate drops what was there.
	mustCall(t, cs, "rag_ingest", map[string]any{"path": "src/notes.txt", "collection": "guide", "recreate": true}, &ing)
	cols = tools.RAGCollectionsOutput{}
	mustCall(t, cs, "rag_collections", map[string]any{"show_stats": true}, &cols)
	if cols.Collections[0].PointsCount != 1 {
		t.Errorf("after recreate: %+v", cols.Collections[0])
	}
}

func TestRAGErrors(t *testing.T) {
	s, root := newRAGService(t)
	cs := connect(t, s)
	writeTree(t, root, map[string]string{"a.md": "# A\n\nalpha\n"})
	outside := t.TempDir()
	writeTree(t, outside, map[string]string{"x.md": "# X\n\nsecret\n"})
	os.Symlink(outside, filepath.Join(root, "link"))

	cases := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"rag_query", map[string]any{"question": "  "}, "question: is empty"},
		{"rag_query", map[string]any{"question": "alpha"}, `collection: "hostuk-docs" does not exist and there are no collections yet`},
		{"rag_ingest", map[string]any{"path": "../"}, "path: "},
		{"rag_ingest", map[string]any{"path": outside}, "path: "},
		{"rag_ingest", map[string]any{"path": "link/x.md"}, "outside the workspace"},
		{"rag_ingest", map[string]any{"path": "a.md", "collection": "../evil"}, "collection: \"../evil\" is not a valid name"},
		{"rag_query", map[string]any{"question": "x", "topK": 1000}, "topK: 1000 is out of range"},
	}
	for _, c := range cases {
		if e := call(t, cs, c.tool, c.args, nil); !strings.Contains(e, c.want) {
			t.Errorf("%s %v: error %q, want it to contain %q", c.tool, c.args, e, c.want)
		}
	}
	mustCall(t, cs, "rag_ingest", map[string]any{"path": "a.md", "collection": "docs"}, nil)
	mustCall(t, cs, "rag_ingest", map[string]any{"path": "a.md", "collection": "notes"}, nil)
	e := call(t, cs, "rag_query", map[string]any{"question": "alpha", "collection": "nope"}, nil)
	if !strings.Contains(e, `collection: "nope" does not exist; existing collections: docs, notes`) {
		t.Errorf("unknown collection: %q", e)
	}
	if _, err := os.Stat(filepath.Join(outside, "..", "evil")); err == nil {
		t.Error("a collection name escaped the store")
	}
	// rag_ingest is audited at Security level (not read-only); queries are read-only.
	for _, tl := range s.Tools() {
		switch tl.Name {
		case "rag_ingest":
			if tl.Annotations.ReadOnlyHint || !s.toolsets.security[tl.Name] {
				t.Error("rag_ingest must not be read-only and must be audited at Security level")
			}
		case "rag_query", "rag_collections":
			if !tl.Annotations.ReadOnlyHint {
				t.Errorf("%s should be read-only", tl.Name)
			}
		}
	}
}

func TestRAGIngestProgress(t *testing.T) {
	s, root := newRAGService(t)
	files := map[string]string{}
	for i := range 300 {
		files[filepath.Join("docs", "d"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+strconv.Itoa(i)+".md")] = "# Doc\n\n" + strings.Repeat("some words about topic "+strconv.Itoa(i)+"\n\n", 40)
	}
	writeTree(t, root, files)
	var mu sync.Mutex
	var got []*sdk.ProgressNotificationParams
	more := make(chan struct{}, 1)
	ctx := context.Background()
	ct, st := sdk.NewInMemoryTransports()
	ss, err := s.Server().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "progress-client", Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
			mu.Lock()
			got = append(got, r.Params)
			mu.Unlock()
			select {
			case more <- struct{}{}:
			default:
			}
		}}).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	params := &sdk.CallToolParams{Name: "rag_ingest", Arguments: map[string]any{"path": "docs"}}
	params.SetProgressToken("tok-1")
	res, err := cs.CallTool(ctx, params)
	if err != nil || res.IsError {
		t.Fatalf("ingest: %v %+v", err, res)
	}
	// Notifications may arrive after the result: each one wakes this wait.
	for timeout := time.After(testutil.Patience); ; {
		mu.Lock()
		n := len(got)
		var last *sdk.ProgressNotificationParams
		if n > 0 {
			last = got[n-1]
		}
		mu.Unlock()
		if last != nil && last.Progress == 300 && strings.Contains(last.Message, "300 files") {
			break
		}
		select {
		case <-more:
		case <-timeout:
			t.Fatalf("progress notifications: %d, last %+v", n, last)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if got[0].ProgressToken != "tok-1" || got[0].Total != 300 {
		t.Errorf("first progress: %+v", got[0])
	}
}

// TestRAGHubChannel: a dashboard subscribed to the hub's "rag" channel gets the snapshot
// (backend, embedder) and the ingest's progress events, ending with running=false.
func TestRAGHubChannel(t *testing.T) {
	h := wshub.New(wshub.Options{})
	store, err := rag.OpenEmbedded(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := newTestService(t, WithWSHub(h), WithRAG(rag.Hold(rag.NewEngine(store, nil))))
	writeTree(t, s.Workspace().Dir(), map[string]string{"docs/a.md": guideMD, "docs/b.go": serverGo})
	cs := connect(t, s)
	var start tools.WSStartOutput
	mustCall(t, cs, "ws_start", map[string]any{"addr": "127.0.0.1:0"}, &start)
	conn, _, err := (&websocket.Dialer{HandshakeTimeout: 5 * time.Second}).Dial("ws://"+start.Addr+"/ws", http.Header{"Authorization": {"Bearer " + h.Token()}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.WriteMessage(websocket.TextMessage, []byte(`{"type":"subscribe","channel":"rag"}`))
	read := func() wshub.Message {
		var m wshub.Message
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		if err := conn.ReadJSON(&m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	var snap tools.RAGFeedSnapshot
	for {
		m := read()
		if m.Type == wshub.TypeSnapshot {
			b, _ := json.Marshal(m.Data)
			json.Unmarshal(b, &snap)
			break
		}
	}
	if snap.Backend != "embedded" || snap.Embedder != "offline" || snap.Model != rag.OfflineModel {
		t.Fatalf("snapshot: %+v", snap)
	}
	mustCall(t, cs, "rag_ingest", map[string]any{"path": "docs"}, nil)
	var last tools.RAGIngestProgress
	for sawRunning := false; ; {
		m := read()
		if m.Type != "event" {
			continue
		}
		b, _ := json.Marshal(m.Data)
		json.Unmarshal(b, &last)
		if last.Running {
			sawRunning = true
		}
		if !last.Running {
			if !sawRunning {
				t.Error("no running progress event before the final one")
			}
			break
		}
	}
	if last.Collection != "hostuk-docs" || last.Files != 2 || last.Total != 2 || last.Chunks < 4 || !strings.Contains(last.Message, "2 files") {
		t.Errorf("final event: %+v", last)
	}
}

// TestRAGIngestCancel: a client that cancels rag_ingest stops it promptly; the collection stays
// usable and a later ingest completes it.
func TestRAGIngestCancel(t *testing.T) {
	s, root := newRAGService(t)
	files := map[string]string{"docs/anchor.md": "# Anchor\n\nzebra giraffe\n"}
	// 12.5k chunks: the ingest runs ~0.2 s, so the cancellation (sent on the first progress
	// notification) lands while it runs even on a loaded machine; with 1.5k it was done in ~60 ms.
	for i := range 1500 {
		files["docs/n/"+strconv.Itoa(i)+".md"] = "# N\n\n" + strings.Repeat("filler about topic "+strconv.Itoa(i)+"\n\n", 400)
	}
	writeTree(t, root, map[string]string{"docs/anchor.md": files["docs/anchor.md"]})
	cs := connect(t, s)
	mustCall(t, cs, "rag_ingest", map[string]any{"path": "docs"}, nil)
	writeTree(t, root, files)

	progressed := make(chan struct{}, 1)
	ctx := context.Background()
	ct, st := sdk.NewInMemoryTransports()
	ss, err := s.Server().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	pc, err := sdk.NewClient(&sdk.Implementation{Name: "canceller", Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
			select { // the first notification comes when the walk is done, before any file is indexed
			case progressed <- struct{}{}:
			default:
			}
		}}).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	cctx, cancel := context.WithCancel(ctx)
	params := &sdk.CallToolParams{Name: "rag_ingest", Arguments: map[string]any{"path": "docs"}}
	params.SetProgressToken("p")
	done := make(chan error, 1)
	go func() { _, err := pc.CallTool(cctx, params); done <- err }()
	select {
	case <-progressed:
	case <-time.After(20 * time.Second):
		t.Fatal("no progress notification")
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the call did not end after cancellation")
	}
	// The server-side ingest stops too (the dashboard feed says so), and a new ingest is accepted
	// (one per collection at a time).
	var l []tools.RAGIngestProgress
	if !testutil.Poll(testutil.Patience, func() bool {
		l = s.ragFeed.Ingests()
		return len(l) == 1 && !l[0].Running && strings.Contains(l[0].Error, "ingest cancelled after")
	}) {
		t.Fatalf("server-side ingest was not cancelled: %+v", l)
	}
	// The collection's lock goes a moment after the feed's update: try again while it says
	// "already running".
	var e string
	var ing tools.RAGIngestOutput
	testutil.Poll(testutil.Patience, func() bool {
		var q tools.RAGQueryOutput
		if e = call(t, cs, "rag_query", map[string]any{"question": "zebra giraffe", "topK": 1}, &q); e != "" || len(q.Results) != 1 || q.Results[0].Source != "docs/anchor.md" {
			t.Fatalf("query after cancel: %q %+v", e, q)
		}
		ing = tools.RAGIngestOutput{}
		e = call(t, cs, "rag_ingest", map[string]any{"path": "docs"}, &ing)
		if e != "" && !strings.Contains(e, "already running") {
			t.Fatalf("ingest after cancel: %s", e)
		}
		return e == ""
	})
	if e != "" {
		t.Fatalf("ingest after cancel: %s", e)
	}
	if !strings.Contains(ing.Message, "1501 files") {
		t.Errorf("ingest after cancel: %s", ing.Message)
	}
}
