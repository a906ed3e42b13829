package tools

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/rag"
	"github.com/switchboard-hub/switchboard/internal/wshub"
	"github.com/switchboard-hub/switchboard/mcp/channel"
	"github.com/switchboard-hub/switchboard/mcp/tool"
)

// RAG tools (docs/tools.md, "RAG"): rag_query searches a collection with hybrid
// ranking, rag_ingest indexes workspace files incrementally, rag_collections lists collections.
// The domain code is internal/rag; the backend (embedded store or Qdrant) and embedder come from
// the [rag] config section (app/stack.go).

// RAGQueryInput is rag_query's arguments, also taken by Service.RAGQuery for the dashboard.
type RAGQueryInput struct {
	Question   string `json:"question" jsonschema:"the natural-language question"`
	Collection string `json:"collection,omitempty" jsonschema:"collection to search; default hostuk-docs (or [rag] collection in the config)"`
	TopK       int    `json:"topK,omitempty" jsonschema:"number of results to return; default 5, at most 100"`
}

// RAGIngestInput is rag_ingest's arguments: a file or directory of the workspace to index into a
// collection.
type RAGIngestInput struct {
	Path       string `json:"path" jsonschema:"file or directory to ingest, relative to the workspace" workspace:"path"`
	Collection string `json:"collection,omitempty" jsonschema:"target collection; default hostuk-docs (or [rag] collection in the config)"`
	Recreate   bool   `json:"recreate,omitempty" jsonschema:"drop the collection's existing content first and rebuild it (also the fix when the collection was built with another embedder)"`
}

// RAGIngestOutput is rag_ingest's result.
type RAGIngestOutput struct {
	Success    bool   `json:"success" jsonschema:"whether ingestion succeeded"`
	Path       string `json:"path" jsonschema:"the path, echoed"`
	Collection string `json:"collection" jsonschema:"collection written"`
	Chunks     int    `json:"chunks" jsonschema:"chunks now indexed for the path (for a directory: all its files, unchanged ones included)"`
	Message    string `json:"message" jsonschema:"summary: files indexed, unchanged and removed, and what was skipped (binaries, .gitignore'd paths, files over the size cap)"`
}

// RAGCollectionsInput is rag_collections' arguments.
type RAGCollectionsInput struct {
	ShowStats bool `json:"show_stats,omitempty" jsonschema:"include point counts, status, backend and embedder of each collection"`
}

// RAGTools are rag_query, rag_ingest and rag_collections (WithRAG). Each call acquires the
// engine in force for its own length (rag.Live): one running when [rag] is switched finishes on
// the engine it started on.
type RAGTools struct {
	Workspaces
	rag     *rag.Live
	ragFeed *RAGFeed
}

// NewRAGTools is the RAG tools' dependencies: the engine in force (l) and the feed that
// mirrors ingests for the dashboard.
func NewRAGTools(w Workspaces, l *rag.Live, feed *RAGFeed) *RAGTools {
	return &RAGTools{Workspaces: w, rag: l, ragFeed: feed}
}

// RAGQuery runs rag_query for the dashboard, without a client call (an error without RAG).
func RAGQuery(ctx context.Context, l *rag.Live, in RAGQueryInput) (RAGQueryOutput, error) {
	return (&RAGTools{rag: l}).query(ctx, in)
}

// RAGCollections runs rag_collections for the dashboard, without a client call.
func RAGCollections(ctx context.Context, l *rag.Live, stats bool) (RAGCollectionsOutput, error) {
	return (&RAGTools{rag: l}).collections(ctx, stats)
}

// WireRAGFeed publishes ingest progress on the hub's "rag" channel, and a new snapshot when the
// engine in force is switched (the Knowledge view shows the new backend and reloads its list).
func WireRAGFeed(h *wshub.Hub, l *rag.Live, feed *RAGFeed) {
	feed.mu.Lock()
	feed.publish = func(p RAGIngestProgress) { h.Publish(channel.RAG, wshub.TypeEvent, p) }
	feed.mu.Unlock()
	snapshot := func(i rag.Info) RAGFeedSnapshot {
		return RAGFeedSnapshot{Backend: i.Backend, Location: i.Location, Embedder: i.Embedder, Model: i.Model, Ingests: feed.Ingests()}
	}
	h.SetSnapshotProvider(channel.RAG, func(string) (any, bool) { return snapshot(l.Info()), true })
	l.OnChange(func(i rag.Info) { h.Publish(channel.RAG, wshub.TypeSnapshot, snapshot(i)) }) // ends with the Live, closed on Shutdown
}

// engine acquires the engine in force for one call; release must be called when it ends.
func (g *RAGTools) engine() (*rag.Engine, func(), error) {
	if g.rag == nil {
		return nil, nil, errNoRAG
	}
	return g.rag.Acquire()
}

// RAGGroup declares the group's tools (toolset rag) as values that need no hub;
// NewRAGTools builds the dependencies they are bound to.
func RAGGroup() tool.Group {
	return tool.NewGroup("rag",
		tool.Func(sdk.Tool{Name: "rag_query", Annotations: tool.ReadOnly("Search documentation"),
			Description: "Search a RAG collection for chunks relevant to a natural-language question. Hybrid ranking: BM25 over " +
				"code-aware terms fused with vector similarity. Returns the chunks (source, section, score) and a context block ready for a prompt."}, (*RAGTools).ragQuery),
		tool.Func(sdk.Tool{Name: "rag_ingest", Annotations: tool.Write("Ingest documents", true, true),
			Description: "Index a workspace file or directory into a RAG collection. Markdown is split by headings, Go by declarations, " +
				"other text by blank-line blocks. Incremental: unchanged files are skipped, changed ones replaced, deleted ones removed; " +
				"it takes the files file_grep searches (no paths excluded by .gitignore, .ignore or .git/info/exclude, no hidden names, no symlinks), " +
				"without binaries and files over 1 MiB. recreate=true rebuilds the collection. Sends progress notifications."}, (*RAGTools).ragIngest),
		tool.Func(sdk.Tool{Name: "rag_collections", Annotations: tool.ReadOnly("List collections"),
			Description: "List RAG collections; with show_stats, their chunk counts, status, backend and embedder."}, (*RAGTools).ragCollections),
	)
}

func ragCollection(eng *rag.Engine, name string) string {
	if name != "" {
		return name
	}
	if eng.DefaultCollection != "" {
		return eng.DefaultCollection
	}
	return rag.DefaultCollection
}

func (g *RAGTools) ragQuery(ctx context.Context, _ *sdk.CallToolRequest, in RAGQueryInput) (*sdk.CallToolResult, RAGQueryOutput, error) {
	out, err := g.query(ctx, in)
	return nil, out, err
}

// query is rag_query's logic; the dashboard's query box runs it too (Service.RAGQuery).
func (g *RAGTools) query(ctx context.Context, in RAGQueryInput) (RAGQueryOutput, error) {
	eng, release, err := g.engine()
	if err != nil {
		return RAGQueryOutput{}, err
	}
	defer release()
	if in.TopK < 0 || in.TopK > 100 {
		return RAGQueryOutput{}, fmt.Errorf("topK: %d is out of range; use 1 to 100 (default 5)", in.TopK)
	}
	coll := ragCollection(eng, in.Collection)
	hits, err := eng.Query(ctx, coll, in.Question, in.TopK, rag.Hybrid)
	if err != nil {
		return RAGQueryOutput{}, err
	}
	out := RAGQueryOutput{Results: make([]RAGQueryResult, len(hits)), Query: in.Question, Collection: coll, Context: rag.FormatContext(hits)}
	for i, h := range hits {
		out.Results[i] = RAGQueryResult{Content: h.Content, Source: h.Source, Section: h.Section, Category: h.Category, ChunkIndex: h.ChunkIndex, Score: h.Score}
	}
	return out, nil
}

var errNoRAG = fmt.Errorf("rag: no RAG backend is configured on this server; see [rag] in docs/development.md and run `switchboard doctor`")

func (g *RAGTools) ragIngest(ctx context.Context, req *sdk.CallToolRequest, in RAGIngestInput) (*sdk.CallToolResult, RAGIngestOutput, error) {
	eng, release, err := g.engine()
	if err != nil {
		return nil, RAGIngestOutput{}, err
	}
	defer release()
	if err := requirePath("path", in.Path); err != nil {
		return nil, RAGIngestOutput{}, err
	}
	ws, err := g.WorkspaceFor(ctx, req)
	if err != nil {
		return nil, RAGIngestOutput{}, err
	}
	abs, err := ws.Resolve(in.Path)
	if err != nil {
		return nil, RAGIngestOutput{}, fmt.Errorf("path: %w", err)
	}
	rel, err := filepath.Rel(ws.Dir(), abs)
	if err != nil {
		return nil, RAGIngestOutput{}, fmt.Errorf("path: %w", err)
	}
	coll := ragCollection(eng, in.Collection)
	var token any
	if req != nil && req.Params != nil {
		token = req.Params.GetProgressToken()
	}
	var notifyMu sync.Mutex
	res, err := eng.Ingest(ctx, ws, filepath.ToSlash(rel), rag.IngestOptions{
		Collection: coll, Recreate: in.Recreate, ProgressEvery: 500 * time.Millisecond, Skip: g.WalkSkip(req, ws),
		Progress: func(p rag.Progress) {
			g.ragFeed.update(p)
			if token == nil || req.Session == nil {
				return
			}
			notifyMu.Lock()
			defer notifyMu.Unlock()
			msg := p.Message
			if msg == "" {
				msg = fmt.Sprintf("%d of %d files, %d chunks", p.Files, p.Total, p.Chunks)
			}
			_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token, Progress: float64(p.Files), Total: float64(p.Total), Message: msg})
		},
	})
	if err != nil {
		g.ragFeed.fail(coll, in.Path, err)
		return nil, RAGIngestOutput{}, err
	}
	return nil, RAGIngestOutput{Success: true, Path: in.Path, Collection: coll, Chunks: res.Total, Message: res.Message}, nil
}

func (g *RAGTools) ragCollections(ctx context.Context, _ *sdk.CallToolRequest, in RAGCollectionsInput) (*sdk.CallToolResult, RAGCollectionsOutput, error) {
	out, err := g.collections(ctx, in.ShowStats)
	return nil, out, err
}

// collections lists collections (the dashboard's Knowledge view asks with stats).
func (g *RAGTools) collections(ctx context.Context, stats bool) (RAGCollectionsOutput, error) {
	eng, release, err := g.engine()
	if err != nil {
		return RAGCollectionsOutput{}, err
	}
	defer release()
	infos, err := eng.Collections(ctx)
	if err != nil {
		return RAGCollectionsOutput{}, err
	}
	out := RAGCollectionsOutput{Collections: make([]RAGCollectionInfo, len(infos))}
	for i, c := range infos {
		ci := RAGCollectionInfo{Name: c.Name}
		if stats {
			ci.PointsCount, ci.Status, ci.Backend = c.Points, c.Status, eng.Backend.Kind()
			ci.Embedder, ci.Model, ci.Dimension = c.Meta.Embedder, c.Meta.Model, c.Meta.Dim
		}
		out.Collections[i] = ci
	}
	return out, nil
}

// RAGFeed mirrors running and recent ingests for the hub's "rag" channel.
type RAGFeed struct {
	mu      sync.Mutex
	ingests map[string]RAGIngestProgress // by collection
	publish func(RAGIngestProgress)
}

func (f *RAGFeed) set(p RAGIngestProgress) {
	if f == nil {
		return
	}
	f.mu.Lock()
	if f.ingests == nil {
		f.ingests = map[string]RAGIngestProgress{}
	}
	f.ingests[p.Collection] = p
	pub := f.publish
	f.mu.Unlock()
	if pub != nil {
		pub(p)
	}
}

func (f *RAGFeed) update(p rag.Progress) {
	f.set(RAGIngestProgress{Collection: p.Collection, Path: p.Path, Files: p.Files, Total: p.Total, Changed: p.Changed,
		Chunks: p.Chunks, Running: !p.Done, Message: p.Message, Updated: time.Now().UTC()})
}

func (f *RAGFeed) fail(coll, path string, err error) {
	if f == nil {
		return
	}
	f.mu.Lock()
	p := f.ingests[coll]
	f.mu.Unlock()
	p.Collection, p.Path, p.Running, p.Error, p.Updated = coll, path, false, err.Error(), time.Now().UTC()
	f.set(p)
}

// Ingests is every running and recent ingest, as the "rag" channel's snapshot lists them.
func (f *RAGFeed) Ingests() []RAGIngestProgress {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]RAGIngestProgress, 0, len(f.ingests))
	for _, p := range f.ingests {
		out = append(out, p)
	}
	return out
}
