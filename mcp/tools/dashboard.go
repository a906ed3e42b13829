package tools

import (
	"time"

	"github.com/switchboard-hub/switchboard/internal/notes"
)

// The tool groups' results and feeds that travel to the dashboard as well (hub channels "rag",
// "ml", "todos" and "code", and the Knowledge view's controls), kept in a file of their own: the
// dashboard's TypeScript types are generated from this file (build/tygo.yaml, `make types`).

// RAGCollectionInfo is one collection in rag_collections' result; the details beyond the name come
// only with show_stats.
type RAGCollectionInfo struct {
	Name        string `json:"name" jsonschema:"collection name"`
	PointsCount uint64 `json:"points_count,omitempty" jsonschema:"chunks (vectors) stored; only with show_stats"`
	Status      string `json:"status,omitempty" jsonschema:"green when usable; only with show_stats"`
	Backend     string `json:"backend,omitempty" jsonschema:"embedded or qdrant; only with show_stats"`
	Embedder    string `json:"embedder,omitempty" jsonschema:"embedder the collection was built with (offline, ollama, openai); only with show_stats"`
	Model       string `json:"model,omitempty" jsonschema:"embedding model; only with show_stats"`
	Dimension   int    `json:"dimension,omitempty" jsonschema:"vector dimension; only with show_stats"`
}

// RAGCollectionsOutput is rag_collections' result, also returned to the dashboard by
// Controller.RAGCollections.
type RAGCollectionsOutput struct {
	Collections []RAGCollectionInfo `json:"collections" jsonschema:"collections, sorted by name"`
}

// RAGQueryResult is one matching chunk in rag_query's result.
type RAGQueryResult struct {
	Content    string  `json:"content" jsonschema:"the chunk text"`
	Source     string  `json:"source" jsonschema:"source file, relative to the workspace"`
	Section    string  `json:"section,omitempty" jsonschema:"section within the source: markdown heading path or Go declaration, if any"`
	Category   string  `json:"category,omitempty" jsonschema:"kind of source: markdown, go or text"`
	ChunkIndex int     `json:"chunkIndex" jsonschema:"position of the chunk within its source, from 0"`
	Score      float32 `json:"score" jsonschema:"relevance, descending: the fused hybrid score in (0,1] (BM25 and cosine similarity by reciprocal rank fusion; 1 = ranked first by both); cosine similarity on the qdrant backend"`
}

// RAGQueryOutput is rag_query's result: the best chunks and the same formatted as prompt context.
// The dashboard's search (Controller.RAGQuery) returns it too.
type RAGQueryOutput struct {
	Results    []RAGQueryResult `json:"results" jsonschema:"matching chunks, best first"`
	Query      string           `json:"query" jsonschema:"the question, echoed"`
	Collection string           `json:"collection" jsonschema:"collection searched"`
	Context    string           `json:"context" jsonschema:"the results formatted for direct use in a prompt"`
}

// RAGIngestProgress is the payload of the "rag" hub channel (one ingest's state).
type RAGIngestProgress struct {
	Collection string    `json:"collection"`
	Path       string    `json:"path"`
	Files      int       `json:"files"`
	Total      int       `json:"total"`
	Changed    int       `json:"changed"`
	Chunks     int       `json:"chunks"`
	Running    bool      `json:"running"`
	Error      string    `json:"error,omitempty"`
	Message    string    `json:"message,omitempty"`
	Updated    time.Time `json:"updated"`
}

// RAGFeedSnapshot is the "rag" channel's snapshot, sent again when [rag] is switched.
type RAGFeedSnapshot struct {
	Backend string `json:"backend"`
	// Location is the embedded store's directory or the Qdrant server's address.
	Location string              `json:"location"`
	Embedder string              `json:"embedder"`
	Model    string              `json:"model"`
	Ingests  []RAGIngestProgress `json:"ingests"`
}

// MLBackendInfo is one inference backend and the outcome of its live check, in ml_backends' result
// and on hub channel "ml".
type MLBackendInfo struct {
	Name      string `json:"name" jsonschema:"backend identifier"`
	Available bool   `json:"available" jsonschema:"whether the backend answered its live check"`
	Kind      string `json:"kind" jsonschema:"protocol: ollama or openai"`
	URL       string `json:"url" jsonschema:"server URL"`
	Model     string `json:"model,omitempty" jsonschema:"configured model, if any"`
	Error     string `json:"error,omitempty" jsonschema:"why the live check failed"`
	Assumed   bool   `json:"assumed,omitempty" jsonschema:"true when nobody set this backend up and the hub only tries the usual local address: unavailable means not set up, not broken"`
}

// MLBackendsOutput is ml_backends' result; the same list is published on hub channel "ml" for the
// dashboard whenever it changes.
type MLBackendsOutput struct {
	Backends []MLBackendInfo `json:"backends" jsonschema:"all registered backends"`
	Default  string          `json:"default" jsonschema:"name of the default backend"`
}

// TodosSnapshot is the "todos" hub channel's snapshot: every session's list.
type TodosSnapshot struct {
	Lists []notes.TodoList `json:"lists"`
}

// CodeDiagnostic is one problem a language server reports, in code_diagnostics' result, in the
// writing tools' results (the problems an edit introduced) and on hub channel "code".
type CodeDiagnostic struct {
	Path     string `json:"path" jsonschema:"file relative to the workspace"`
	Line     int    `json:"line" jsonschema:"1-based line"`
	Column   int    `json:"column" jsonschema:"1-based column in UTF-8 bytes"`
	Severity string `json:"severity" jsonschema:"error, warning, information or hint"`
	Message  string `json:"message" jsonschema:"what is wrong"`
	Source   string `json:"source,omitempty" jsonschema:"the checker that reported it (compiler, a linter)"`
}

// ProjectFailure is one failing test or compiler or linter error in project_run's output.
type ProjectFailure struct {
	Path    string `json:"path" jsonschema:"file relative to the workspace; empty when unknown"`
	Line    int    `json:"line" jsonschema:"1-based line; 0 when unknown"`
	Test    string `json:"test" jsonschema:"the failing test's name; empty for build and lint errors"`
	Message string `json:"message" jsonschema:"the failure's message"`
}

// ProjectRunSummary is one project_run result as the Code view lists it (hub channel "code").
type ProjectRunSummary struct {
	Workspace string           `json:"workspace"`
	Action    string           `json:"action"`
	Command   string           `json:"command"`
	Source    string           `json:"source"`
	Process   string           `json:"process"`
	Success   bool             `json:"success"`
	ExitCode  int              `json:"exitCode"`
	Duration  time.Duration    `json:"duration"`
	TimedOut  bool             `json:"timedOut,omitempty"`
	Finished  time.Time        `json:"finished"`
	Failures  []ProjectFailure `json:"failures"`
	Output    string           `json:"output"` // its last 2 KiB
}

// CodeServer is one language server of the pool as the Code view shows it.
type CodeServer struct {
	Workspace string `json:"workspace"`
	Language  string `json:"language"`
	Command   string `json:"command"`
	// State: starting, ready, busy (indexing), ended (crashed or failed; started again at the
	// next call).
	State       string    `json:"state"`
	PID         int       `json:"pid,omitempty"`
	Server      string    `json:"server,omitempty"`
	StartedAt   time.Time `json:"startedAt,omitzero"`
	LastUsed    time.Time `json:"lastUsed"`
	Restarts    int       `json:"restarts"`
	MemoryBytes int64     `json:"memoryBytes"`
	OpenFiles   int       `json:"openFiles"`
	Sandbox     string    `json:"sandbox"`
	LastError   string    `json:"lastError,omitempty"`
}

// CodeFileDiagnostics are one file's current diagnostics from a running server.
type CodeFileDiagnostics struct {
	Workspace   string           `json:"workspace"`
	Language    string           `json:"language"`
	Path        string           `json:"path"`
	Diagnostics []CodeDiagnostic `json:"diagnostics"`
}

// CodeFeed is the "code" hub channel's payload (snapshot and events): the language servers per
// workspace, the diagnostics they report now per file, and the last project_run results.
type CodeFeed struct {
	Servers []CodeServer          `json:"servers"`
	Files   []CodeFileDiagnostics `json:"files"`
	Runs    []ProjectRunSummary   `json:"runs"`
}
