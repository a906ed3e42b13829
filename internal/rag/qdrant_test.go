package rag

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/switchboard-hub/switchboard/internal/rag/qdrantsim"
)

// The Qdrant backend is the real go-client talking gRPC to qdrantsim, an in-process server that
// implements the service interfaces generated in the go-client module (Qdrant itself cannot run
// on these machines).
func TestQdrantBackend(t *testing.T) {
	sim, err := qdrantsim.Start("secret-key")
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	q, err := NewQdrant("http://"+sim.Addr, "secret-key")
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if v, err := q.Health(ctx); err != nil || v == "" {
		t.Fatalf("health: %q %v", v, err)
	}
	eng := NewEngine(q, Offline{})
	fsys := fstest.MapFS{
		"docs/install.md": {Data: []byte("# Install\n\nDownload the tarball and unpack it.\n\n## Linux\n\nUse the deb package.\n")},
		"docs/config.md":  {Data: []byte("# Configuration\n\nThe socket path is set with unix.path.\n")},
		"main.go":         {Data: []byte("package main\n\n// main starts the hub.\nfunc main() {}\n")},
	}
	res, err := eng.Ingest(ctx, wsOf(t, fsys), ".", IngestOptions{Collection: "docs"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Chunks != 5 || res.Files != 3 {
		t.Fatalf("ingest: %+v", res)
	}
	hits, err := eng.Query(ctx, "docs", "which key sets the socket path", 2, Hybrid)
	if err != nil || len(hits) != 2 {
		t.Fatalf("query: %v %+v", err, hits)
	}
	if h := hits[0]; h.Source != "docs/config.md" || h.Section != "Configuration" || h.Category != "markdown" || h.ChunkIndex != 0 || !strings.Contains(h.Content, "unix.path") || h.Score <= hits[1].Score || h.Score > 1.0001 {
		t.Errorf("top hit: %+v (second %+v)", h, hits[1])
	}
	infos, err := eng.Collections(ctx)
	if err != nil || len(infos) != 1 || infos[0].Points != 5 || infos[0].Status != "green" || infos[0].Meta.Embedder != "offline" || infos[0].Meta.Dim != OfflineDim {
		t.Fatalf("collections: %v %+v", err, infos)
	}
	// Unchanged: nothing written. Changed and deleted files are replaced and removed.
	res, err = eng.Ingest(ctx, wsOf(t, fsys), ".", IngestOptions{Collection: "docs"})
	if err != nil || res.Changed != 0 || res.Unchanged != 3 {
		t.Fatalf("re-ingest: %v %+v", err, res)
	}
	fsys["docs/config.md"] = &fstest.MapFile{Data: []byte("# Configuration\n\nThe TCP address is set with tcp.addr.\n")}
	delete(fsys, "main.go")
	res, err = eng.Ingest(ctx, wsOf(t, fsys), ".", IngestOptions{Collection: "docs"})
	if err != nil || res.Changed != 1 || res.Deleted != 1 {
		t.Fatalf("incremental: %v %+v", err, res)
	}
	srcs, _ := q.Sources(ctx, "docs")
	if len(srcs) != 2 || srcs["main.go"] != "" {
		t.Errorf("sources after delete: %v", srcs)
	}
	hits, _ = eng.Query(ctx, "docs", "socket path unix", 10, Hybrid)
	for _, h := range hits {
		if strings.Contains(h.Content, "unix.path") {
			t.Errorf("stale chunk still stored: %+v", h)
		}
	}
	// Another embedder is refused; recreate rebuilds.
	srv := ollamaServer(t, 16)
	other := NewEngine(q, NewOllama(srv.URL, ""))
	if _, err := other.Query(ctx, "docs", "tarball", 1, Hybrid); !errors.As(err, new(*MismatchError)) {
		t.Fatalf("mismatch: %v", err)
	}
	if _, err := other.Ingest(ctx, wsOf(t, fsys), ".", IngestOptions{Collection: "docs", Recreate: true}); err != nil {
		t.Fatal(err)
	}
	if m, _, _ := q.Meta(ctx, "docs"); m.Embedder != "ollama" || m.Model != DefaultOllamaModel || m.Dim != 16 {
		t.Errorf("meta after recreate: %+v", m)
	}
	// Unknown collection names the existing ones.
	if _, err := eng.Query(ctx, "nope", "x", 1, Hybrid); err == nil || !strings.Contains(err.Error(), "existing collections: docs") {
		t.Errorf("unknown collection: %v", err)
	}
	// Wrong API key.
	bad, _ := NewQdrant(sim.Addr, "wrong")
	defer bad.Close()
	if _, err := bad.Collections(ctx); err == nil || !strings.Contains(err.Error(), "api_key") {
		t.Errorf("wrong key: %v", err)
	}
}

func TestQdrantUnreachable(t *testing.T) {
	q, err := NewQdrant("127.0.0.1:1", "")
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = NewEngine(q, nil).Query(ctx, "docs", "x", 1, Hybrid)
	var ue *UnreachableError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "qdrant at 127.0.0.1:1 is unreachable") || !strings.Contains(err.Error(), "switchboard doctor") {
		t.Errorf("unreachable: %v", err)
	}
}
