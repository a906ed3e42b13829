package rag

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/switchboard-hub/switchboard/internal/rag/ollamasim"
	"github.com/switchboard-hub/switchboard/internal/testutil"
	"github.com/switchboard-hub/switchboard/internal/workspace"
)

func TestTokenize(t *testing.T) {
	got := strings.Join(tokenize(nil, "ReadFileContext parses HTTPServer read_file configuration, Compressed files!"), " ")
	for _, want := range []string{"readfilecontext", "read", "fil", "context", "httpserv", "http", "serv", "configur", "compress"} {
		if !strings.Contains(" "+got+" ", " "+want+" ") {
			t.Errorf("tokens %q lack %q", got, want)
		}
	}
	if strings.Contains(got, " the ") {
		t.Error("stop word kept")
	}
	for _, pair := range [][2]string{{"encoding", "encoder"}, {"compression", "compressed"}, {"configure", "configuration"}, {"parsing", "parse"}, {"files", "file"}} {
		if stem(pair[0]) != stem(pair[1]) {
			t.Errorf("stem(%q)=%q != stem(%q)=%q", pair[0], stem(pair[0]), pair[1], stem(pair[1]))
		}
	}
}

func TestChunkMarkdownAndGo(t *testing.T) {
	md := "intro text\n\n# Top\n\nbody\n\n## Sub A\n\na text\n\n```\n# not a heading\n```\n\n### Deep\n\ndeep\n\n## Sub B\n\nb\n"
	cs := ChunkFile("docs/x.md", md)
	var secs []string
	for i, c := range cs {
		if c.ChunkIndex != i || c.Source != "docs/x.md" || c.Category != "markdown" {
			t.Errorf("chunk %d: %+v", i, c)
		}
		secs = append(secs, c.Section)
	}
	if got := strings.Join(secs, "|"); got != "|Top|Top > Sub A|Top > Sub A > Deep|Top > Sub B" {
		t.Errorf("sections = %q", got)
	}
	goSrc := "// Package p does things.\npackage p\n\nimport \"fmt\"\n\n// T is a type.\ntype T struct{}\n\n// Hello greets.\nfunc (t *T) Hello() { fmt.Println(\"hi\") }\n\nconst A, B = 1, 2\n"
	cs = ChunkFile("p/p.go", goSrc)
	secs = nil
	for _, c := range cs {
		secs = append(secs, c.Section)
	}
	if got := strings.Join(secs, "|"); got != "package p|import|type T|func (*T) Hello|const A, B" {
		t.Errorf("go sections = %q", got)
	}
	if !strings.HasPrefix(cs[3].Content, "// Hello greets.") {
		t.Errorf("doc comment not kept with its declaration: %q", cs[3].Content)
	}
	// bounded size
	long := strings.Repeat("line of text that goes on\n", 1000)
	for _, c := range ChunkFile("big.txt", long) {
		if len(c.Content) > MaxChunkChars {
			t.Fatalf("chunk of %d chars exceeds %d", len(c.Content), MaxChunkChars)
		}
	}
}

func newTestEngine(t *testing.T) (*Engine, string) {
	dir := t.TempDir()
	store, err := OpenEmbedded(dir)
	if err != nil {
		t.Fatal(err)
	}
	return NewEngine(store, Offline{}), dir
}

func TestPersistenceAndMismatch(t *testing.T) {
	eng, dir := newTestEngine(t)
	fsys := fstest.MapFS{"a.md": {Data: []byte("# Alpha\n\nthe alpha release notes\n")}, "b.md": {Data: []byte("# Beta\n\nbeta testing guide\n")},
		"empty.txt": {Data: nil}} // a source without chunks
	if _, err := eng.Ingest(context.Background(), wsOf(t, fsys), ".", IngestOptions{Collection: "c"}); err != nil {
		t.Fatal(err)
	}
	// A new process (a fresh store on the same directory) sees the same content.
	store2, _ := OpenEmbedded(dir)
	hits, err := NewEngine(store2, nil).Query(context.Background(), "c", "beta tests", 1, Hybrid)
	if err != nil || len(hits) != 1 || hits[0].Source != "b.md" {
		t.Fatalf("after reopen: %v %+v", err, hits)
	}
	// A commit by another store on the same directory (another process) is seen by store2.
	fsys["b.md"] = &fstest.MapFile{Data: []byte("# Beta\n\nzeppelin maintenance\n")}
	if _, err := eng.Ingest(context.Background(), wsOf(t, fsys), ".", IngestOptions{Collection: "c"}); err != nil {
		t.Fatal(err)
	}
	hits, err = NewEngine(store2, nil).Query(context.Background(), "c", "zeppelin", 1, LexicalOnly)
	if err != nil || len(hits) != 1 || !strings.Contains(hits[0].Content, "zeppelin") {
		t.Fatalf("store2 did not see the other store's commit: %v %+v", err, hits)
	}
	// Another embedder is refused, naming both and the fix.
	srv := ollamaServer(t, 8)
	other := NewEngine(store2, NewOllama(srv.URL, "all-minilm"))
	_, err = other.Query(context.Background(), "c", "beta", 1, Hybrid)
	var me *MismatchError
	if !errors.As(err, &me) || !strings.Contains(err.Error(), "embedder offline (model hash-v1") || !strings.Contains(err.Error(), "ollama (model all-minilm") || !strings.Contains(err.Error(), "recreate=true") {
		t.Fatalf("mismatch error: %v", err)
	}
	if _, err := other.Ingest(context.Background(), wsOf(t, fsys), ".", IngestOptions{Collection: "c"}); !errors.As(err, &me) {
		t.Fatalf("ingest with another embedder: %v", err)
	}
	// recreate rebuilds it with the new embedder.
	if _, err := other.Ingest(context.Background(), wsOf(t, fsys), ".", IngestOptions{Collection: "c", Recreate: true}); err != nil {
		t.Fatal(err)
	}
	meta, _, _ := store2.Meta(context.Background(), "c")
	if meta.Embedder != "ollama" || meta.Model != "all-minilm" || meta.Dim != 8 {
		t.Errorf("meta after recreate: %+v", meta)
	}
	if hits, err := other.Query(context.Background(), "c", "beta", 2, Hybrid); err != nil || len(hits) != 2 {
		t.Errorf("query with ollama: %v %+v", err, hits)
	}
}

// ollamaServer is Ollama's /api/embed (ollamasim) embedding by hashed tokens in dim dimensions.
func ollamaServer(t *testing.T, dim int) *ollamasim.Server {
	return ollamasim.Start(t, ollamasim.Options{Embed: func(in string) []float32 {
		v := make([]float32, dim)
		for _, tok := range tokenize(nil, in) {
			v[fnv32(tok)%uint32(dim)] += 1
		}
		normalize(v)
		return v
	}})
}

func TestOllamaHostForms(t *testing.T) {
	if e := NewOllama("", ""); e.URL() != "http://localhost:11434" || e.Model() != "nomic-embed-text" {
		t.Errorf("defaults: %s %s", e.URL(), e.Model())
	}
	e := NewOllama("127.0.0.1:1", "") // OLLAMA_HOST's host:port form
	if e.URL() != "http://127.0.0.1:1" {
		t.Errorf("host:port: %s", e.URL())
	}
	_, err := e.Embed(context.Background(), []string{"x"})
	var ue *UnreachableError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "http://127.0.0.1:1") || !strings.Contains(err.Error(), "switchboard doctor") {
		t.Errorf("unreachable: %v", err)
	}
	srv := ollamaServer(t, 4)
	_, err = NewOllama(srv.URL, "missing").Embed(context.Background(), []string{"x"})
	if err == nil || !strings.Contains(err.Error(), "ollama pull missing") {
		t.Errorf("missing model: %v", err)
	}
}

func TestOpenAIEmbedder(t *testing.T) {
	var auth atomic.Value
	// Follows the documented POST /v1/embeddings: {"model","input":[...]} → {"object":"list",
	// "data":[{"object":"embedding","index":i,"embedding":[...]}],"model","usage"}.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth.Store(r.Header.Get("Authorization"))
		if r.URL.Path != "/v1/embeddings" {
			http.NotFound(w, r)
			return
		}
		if r.Header.Get("Authorization") != "Bearer sk-test" {
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}`))
			return
		}
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		type item struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var data []item
		for i := len(req.Input) - 1; i >= 0; i-- { // out of order on purpose: clients must use index
			data = append(data, item{"embedding", i, []float32{float32(len(req.Input[i])), 1, 0}})
		}
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model, "usage": map[string]int{"prompt_tokens": 1, "total_tokens": 1}})
	}))
	defer srv.Close()
	e := NewOpenAI(srv.URL+"/v1", "sk-test", "")
	vecs, err := e.Embed(context.Background(), []string{"a", "bbb"})
	if err != nil {
		t.Fatal(err)
	}
	if e.Dim() != 3 || e.Model() != DefaultOpenAIModel || vecs[0][0] >= vecs[1][0] {
		t.Errorf("vectors %v dim %d", vecs, e.Dim())
	}
	_, err = NewOpenAI(srv.URL+"/v1", "wrong", "m").Embed(context.Background(), []string{"a"})
	if err == nil || !strings.Contains(err.Error(), "Incorrect API key") || !strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Errorf("bad key: %v", err)
	}
}

func TestConcurrentQueriesDuringIngestAndCancel(t *testing.T) {
	eng, _ := newTestEngine(t)
	fsys := fstest.MapFS{}
	for i := range 400 {
		fsys[fmt.Sprintf("d/f%03d.md", i)] = &fstest.MapFile{Data: []byte(fmt.Sprintf("# File %d\n\n%s\n", i, strings.Repeat(fmt.Sprintf("topic%d words here\n\n", i), 200)))}
	}
	fsys["d/anchor.md"] = &fstest.MapFile{Data: []byte("# Anchor\n\nzebra giraffe\n")}
	if _, err := eng.Ingest(context.Background(), wsOf(t, fstest.MapFS{"d/anchor.md": fsys["d/anchor.md"]}), "d", IngestOptions{Collection: "c"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var queries atomic.Int64
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				hits, err := eng.Query(context.Background(), "c", "zebra giraffe", 1, Hybrid)
				if err != nil || len(hits) != 1 || hits[0].Source != "d/anchor.md" {
					t.Errorf("query during ingest: %v %+v", err, hits)
					return
				}
				queries.Add(1)
			}
		}()
	}
	// Cancelled from outside the ingest (another goroutine, as a client's cancel arrives) once
	// it has done 20 files.
	progressed := make(chan struct{})
	var once sync.Once
	go func() {
		<-progressed
		cancel()
	}()
	start := time.Now()
	_, err := eng.Ingest(ctx, wsOf(t, fsys), "d", IngestOptions{Collection: "c", ProgressEvery: time.Nanosecond, Progress: func(p Progress) {
		if p.Files > 20 {
			once.Do(func() { close(progressed) })
		}
	}})
	close(stop)
	wg.Wait()
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "cancelled") {
		t.Fatalf("cancelled ingest: %v", err)
	}
	if time.Since(start) > 10*time.Second {
		t.Errorf("cancellation took %v", time.Since(start))
	}
	if queries.Load() == 0 {
		t.Error("no query ran during the ingest")
	}
	// Consistent afterwards, and a full ingest completes it.
	res, err := eng.Ingest(context.Background(), wsOf(t, fsys), "d", IngestOptions{Collection: "c"})
	if err != nil || res.Files != 401 {
		t.Fatalf("ingest after cancel: %v %+v", err, res)
	}
	hits, _ := eng.Query(context.Background(), "c", "topic123", 1, Hybrid)
	if len(hits) != 1 || hits[0].Source != "d/f123.md" {
		t.Errorf("after full ingest: %+v", hits)
	}
}

// TestKilledIngestLeavesUsableCollection kills a real process (this test binary, re-executed)
// while it ingests in a loop, then opens the collection: it must load, answer queries, and hold
// each source's old or new content, never a mix of a damaged segment.
func TestKilledIngestLeavesUsableCollection(t *testing.T) {
	if dir := os.Getenv("RAG_KILL_CHILD_DIR"); dir != "" {
		store, _ := OpenEmbedded(filepath.Join(dir, "store"))
		eng := NewEngine(store, nil)
		src := filepath.Join(dir, "src") // rewritten in place: a killed child leaves nothing behind
		os.MkdirAll(src, 0o755)
		ws := openWS(t, src)
		for gen := 1; ; gen++ {
			for i := range 200 {
				os.WriteFile(filepath.Join(src, fmt.Sprintf("f%03d.md", i)), []byte(fmt.Sprintf("# F%d\n\ngeneration%d %s\n", i, gen, strings.Repeat("padding text ", 500))), 0o644)
			}
			if _, err := eng.Ingest(context.Background(), ws, ".", IngestOptions{Collection: "k"}); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(3)
			}
			os.WriteFile(filepath.Join(dir, "gen"), []byte(fmt.Sprint(gen)), 0o644)
		}
	}
	dir := t.TempDir()
	for round := range 3 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKilledIngestLeavesUsableCollection$")
		cmd.Env = append(os.Environ(), "RAG_KILL_CHILD_DIR="+dir)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// The child's progress shows only in its file: check it again and again.
		if !testutil.Poll(30*time.Second, func() bool {
			b, _ := os.ReadFile(filepath.Join(dir, "gen"))
			return len(b) > 0 && string(b) != "0"
		}) {
			cmd.Process.Kill()
			t.Fatal("child made no progress")
		}
		// Kill it at an arbitrary moment inside a later ingest (a different one each round), its
		// final write included: a wait on purpose, since a signal from the child could only come
		// from the places that send one, and the point is a kill anywhere.
		time.Sleep(time.Duration(37*(round+1)) * time.Millisecond)
		cmd.Process.Kill()
		cmd.Wait()
		os.WriteFile(filepath.Join(dir, "gen"), []byte("0"), 0o644)

		store, err := OpenEmbedded(filepath.Join(dir, "store"))
		if err != nil {
			t.Fatal(err)
		}
		hits, err := NewEngine(store, nil).Query(context.Background(), "k", "generation padding", 100, LexicalOnly)
		if err != nil {
			t.Fatalf("round %d: collection unusable after kill: %v", round, err)
		}
		infos, _ := store.Collections(context.Background())
		if len(infos) != 1 || infos[0].Sources != 200 {
			t.Fatalf("round %d: %+v", round, infos)
		}
		for _, h := range hits {
			if !strings.Contains(h.Content, "generation") {
				t.Fatalf("round %d: damaged chunk %+v", round, h)
			}
		}
		ents, _ := os.ReadDir(filepath.Join(dir, "store", "k"))
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".tmp") {
				t.Errorf("round %d: temporary file left after reopen: %s", round, e.Name())
			}
		}
	}
}

// wsOf writes fsys into a fresh temporary directory and opens it as the workspace to ingest.
func wsOf(t testing.TB, fsys fs.FS) *workspace.Root {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, fsys); err != nil {
		t.Fatal(err)
	}
	return openWS(t, dir)
}

// openWS opens dir as a workspace, closed when the test ends.
func openWS(t testing.TB, dir string) *workspace.Root {
	t.Helper()
	ws, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return ws
}
