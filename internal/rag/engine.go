// Package rag is Switchboard's retrieval: chunking, embedders (offline, Ollama, OpenAI-compatible),
// an embedded on-disk vector + BM25 store (default) and a Qdrant backend, hybrid ranking, and
// incremental ingestion of workspace files. It has no MCP imports.
package rag

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/switchboard-hub/switchboard/internal/search"
	"github.com/switchboard-hub/switchboard/internal/workspace"
)

// DefaultCollection is the default collection name (docs/tools.md).
const DefaultCollection = "hostuk-docs"

// DefaultMaxFileBytes is the default size limit of ingestion: larger files are skipped.
const DefaultMaxFileBytes = 1 << 20

// Meta is what a collection records about how its vectors were made.
type Meta struct {
	Embedder string    `json:"embedder"`
	Model    string    `json:"model"`
	Dim      int       `json:"dim"`
	Created  time.Time `json:"created"`
}

// CollectionInfo describes one collection.
type CollectionInfo struct {
	Name    string
	Points  uint64 // chunks (vectors) stored
	Sources int    // sources (files), when the backend knows
	Status  string // "green" when usable
	Meta    Meta
}

// SourceDoc is one source's replacement content: all its chunks with their vectors.
type SourceDoc struct {
	Source  string
	Hash    string
	Chunks  []Chunk
	Vectors [][]float32

	terms [][]termFreq // BM25 terms per chunk when ingest computed them (offline embedder), numbered in dict
	dict  *termDict
}

// Query is a search request to a backend.
type Query struct {
	Text   string
	Terms  []string // tokenized Text (for lexical ranking)
	Vector []float32
	TopK   int
	Mode   Mode
}

// Backend stores collections. Implementations: Embedded (default) and Qdrant.
type Backend interface {
	Kind() string     // "embedded" or "qdrant"
	Location() string // directory or URL, for messages
	Collections(ctx context.Context) ([]CollectionInfo, error)
	Meta(ctx context.Context, name string) (Meta, bool, error)
	Sources(ctx context.Context, name string) (map[string]string, error)
	// Commit applies upserts and deletes as one unit; recreate drops all other content first.
	Commit(ctx context.Context, name string, meta Meta, recreate bool, upserts []SourceDoc, deletes []string) error
	Search(ctx context.Context, name string, q Query) ([]Hit, error)
	Drop(ctx context.Context, name string) error
	Close() error
}

// stagedCommitter is implemented by backends that can commit durably without refreshing their
// query index (Embedded); ingest uses it for intermediate batches and publishes once at the end.
type stagedCommitter interface {
	CommitStaged(ctx context.Context, name string, meta Meta, recreate bool, upserts []SourceDoc, deletes []string) error
	Publish(name string)
}

// termNumberer is implemented by backends that number BM25 terms in a per-collection dictionary
// (Embedded): ingest workers using the offline embedder number the terms they compute there.
type termNumberer interface {
	termDict(collection string) *termDict
}

// Engine ties an embedder to a backend.
type Engine struct {
	Backend      Backend
	Embedder     Embedder
	MaxFileBytes int64 // default DefaultMaxFileBytes
	// DefaultCollection is used when a call names none (default DefaultCollection).
	DefaultCollection string

	// ingests is shared by the engines on one backend (Live): an ingest that started before a
	// switch and one that starts after it do not write the same collection at once.
	ingests *ingestGuard
}

// ingestGuard lets one ingest run per collection.
type ingestGuard struct {
	mu     sync.Mutex
	active map[string]bool // collections with an ingest running
}

// begin marks coll as being ingested, or refuses when an ingest into it is already running.
func (g *ingestGuard) begin(coll string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.active[coll] {
		return fmt.Errorf("collection: an ingest into %q is already running; wait for it to finish", coll)
	}
	g.active[coll] = true
	return nil
}

func (g *ingestGuard) end(coll string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.active, coll)
}

// NewEngine returns an engine; a nil embedder means the offline one.
func NewEngine(b Backend, e Embedder) *Engine {
	if e == nil {
		e = Offline{}
	}
	return &Engine{Backend: b, Embedder: e, DefaultCollection: DefaultCollection, ingests: &ingestGuard{active: map[string]bool{}}}
}

var collectionRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// ValidateCollection checks a collection name (it becomes a directory name).
func ValidateCollection(name string) error {
	if !collectionRE.MatchString(name) {
		return fmt.Errorf("collection: %q is not a valid name; use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit", name)
	}
	return nil
}

// UnknownCollectionError names the collections that do exist.
type UnknownCollectionError struct {
	Name     string
	Existing []string
}

// Error lists the existing collections, or says to ingest first when there are none.
func (e *UnknownCollectionError) Error() string {
	if len(e.Existing) == 0 {
		return fmt.Sprintf("collection: %q does not exist and there are no collections yet; ingest documents with rag_ingest first", e.Name)
	}
	return fmt.Sprintf("collection: %q does not exist; existing collections: %s", e.Name, strings.Join(e.Existing, ", "))
}

// MismatchError is returned when a collection was built with another embedder or model.
type MismatchError struct {
	Collection string
	Have, Want Meta
}

// Error names both embedders and how to resolve the mismatch: rebuild, or configure to match.
func (e *MismatchError) Error() string {
	return fmt.Sprintf("collection: %q was built with embedder %s (model %s, %d dimensions) but this server embeds with %s (model %s, %d dimensions); "+
		"re-ingest with recreate=true to rebuild it with %s, or configure [rag] embedder/model to match",
		e.Collection, e.Have.Embedder, e.Have.Model, e.Have.Dim, e.Want.Embedder, e.Want.Model, e.Want.Dim, e.Want.Embedder)
}

func (e *Engine) wantMeta(dim int) Meta {
	return Meta{Embedder: e.Embedder.Name(), Model: e.Embedder.Model(), Dim: dim}
}

func compatible(have, want Meta) bool {
	return have.Embedder == want.Embedder && have.Model == want.Model && (want.Dim == 0 || have.Dim == want.Dim)
}

func (e *Engine) unknown(ctx context.Context, name string) error {
	infos, err := e.Backend.Collections(ctx)
	if err != nil {
		return err
	}
	var names []string
	for _, c := range infos {
		names = append(names, c.Name)
	}
	sort.Strings(names)
	return &UnknownCollectionError{Name: name, Existing: names}
}

// Query searches a collection.
func (e *Engine) Query(ctx context.Context, collection, question string, topK int, mode Mode) ([]Hit, error) {
	if strings.TrimSpace(question) == "" {
		return nil, errors.New("question: is empty; ask a natural-language question, e.g. \"how do I configure the socket path?\"")
	}
	if err := ValidateCollection(collection); err != nil {
		return nil, err
	}
	if topK <= 0 {
		topK = 5
	}
	meta, ok, err := e.Backend.Meta(ctx, collection)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, e.unknown(ctx, collection)
	}
	if want := e.wantMeta(e.Embedder.Dim()); !compatible(meta, want) {
		return nil, &MismatchError{Collection: collection, Have: meta, Want: want}
	}
	q := Query{Text: question, Terms: tokenize(nil, question), TopK: topK, Mode: mode}
	if mode != LexicalOnly {
		vecs, err := e.Embedder.Embed(ctx, []string{question})
		if err != nil {
			return nil, err
		}
		if len(vecs) != 1 || len(vecs[0]) != meta.Dim {
			return nil, fmt.Errorf("embedder %s returned a vector of %d dimensions; collection %q has %d", e.Embedder.Name(), len(vecs[0]), collection, meta.Dim)
		}
		q.Vector = vecs[0]
	}
	return e.Backend.Search(ctx, collection, q)
}

// Progress reports a running ingest.
type Progress struct {
	Collection string
	Path       string
	Files      int // files looked at so far
	Total      int // files to look at
	Changed    int // files (re)indexed so far
	Chunks     int // chunks written so far
	Done       bool
	Message    string
}

// IngestOptions tune one ingest.
type IngestOptions struct {
	Collection string
	Recreate   bool
	Progress   func(Progress) // called at most every ProgressEvery and at the end
	// ProgressEvery throttles Progress (default 500 ms).
	ProgressEvery time.Duration
	// Skip leaves out more entries (search.WalkOptions.Skip: slash paths relative to the
	// workspace root): the paths the policy denies. Nil leaves out nothing more.
	Skip func(rel string, isDir bool) bool
}

// IngestResult summarises an ingest.
type IngestResult struct {
	Files     int      // text files seen
	Changed   int      // files (re)indexed
	Unchanged int      // files skipped because their content hash matched
	Deleted   int      // sources removed because their file is gone
	Chunks    int      // chunks written for changed files
	Total     int      // chunks in the collection's sources under the path after the ingest
	Skipped   []string // "path (reason)"; binaries, ignored, too large
	Message   string
}

// batchBytes bounds the content held in memory between commits.
var batchBytes = 32 << 20 // a variable so tests can force many batches

// Ingest indexes a file or directory of ws (rel, slash-separated, relative to ws's root).
// Directory ingests take the files file_grep and file_glob search (search.Walk: .gitignore,
// .ignore and .git/info/exclude from the root down, no hidden names, no symlinks, no special
// files), leaving out opts.Skip's entries, binaries and files over MaxFileBytes;
// they reuse unchanged sources (by SHA-256 of their content) and remove sources whose
// files are gone. Work is committed in batches; each commit is atomic, so a cancelled or killed
// ingest leaves every source with its old or its new content.
func (e *Engine) Ingest(ctx context.Context, ws *workspace.Root, rel string, opts IngestOptions) (IngestResult, error) {
	var res IngestResult
	coll := opts.Collection
	if err := ValidateCollection(coll); err != nil {
		return res, err
	}
	if err := e.ingests.begin(coll); err != nil {
		return res, err
	}
	defer e.ingests.end(coll)

	rel = path.Clean(strings.TrimPrefix(rel, "./"))
	fsys := ws.FS()
	if opts.Skip != nil {
		fsys = ws.FilteredFS(opts.Skip)
	}
	st, err := fs.Stat(fsys, rel)
	if err != nil {
		return res, fmt.Errorf("path: %w", err)
	}
	meta, exists, err := e.Backend.Meta(ctx, coll)
	if err != nil {
		return res, err
	}
	if exists && !opts.Recreate && !compatible(meta, e.wantMeta(e.Embedder.Dim())) {
		return res, &MismatchError{Collection: coll, Have: meta, Want: e.wantMeta(e.Embedder.Dim())}
	}
	known := map[string]string{}
	if exists && !opts.Recreate {
		if known, err = e.Backend.Sources(ctx, coll); err != nil {
			return res, err
		}
	}

	// Collect candidate files.
	var files []string
	maxBytes := e.MaxFileBytes
	if maxBytes <= 0 {
		maxBytes = DefaultMaxFileBytes
	}
	skip := func(p, why string) { res.Skipped = append(res.Skipped, p+" ("+why+")") }
	if !st.IsDir() {
		if !st.Mode().IsRegular() {
			// Named directly, a FIFO, socket or device is an error; a directory walk below
			// skips them. (scan checks the opened handle again: this stat is by name.)
			return res, fmt.Errorf("path: %w", workspace.NotRegular("ingest", rel, st.Mode()))
		}
		if st.Size() > maxBytes {
			return res, fmt.Errorf("path: %s is %d bytes, over the %d-byte limit for ingestion; split it or ingest a smaller file", rel, st.Size(), maxBytes)
		}
		files = []string{rel}
	} else if files, err = collect(ctx, ws, rel, opts.Skip, maxBytes, skip); err != nil {
		if ctx.Err() != nil {
			return res, cancelled(0, len(files), ctx.Err())
		}
		return res, err
	}
	sort.Strings(files)

	meta = e.wantMeta(e.Embedder.Dim())
	recreate := opts.Recreate
	progress := Progress{Collection: coll, Path: rel, Total: len(files)}
	every := opts.ProgressEvery
	if every <= 0 {
		every = 500 * time.Millisecond
	}
	lastProgress := time.Now()
	report := func(force bool) {
		if opts.Progress != nil && (force || time.Since(lastProgress) >= every) {
			lastProgress = time.Now()
			opts.Progress(progress)
		}
	}
	report(true)

	// Pipeline: workers take the files in turn, each reading and hashing its file and chunking
	// and embedding it when it changed; results are committed in batches of about batchBytes.
	// (A single reader goroutine feeding the workers used to leave them waiting for files: on
	// two cores it was one runnable goroutine among four.)
	type done struct {
		doc   SourceDoc
		bytes int
		err   error
	}
	results := make(chan done, 64)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	workers := max(1, runtime.GOMAXPROCS(0))
	var dict *termDict // numbers the terms the offline embedder's workers compute
	if tn, ok := e.Backend.(termNumberer); ok {
		dict = tn.termDict(coll)
	}
	var next atomic.Int64 // the next file to take
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var ow *offlineWorker // the offline embedder's per-worker word cache
			if _, offline := e.Embedder.(Offline); offline {
				d := dict
				if d == nil { // the backend does its own lexical ranking: terms are not kept
					d = newTermDict()
				}
				ow = newOfflineWorker(d)
			}
			rd := sourceReader{buf: make([]byte, 64<<10), hash: sha256.New()}
			for wctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= len(files) {
					return
				}
				f := files[i]
				var r done
				var data, h string
				var sum []byte
				var err error
				old := known[f] // the stored hash; "" when the file is new or recreate drops it
				if opts.Recreate {
					old = ""
				}
				if old != "" { // probably unchanged: hash it first
					if sum, err = rd.hashOnly(fsys, f); err == nil {
						h = hex.EncodeToString(sum)
					}
				}
				if old == "" || (err == nil && h != old) { // new or changed: read it, keeping the text
					if data, sum, err = rd.read(fsys, f); err == nil {
						h = hex.EncodeToString(sum)
					}
				}
				switch {
				case errors.Is(err, errBinary):
					r = done{doc: SourceDoc{Source: f}, err: errSkip("binary")}
				case errors.Is(err, workspace.ErrNotRegular):
					r = done{doc: SourceDoc{Source: f}, err: errSkip("not a regular file")}
				case err != nil:
					r = done{doc: SourceDoc{Source: f}, err: errSkip("unreadable")}
				case old == h:
					r = done{doc: SourceDoc{Source: f, Hash: h}, err: errUnchanged}
				default:
					chunks := ChunkFile(f, data)
					var vecs [][]float32
					var terms [][]termFreq
					if ow != nil {
						vecs, terms, err = ow.embedAndTerms(wctx, chunks)
					} else {
						vecs, err = EmbedChunks(wctx, e.Embedder, chunks)
					}
					r = done{doc: SourceDoc{Source: f, Hash: h, Chunks: chunks, Vectors: vecs, terms: terms, dict: dict}, bytes: len(data), err: err}
				}
				select {
				case results <- r:
				case <-wctx.Done():
					return
				}
			}
		}()
	}
	seen := map[string]bool{}
	go func() { wg.Wait(); close(results) }()

	var batch []SourceDoc
	var batchSize int
	staged := false // a CommitStaged has not been published yet
	defer func() {
		if staged {
			e.Backend.(stagedCommitter).Publish(coll)
		}
	}()
	commit := func(batch []SourceDoc, final bool) error {
		var deletes []string
		if final && st.IsDir() {
			prefix := rel + "/"
			for s := range known {
				if (rel == "." || strings.HasPrefix(s, prefix)) && !seen[s] {
					deletes = append(deletes, s)
				}
			}
			sort.Strings(deletes)
			res.Deleted = len(deletes)
		}
		if len(batch) == 0 && len(deletes) == 0 && !(recreate || !exists) {
			return nil // nothing changed: write nothing
		}
		if meta.Dim == 0 { // embedders that learn their dimension from the first answer
			meta.Dim = e.Embedder.Dim()
		}
		if meta.Dim == 0 && exists {
			if m, ok, _ := e.Backend.Meta(ctx, coll); ok {
				meta.Dim = m.Dim
			}
		}
		var err error
		if sc, ok := e.Backend.(stagedCommitter); ok && !final {
			err = sc.CommitStaged(ctx, coll, meta, recreate, batch, deletes)
			staged = true
		} else {
			err = e.Backend.Commit(ctx, coll, meta, recreate, batch, deletes)
			staged = false
		}
		if err != nil {
			return err
		}
		recreate, exists = false, true
		return nil
	}
	// Intermediate batches are committed by their own goroutine, in order, while the next batch
	// is read, chunked and embedded (a commit's segment write and fsyncs used to stall the
	// pipeline). At most one batch waits for it.
	commitCh := make(chan []SourceDoc, 1)
	var commitErr error
	committerDone := make(chan struct{})
	go func() {
		defer close(committerDone)
		for b := range commitCh {
			if commitErr != nil {
				continue // drain
			}
			if err := commit(b, false); err != nil {
				commitErr = err
				cancel()
			}
		}
	}()
	var stopOnce sync.Once
	stopCommitter := func() error {
		stopOnce.Do(func() { close(commitCh); <-committerDone })
		return commitErr
	}
	defer func() { _ = stopCommitter() }() // before Publish (defers run last-in first-out); errors are read where they matter
	processed := 0
	for r := range results {
		processed++
		progress.Files = processed
		src := r.doc.Source
		switch {
		case errors.Is(r.err, errUnchanged):
			seen[src] = true
			res.Files++
			res.Unchanged++
		case r.err != nil && isSkip(r.err):
			skip(src, r.err.Error())
		case r.err != nil:
			cancel()
			for range results {
			}
			_ = stopCommitter() // the embedding error below is the one to report
			if ctx.Err() != nil {
				return res, cancelled(processed, len(files), ctx.Err())
			}
			return res, fmt.Errorf("embedding %s: %w", src, r.err)
		default:
			seen[src] = true
			res.Files++
			res.Changed++
			res.Chunks += len(r.doc.Chunks)
			progress.Changed++
			progress.Chunks += len(r.doc.Chunks)
			batch = append(batch, r.doc)
			batchSize += r.bytes
			if batchSize >= batchBytes {
				commitCh <- batch
				batch, batchSize = nil, 0
			}
		}
		report(false)
	}
	if err := stopCommitter(); err != nil {
		if ctx.Err() != nil { // the commit saw the cancellation first
			return res, cancelled(processed, len(files), ctx.Err())
		}
		return res, err
	}
	if err := ctx.Err(); err != nil {
		return res, cancelled(processed, len(files), err)
	}
	if err := commit(batch, true); err != nil {
		if ctx.Err() != nil {
			return res, cancelled(processed, len(files), ctx.Err())
		}
		return res, err
	}
	// Chunks now stored for the sources under the path.
	res.Total = res.Chunks
	if res.Unchanged > 0 {
		if n, err := e.chunkCount(ctx, coll, seen); err == nil {
			res.Total = n
		}
	}
	res.Message = ingestMessage(rel, coll, st.IsDir(), res)
	progress.Done, progress.Message = true, res.Message
	report(true)
	return res, nil
}

// collect lists the files a directory ingest of rel takes, sorted: the files search.Walk visits
// (the same as file_grep's and file_glob's), regular and at most maxBytes long. What it leaves
// out for a reason worth telling goes to skip.
func collect(ctx context.Context, ws *workspace.Root, rel string, filter func(string, bool) bool, maxBytes int64, skip func(p, why string)) ([]string, error) {
	root, err := ws.OpenWalkRoot(rel)
	if err != nil {
		return nil, fmt.Errorf("path: %w", err)
	}
	defer root.Close()
	join := func(p string) string {
		if rel == "." {
			return p
		}
		return rel + "/" + p
	}
	opts := search.WalkOptions{Skip: filter, Omitted: func(p string, isDir bool, why string) {
		if isDir {
			p += "/"
		}
		skip(join(p), why)
	}}
	opts.Base, opts.Parents = search.LoadParents(ws.FS(), rel)
	var files []string
	err = search.Walk(ctx, root, opts, func(p string, dir *os.Root, name string, isDir bool) error {
		if isDir {
			return nil
		}
		info, err := dir.Lstat(name)
		switch {
		case err != nil:
			skip(join(p), "unreadable")
		case !info.Mode().IsRegular():
			// swapped since it was listed; scan checks the opened handle again anyway
		case info.Size() > maxBytes:
			skip(join(p), fmt.Sprintf("%d bytes, over the %d-byte cap", info.Size(), maxBytes))
		default:
			files = append(files, join(p))
		}
		return nil
	})
	return files, err
}

func cancelled(done, total int, err error) error {
	return fmt.Errorf("ingest cancelled after %d of %d files; sources committed so far are complete, the rest keep their previous content: %w", done, total, err)
}

// chunkCount counts stored chunks of the given sources (embedded backend only; others report
// the chunks written).
func (e *Engine) chunkCount(ctx context.Context, coll string, sources map[string]bool) (int, error) {
	type counter interface {
		ChunkCounts(ctx context.Context, name string) (map[string]int, error)
	}
	c, ok := e.Backend.(counter)
	if !ok {
		return 0, errors.New("unsupported")
	}
	m, err := c.ChunkCounts(ctx, coll)
	if err != nil {
		return 0, err
	}
	n := 0
	for s := range sources {
		n += m[s]
	}
	return n, nil
}

func ingestMessage(rel, coll string, dir bool, r IngestResult) string {
	var b strings.Builder
	if dir {
		fmt.Fprintf(&b, "Ingested %s into %q: %d files, %d chunks (%d files indexed, %d unchanged, %d removed).", rel, coll, r.Files, r.Total, r.Changed, r.Unchanged, r.Deleted)
	} else if r.Unchanged > 0 {
		fmt.Fprintf(&b, "%s is unchanged in %q (%d chunks); nothing written.", rel, coll, r.Total)
	} else {
		fmt.Fprintf(&b, "Ingested %s into %q: %d chunks.", rel, coll, r.Chunks)
	}
	if r.Changed == 0 && r.Deleted == 0 && dir {
		b.WriteString(" Nothing changed; nothing written.")
	}
	if len(r.Skipped) > 0 {
		fmt.Fprintf(&b, " Skipped %d: ", len(r.Skipped))
		shown := r.Skipped
		if len(shown) > 20 {
			shown = shown[:20]
		}
		b.WriteString(strings.Join(shown, ", "))
		if len(r.Skipped) > len(shown) {
			fmt.Fprintf(&b, ", and %d more", len(r.Skipped)-len(shown))
		}
		b.WriteString(".")
	}
	return b.String()
}

type skipError string

func (s skipError) Error() string { return string(s) }
func errSkip(why string) error    { return skipError(why) }
func isSkip(err error) bool       { var s skipError; return errors.As(err, &s) }

var errUnchanged = errors.New("unchanged")

// sourceReader reads files for ingest into strings (the chunks' text), hashing them as it goes:
// one copy of each file and no []byte left behind for the GC, unlike os.ReadFile + string().
type sourceReader struct {
	buf  []byte
	head []byte // hashOnly's first bytes, for isBinary
	hash hash.Hash
	sum  []byte
}

// errBinary is sourceReader's answer for a binary file (isBinary).
var errBinary = errors.New("binary")

// read returns name's content and its SHA-256 (valid until the next read), or errBinary as soon
// as the first 8 KiB show the file is binary: the rest of it is neither read nor hashed
// (GOROOT/src has 744 binary files, 12.5 MB, among its text).
func (r *sourceReader) read(fsys fs.FS, name string) (string, []byte, error) {
	var b strings.Builder
	sum, err := r.scan(fsys, name, &b)
	return b.String(), sum, err
}

// hashOnly is read without keeping the content: re-ingesting an unchanged tree only compares
// hashes, and keeping every file's text for that allocated as much as the tree (127 MB of fresh
// memory for GOROOT/src).
func (r *sourceReader) hashOnly(fsys fs.FS, name string) ([]byte, error) {
	return r.scan(fsys, name, nil)
}

// scan hashes name, writing its content to b unless b is nil. fsys.Open must not block on a
// FIFO (workspace.Root.FS opens without blocking and refuses special files); what is read is
// then decided on the opened handle, since the walk's entry type may be stale by now.
func (r *sourceReader) scan(fsys fs.FS, name string, b *strings.Builder) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, workspace.NotRegular("ingest", name, st.Mode())
	}
	if st.Size() > 0 && b != nil {
		b.Grow(int(st.Size()))
	}
	r.hash.Reset()
	r.head = r.head[:0]
	total := 0
	checked := false // isBinary needs the first 8 KiB and whether there is more
	for {
		n, err := f.Read(r.buf)
		if b != nil {
			b.Write(r.buf[:n])
		} else if len(r.head) <= 8192 {
			r.head = append(r.head, r.buf[:min(n, 8193-len(r.head))]...)
		}
		r.hash.Write(r.buf[:n])
		total += n
		if !checked && total > 8192 {
			if checked = true; r.binary(b) {
				return nil, errBinary
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if !checked && r.binary(b) {
		return nil, errBinary
	}
	r.sum = r.hash.Sum(r.sum[:0])
	return r.sum, nil
}

// binary is isBinary of what scan has read: b's content, or (hashOnly) the first 8 KiB and one
// more byte, kept in head.
func (r *sourceReader) binary(b *strings.Builder) bool {
	if b != nil {
		return isBinary(b.String())
	}
	// A string view of head, not a copy (8 KiB per file): isBinary keeps nothing, and head is
	// not written while it runs.
	return isBinary(unsafe.String(unsafe.SliceData(r.head), len(r.head)))
}

// isBinary: a NUL byte in the first 8 KiB, or invalid UTF-8 there.
func isBinary(data string) bool {
	head := data
	if len(head) > 8192 {
		head = head[:8192]
	}
	if strings.IndexByte(head, 0) >= 0 {
		return true
	}
	// allow a multi-byte rune cut at the boundary
	for len(head) > 0 && !utf8.ValidString(head) {
		if len(data) > 8192 && len(head) > 8192-4 {
			head = head[:len(head)-1]
			continue
		}
		return true
	}
	return false
}

// embedText is what the embedder sees for a chunk: where it comes from, then its text.
func embedText(c *Chunk) string {
	var b strings.Builder
	b.Grow(len(c.Source) + len(c.Section) + len(c.Content) + 2)
	b.WriteString(c.Source)
	b.WriteByte(' ')
	b.WriteString(c.Section)
	b.WriteByte('\n')
	b.WriteString(c.Content)
	return b.String()
}

// Collections lists the backend's collections sorted by name.
func (e *Engine) Collections(ctx context.Context) ([]CollectionInfo, error) {
	infos, err := e.Backend.Collections(ctx)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(infos, func(a, b CollectionInfo) int { return strings.Compare(a.Name, b.Name) })
	return infos, nil
}

// FormatContext renders hits as a block ready for a system prompt.
func FormatContext(hits []Hit) string {
	if len(hits) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Relevant documentation:\n")
	for i, h := range hits {
		fmt.Fprintf(&b, "\n[%d] %s", i+1, h.Source)
		if h.Section != "" {
			fmt.Fprintf(&b, " — %s", h.Section)
		}
		fmt.Fprintf(&b, " (chunk %d, score %.3f)\n%s\n", h.ChunkIndex, h.Score, strings.TrimSpace(h.Content))
	}
	return b.String()
}

// EmbedChunks embeds one source's chunks the way ingestion does: each chunk's text is prefixed
// with its source and section, and the source's first chunk is mixed into the others
// (contextualize). The benchmark uses it to give a peer store the same vectors.
func EmbedChunks(ctx context.Context, emb Embedder, chunks []Chunk) ([][]float32, error) {
	if len(chunks) == 0 {
		return nil, nil
	}
	texts := make([]string, len(chunks))
	for i := range chunks {
		texts[i] = embedText(&chunks[i])
	}
	vecs, err := emb.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	contextualize(vecs)
	return vecs, nil
}

// sourceContextWeight is how much of a source's first chunk (its title, package comment or
// introduction) is mixed into the vectors of its other chunks, so a chunk about "Sum" in
// crypto/sha256 still carries "hash". Queries are not changed.
const sourceContextWeight = 0.35

func contextualize(vecs [][]float32) {
	if len(vecs) < 2 {
		return
	}
	head := vecs[0]
	for _, v := range vecs[1:] {
		if len(v) != len(head) {
			return
		}
		var n float64
		for d := range v {
			v[d] += sourceContextWeight * head[d]
			n += float64(v[d]) * float64(v[d])
		}
		if n > 0 {
			inv := float32(1 / math.Sqrt(n))
			for d := range v {
				v[d] *= inv
			}
		}
	}
}
