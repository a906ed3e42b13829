package rag

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Embedded is the default backend: one directory per collection under its root
// (<data_dir>/rag/<collection>/), nothing to install.
//
// On disk a collection is a manifest (manifest.json) and immutable segment files (seg-N.bin),
// each holding whole sources: chunks and their vectors. A commit writes its new segment to a
// temporary file, fsyncs and renames it, then does the same for the manifest, whose rename is the
// commit point. A process killed at any moment therefore leaves the previous or the new manifest,
// both naming only complete segments; leftovers are removed on the next open. Segments whose
// sources were all replaced are deleted after the commit; when more than half of the stored
// chunks are dead the live ones are compacted into one segment.
//
// In memory each collection has an immutable index (BM25 postings + column-major vectors) swapped
// atomically after a commit: queries never wait for an ingest, and see old or new content.
type Embedded struct {
	dir string

	mu    sync.Mutex
	colls map[string]*embColl
}

type embColl struct {
	dir     string
	dict    *termDict
	writeMu sync.Mutex // one commit at a time
	loadMu  sync.Mutex
	snap    atomic.Pointer[embSnap]
}

type embSnap struct {
	stamp   manifestStamp // the manifest file this snapshot was read from or written as
	man     manifest
	entries map[string]*sourceEntry
	idx     *index
	stale   bool // idx predates entries (CommitStaged); Publish rebuilds it
}

type manifest struct {
	Version    int                      `json:"version"`
	Meta       Meta                     `json:"meta"`
	Generation uint64                   `json:"generation"`
	NextSeg    uint64                   `json:"next_segment"`
	Sources    map[string]manifestEntry `json:"sources"`
}

type manifestEntry struct {
	Hash    string `json:"hash"`
	Segment uint64 `json:"segment"`
	Chunks  int    `json:"chunks"`
}

// sourceEntry is one live source in memory.
type sourceEntry struct {
	source string
	hash   string
	seg    uint64
	chunks []Chunk
	vecs   []float32 // len(chunks)*dim until indexed; then nil and the vectors live in ix
	ix     *index    // the index holding this source's vectors, from doc base
	base   int
	terms  [][]termFreq
	lens   []float32
}

// consecutiveRows returns the array that holds vecs as its consecutive rows of dim values, or nil
// when they are not laid out so (the offline embedder's ingest workers fill one array per source).
func consecutiveRows(vecs [][]float32, dim int) []float32 {
	if len(vecs) == 0 || dim == 0 || cap(vecs[0]) < len(vecs)*dim {
		return nil
	}
	rows := vecs[0][:len(vecs)*dim]
	for k, v := range vecs {
		if len(v) != dim || &v[0] != &rows[k*dim] {
			return nil
		}
	}
	return rows
}

// vectorAt returns component d of chunk k's vector.
func (se *sourceEntry) vectorAt(k, d int) float32 {
	if se.vecs != nil {
		return se.vecs[k*se.dimOf()+d]
	}
	return se.ix.cols[d][se.base+k]
}

func (se *sourceEntry) dimOf() int { return len(se.vecs) / max(1, len(se.chunks)) }

// OpenEmbedded opens (creating if needed) the store rooted at dir.
func OpenEmbedded(dir string) (*Embedded, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("rag store %s: %w", dir, err)
	}
	return &Embedded{dir: dir, colls: map[string]*embColl{}}, nil
}

// Kind implements Backend: "embedded".
func (e *Embedded) Kind() string { return "embedded" }

// termDict returns the dictionary that numbers a collection's BM25 terms (termNumberer), so
// ingest workers can number the terms they compute.
func (e *Embedded) termDict(name string) *termDict { return e.coll(name).dict }

// Location implements Backend: the store's directory.
func (e *Embedded) Location() string {
	return e.dir
}

// Close implements Backend. It has nothing to release: every commit is already on disk.
func (e *Embedded) Close() error { return nil }

func (e *Embedded) coll(name string) *embColl {
	e.mu.Lock()
	defer e.mu.Unlock()
	c := e.colls[name]
	if c == nil {
		c = &embColl{dir: filepath.Join(e.dir, name), dict: newTermDict()}
		e.colls[name] = c
	}
	return c
}

// Collections lists collections that have a manifest.
func (e *Embedded) Collections(ctx context.Context) ([]CollectionInfo, error) {
	ents, err := os.ReadDir(e.dir)
	if err != nil {
		return nil, err
	}
	var out []CollectionInfo
	for _, de := range ents {
		if !de.IsDir() || ValidateCollection(de.Name()) != nil {
			continue
		}
		man, ok, err := readManifest(filepath.Join(e.dir, de.Name()))
		if err != nil || !ok {
			continue
		}
		info := CollectionInfo{Name: de.Name(), Status: "green", Meta: man.Meta}
		for _, s := range man.Sources {
			info.Points += uint64(s.Chunks)
			info.Sources++
		}
		out = append(out, info)
	}
	return out, nil
}

// Meta returns a collection's metadata; ok is false when it does not exist.
func (e *Embedded) Meta(ctx context.Context, name string) (Meta, bool, error) {
	if s := e.coll(name).current(); s != nil { // loaded and current: no need to parse the manifest
		return s.man.Meta, true, nil
	}
	man, ok, err := readManifest(filepath.Join(e.dir, name))
	return man.Meta, ok, err
}

// Sources returns the content hash of every source in the collection.
func (e *Embedded) Sources(ctx context.Context, name string) (map[string]string, error) {
	man, _, err := readManifest(filepath.Join(e.dir, name))
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(man.Sources))
	for s, m := range man.Sources {
		out[s] = m.Hash
	}
	return out, nil
}

// Drop removes a collection.
func (e *Embedded) Drop(ctx context.Context, name string) error {
	c := e.coll(name)
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	// Remove the manifest first (the commit point), then the rest.
	if err := os.Remove(filepath.Join(c.dir, "manifest.json")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	c.snap.Store(nil)
	return os.RemoveAll(c.dir)
}

func readManifest(dir string) (manifest, bool, error) {
	var m manifest
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if errors.Is(err, os.ErrNotExist) {
		return m, false, nil
	}
	if err != nil {
		return m, false, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, false, fmt.Errorf("collection %s: manifest: %w", filepath.Base(dir), err)
	}
	if m.Sources == nil {
		m.Sources = map[string]manifestEntry{}
	}
	return m, true, nil
}

// manifestStamp identifies a manifest file version (another process may commit too).
type manifestStamp struct {
	mod  time.Time
	size int64
	ino  uint64
}

func stampOf(dir string) (manifestStamp, bool) {
	fi, err := os.Stat(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return manifestStamp{}, false
	}
	return manifestStamp{mod: fi.ModTime(), size: fi.Size(), ino: inode(fi)}, true
}

// current returns the snapshot if it still matches the manifest on disk (one stat).
func (c *embColl) current() *embSnap {
	s := c.snap.Load()
	if s == nil {
		return nil
	}
	if st, ok := stampOf(c.dir); !ok || st != s.stamp {
		return nil
	}
	return s
}

// load returns the collection's in-memory snapshot, reading it from disk on first use and
// again when another process committed since.
func (c *embColl) load() (*embSnap, error) {
	if s := c.current(); s != nil {
		return s, nil
	}
	c.loadMu.Lock()
	defer c.loadMu.Unlock()
	if s := c.current(); s != nil {
		return s, nil
	}
	stamp, _ := stampOf(c.dir)
	man, ok, err := readManifest(c.dir)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errNoCollection
	}
	if c.writeMu.TryLock() { // a running commit may have written a segment it has not yet named
		cleanOrphans(c.dir, man)
		c.writeMu.Unlock()
	}
	entries := map[string]*sourceEntry{}
	segs := map[uint64]bool{}
	for _, m := range man.Sources {
		segs[m.Segment] = true
	}
	for seg := range segs {
		err := readSegment(segPath(c.dir, seg), man.Meta.Dim, c.dict, func(se *sourceEntry) {
			if m, ok := man.Sources[se.source]; ok && m.Segment == seg && m.Hash == se.hash {
				se.seg = seg
				entries[se.source] = se
			}
		})
		if err != nil {
			return nil, fmt.Errorf("collection %s: %w", filepath.Base(c.dir), err)
		}
	}
	indexAll(sortedEntries(entries), c.dict)
	s := &embSnap{stamp: stamp, man: man, entries: entries, idx: buildIndex(sortedEntries(entries), man.Meta.Dim, c.dict)}
	c.snap.Store(s)
	return s, nil
}

var errNoCollection = errors.New("no such collection")

func (se *sourceEntry) index(dict *termDict) {
	se.terms = make([][]termFreq, len(se.chunks))
	se.lens = make([]float32, len(se.chunks))
	var scratch []string
	for k := range se.chunks {
		se.terms[k], se.lens[k] = chunkTerms(&se.chunks[k], scratch, dict)
	}
}

// indexAll tokenizes entries' chunks for BM25 on every CPU.
func indexAll(entries []*sourceEntry, dict *termDict) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range max(1, runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(entries) {
					return
				}
				if entries[i].terms == nil {
					entries[i].index(dict)
				}
			}
		}()
	}
	wg.Wait()
}

func sortedEntries(m map[string]*sourceEntry) []*sourceEntry {
	out := make([]*sourceEntry, 0, len(m))
	for _, e := range m {
		out = append(out, e)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].source < out[b].source })
	return out
}

func segPath(dir string, seg uint64) string {
	return filepath.Join(dir, fmt.Sprintf("seg-%06d.bin", seg))
}

// cleanOrphans removes temporary files and segments the manifest does not name (left by a
// process killed before or after its commit point).
func cleanOrphans(dir string, man manifest) {
	live := map[string]bool{"manifest.json": true, "lock": true}
	for _, m := range man.Sources {
		live[filepath.Base(segPath(dir, m.Segment))] = true
	}
	ents, _ := os.ReadDir(dir)
	for _, de := range ents {
		n := de.Name()
		if live[n] {
			continue
		}
		if strings.HasSuffix(n, ".tmp") || (strings.HasPrefix(n, "seg-") && strings.HasSuffix(n, ".bin")) {
			_ = os.Remove(filepath.Join(dir, n))
		}
	}
}

// Search runs a query against the collection's current index.
func (e *Embedded) Search(ctx context.Context, name string, q Query) ([]Hit, error) {
	s, err := e.coll(name).load()
	if err != nil {
		return nil, err
	}
	return s.idx.search(q.Terms, q.Vector, q.TopK, q.Mode), nil
}

// Commit applies one batch atomically: upserted sources replace their previous chunks, deleted
// sources are removed; with recreate everything else is dropped too and meta replaced.
func (e *Embedded) Commit(ctx context.Context, name string, meta Meta, recreate bool, upserts []SourceDoc, deletes []string) error {
	return e.commit(ctx, name, meta, recreate, upserts, deletes, true)
}

// CommitStaged is Commit without rebuilding the in-memory query index: the commit is durable
// (on disk, the manifest renamed) but queries keep answering from the previous index, i.e. the
// previous content, until Publish. Ingest uses it for its intermediate batches, so a large
// ingest builds the index once instead of once per batch.
func (e *Embedded) CommitStaged(ctx context.Context, name string, meta Meta, recreate bool, upserts []SourceDoc, deletes []string) error {
	return e.commit(ctx, name, meta, recreate, upserts, deletes, false)
}

// Publish rebuilds the query index of a collection after CommitStaged (no-op otherwise).
func (e *Embedded) Publish(name string) {
	c := e.coll(name)
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	s := c.snap.Load()
	if s == nil || !s.stale {
		return
	}
	c.snap.Store(&embSnap{stamp: s.stamp, man: s.man, entries: s.entries, idx: buildIndex(sortedEntries(s.entries), s.man.Meta.Dim, c.dict)})
}

func (e *Embedded) commit(ctx context.Context, name string, meta Meta, recreate bool, upserts []SourceDoc, deletes []string, publish bool) error {
	c := e.coll(name)
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return err
	}
	// Another process (e.g. `switchboard call` beside a running hub) may commit to the same
	// store: writers take an exclusive lock, and load() re-reads a manifest that changed.
	unlock, err := lockDir(c.dir)
	if err != nil {
		return err
	}
	defer unlock()
	var old *embSnap
	if !recreate {
		s, err := c.load()
		switch {
		case errors.Is(err, errNoCollection):
		case err != nil:
			return err
		default:
			old = s
		}
	}
	man := manifest{Version: 1, Meta: meta, Sources: map[string]manifestEntry{}}
	entries := map[string]*sourceEntry{}
	if old != nil {
		man.Generation = old.man.Generation
		man.NextSeg = old.man.NextSeg
		for k, v := range old.man.Sources {
			man.Sources[k] = v
		}
		for k, v := range old.entries {
			entries[k] = v
		}
	} else if prev, ok, _ := readManifest(c.dir); ok {
		man.Generation, man.NextSeg = prev.Generation, prev.NextSeg // keep numbering monotonic
	}
	if man.Meta.Created.IsZero() {
		man.Meta.Created = time.Now().UTC()
	}
	if old != nil && !old.man.Meta.Created.IsZero() {
		man.Meta.Created = old.man.Meta.Created
	}
	for _, d := range deletes {
		delete(man.Sources, d)
		delete(entries, d)
	}
	var prebuilt func() *index // the new query index, when it is being built already
	if len(upserts) > 0 {
		seg := man.NextSeg
		man.NextSeg++
		var newEntries []*sourceEntry
		for _, u := range upserts {
			if len(u.Vectors) != len(u.Chunks) {
				return fmt.Errorf("source %s: %d chunks but %d vectors", u.Source, len(u.Chunks), len(u.Vectors))
			}
			se := &sourceEntry{source: u.Source, hash: u.Hash, seg: seg, chunks: u.Chunks}
			for _, v := range u.Vectors {
				if len(v) != meta.Dim {
					return fmt.Errorf("source %s: vector of %d dimensions, collection has %d", u.Source, len(v), meta.Dim)
				}
			}
			if rows := consecutiveRows(u.Vectors, meta.Dim); rows != nil { // adopt the backing array
				se.vecs = rows
			} else {
				se.vecs = make([]float32, 0, len(u.Chunks)*meta.Dim)
				for _, v := range u.Vectors {
					se.vecs = append(se.vecs, v...)
				}
			}
			if len(u.terms) == len(u.Chunks) && u.dict == c.dict { // computed and numbered by the ingest workers
				se.terms, se.lens = u.terms, make([]float32, len(u.terms))
				for k, ts := range u.terms {
					var n float32
					for _, t := range ts {
						n += t.tf
					}
					se.lens[k] = n // written, not accumulated: see newZeroed
				}
			}
			newEntries = append(newEntries, se)
		}
		indexAll(newEntries, c.dict) // before writing: the segment stores the BM25 terms
		for _, se := range newEntries {
			entries[se.source] = se
			man.Sources[se.source] = manifestEntry{Hash: se.hash, Segment: seg, Chunks: len(se.chunks)}
		}
		if publish { // build the new query index while the segment is written (both only read entries)
			ready := make(chan *index, 1)
			all := sortedEntries(entries)
			go func() { ready <- newIndex(all, meta.Dim, c.dict) }()
			prebuilt = func() *index {
				ix := <-ready
				ready <- ix
				return ix
			}
			defer prebuilt() // an early return still waits: others may change the entries afterwards
		}
		if err := writeSegment(segPath(c.dir, seg), meta.Dim, newEntries, c.dict); err != nil {
			return err
		}
	}
	// Compact when more than half the stored chunks are dead.
	if stored, live := storedChunks(c.dir, man, entries); stored > 2*live && live > 0 && len(upserts) > 0 {
		seg := man.NextSeg
		man.NextSeg++
		all := sortedEntries(entries)
		if err := writeSegment(segPath(c.dir, seg), meta.Dim, all, c.dict); err != nil {
			return err
		}
		for _, se := range all {
			se2 := *se
			se2.seg = seg
			entries[se.source] = &se2
			m := man.Sources[se.source]
			m.Segment = seg
			man.Sources[se.source] = m
		}
	}
	man.Generation++
	if err := writeFileAtomic(filepath.Join(c.dir, "manifest.json"), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", " ")
		return enc.Encode(man)
	}); err != nil {
		return err
	}
	stamp, _ := stampOf(c.dir)
	if publish {
		var idx *index
		if prebuilt != nil { // same sources in the same order; compaction only copied entries
			idx = prebuilt()
			idx.adopt(sortedEntries(entries))
		} else {
			idx = buildIndex(sortedEntries(entries), meta.Dim, c.dict)
		}
		c.snap.Store(&embSnap{stamp: stamp, man: man, entries: entries, idx: idx})
	} else {
		idx := &index{dim: meta.Dim, dict: c.dict}
		if prev := c.snap.Load(); prev != nil && prev.idx.dim == meta.Dim {
			idx = prev.idx // the previous content; entries not yet indexed keep their own vectors
		}
		c.snap.Store(&embSnap{stamp: stamp, man: man, entries: entries, idx: idx, stale: true})
	}
	cleanOrphans(c.dir, man)
	return nil
}

// storedChunks counts chunks in the segments still referenced (stored) and live ones.
func storedChunks(dir string, man manifest, entries map[string]*sourceEntry) (stored, live int) {
	segChunks := segmentSizes(dir)
	used := map[uint64]bool{}
	for _, m := range man.Sources {
		used[m.Segment] = true
		live += m.Chunks
	}
	for s := range used {
		stored += segChunks[s]
	}
	return stored, live
}

// segmentSizes reads chunk counts from segment headers.
func segmentSizes(dir string) map[uint64]int {
	out := map[uint64]int{}
	ents, _ := os.ReadDir(dir)
	for _, de := range ents {
		var seg uint64
		if _, err := fmt.Sscanf(de.Name(), "seg-%d.bin", &seg); err != nil {
			continue
		}
		f, err := os.Open(filepath.Join(dir, de.Name()))
		if err != nil {
			continue
		}
		var hdr [len(segMagic) + 8]byte
		if _, err := io.ReadFull(f, hdr[:]); err == nil && (string(hdr[:len(segMagic)]) == segMagic || string(hdr[:len(segMagic)]) == segMagicV1) {
			out[seg] = int(binary.LittleEndian.Uint64(hdr[len(segMagic):]))
		}
		f.Close()
	}
	return out
}

// Segment formats. Version 2 (written now) stores each chunk's BM25 terms, so a reopened
// collection answers its first query without tokenizing every chunk again; version 1 segments
// (chunks and vectors only) still open, their terms are computed on load as before, and they
// are rewritten in version 2 when the collection is next compacted.
const (
	segMagic   = "SBRAGSEG2\n"
	segMagicV1 = "SBRAGSEG1\n"
)

// writeSegment writes entries (already indexed: their terms are set) as: magic, total chunks
// (u64), the segment's term dictionary (count, then each term), sources (count), then per source
// its name, hash and chunk count, per chunk section, category, index, content, its terms (count,
// then dictionary position and weighted frequency of each) and dim float32s, and a CRC-32 of
// everything before it. Integers are uvarints.
func writeSegment(path string, dim int, entries []*sourceEntry, dict *termDict) error {
	total := 0
	for _, e := range entries {
		total += len(e.chunks)
	}
	// The segment's own dictionary: global term ID -> position+1 (0 = not used here).
	local := make([]uint32, dict.size())
	var used []uint32
	for _, e := range entries {
		for _, ts := range e.terms {
			for _, t := range ts {
				if int(t.id) >= len(local) {
					local = append(local, make([]uint32, int(t.id)+1-len(local))...)
				}
				if local[t.id] == 0 {
					used = append(used, t.id)
					local[t.id] = uint32(len(used))
				}
			}
		}
	}
	return writeFileAtomic(path, func(w io.Writer) error {
		// Records are appended to buf and written out (and added to the CRC) in ~1 MiB pieces:
		// a segment holds ~60 varints per chunk, and appending them to a slice took a quarter
		// less of the segment writer's CPU than a bufio.Writer call each.
		var crc uint32
		buf := make([]byte, 0, 1<<20+64<<10)
		flush := func() error {
			crc = crc32.Update(crc, crc32.IEEETable, buf)
			_, err := w.Write(buf)
			buf = buf[:0]
			return err
		}
		spill := func() error { // flush once a piece is full
			if len(buf) < 1<<20 {
				return nil
			}
			return flush()
		}
		str := func(s string) {
			buf = binary.AppendUvarint(buf, uint64(len(s)))
			buf = append(buf, s...)
		}
		buf = append(buf, segMagic...)
		buf = binary.LittleEndian.AppendUint64(buf, uint64(total))
		buf = binary.AppendUvarint(buf, uint64(len(used)))
		for _, t := range dict.terms(used) {
			str(t)
			if err := spill(); err != nil {
				return err
			}
		}
		buf = binary.AppendUvarint(buf, uint64(len(entries)))
		for _, e := range entries {
			str(e.source)
			str(e.hash)
			buf = binary.AppendUvarint(buf, uint64(len(e.chunks)))
			for k, c := range e.chunks {
				str(c.Section)
				str(c.Category)
				buf = binary.AppendUvarint(buf, uint64(c.ChunkIndex))
				str(c.Content)
				var ts []termFreq
				if k < len(e.terms) {
					ts = e.terms[k]
				}
				buf = binary.AppendUvarint(buf, uint64(len(ts)))
				for _, t := range ts {
					buf = binary.AppendUvarint(buf, uint64(local[t.id]-1))
					buf = binary.AppendUvarint(buf, uint64(t.tf)) // weighted counts are whole numbers
				}
				if e.vecs != nil { // not yet indexed: the row is contiguous
					for _, x := range e.vecs[k*dim : (k+1)*dim] {
						buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(x))
					}
				} else {
					for d := 0; d < dim; d++ {
						buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(e.vectorAt(k, d)))
					}
				}
				if err := spill(); err != nil {
					return err
				}
			}
		}
		if err := flush(); err != nil {
			return err
		}
		_, err := w.Write(binary.LittleEndian.AppendUint32(nil, crc))
		return err
	})
}

func readSegment(path string, dim int, dict *termDict, fn func(*sourceEntry)) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("segment %s: %w", filepath.Base(path), err)
	}
	bad := func(why string) error {
		return fmt.Errorf("segment %s is damaged (%s); re-ingest with recreate=true", filepath.Base(path), why)
	}
	if len(data) < len(segMagic)+12 {
		return bad("bad header")
	}
	v2 := string(data[:len(segMagic)]) == segMagic
	if !v2 && string(data[:len(segMagicV1)]) != segMagicV1 {
		return bad("bad header (not a Switchboard segment, or written by a newer version)")
	}
	body := data[:len(data)-4]
	if crc32.ChecksumIEEE(body) != binary.LittleEndian.Uint32(data[len(data)-4:]) {
		return bad("checksum mismatch")
	}
	p := body[len(segMagic)+8:]
	var failed bool
	u := func() uint64 {
		x, n := binary.Uvarint(p)
		if n <= 0 {
			failed = true
			return 0
		}
		p = p[n:]
		return x
	}
	raw := func() []byte {
		n := u()
		if failed || n > uint64(len(p)) {
			failed = true
			return nil
		}
		b := p[:n]
		p = p[n:]
		return b
	}
	str := func() string { return string(raw()) }
	var ids []uint32 // segment dictionary position -> global term ID
	if v2 {
		nt := u()
		if failed || nt > uint64(len(p)) {
			return bad("truncated")
		}
		ids = make([]uint32, nt)
		for i := range ids {
			b := raw()
			if failed {
				return bad("truncated")
			}
			ids[i] = dict.idBytes(b)
		}
	}
	nsrc := u()
	for i := uint64(0); i < nsrc && !failed; i++ {
		se := &sourceEntry{source: str(), hash: str()}
		nch := u()
		if failed || nch > uint64(len(p)) {
			return bad("truncated")
		}
		se.chunks = make([]Chunk, nch)
		se.vecs = make([]float32, int(nch)*dim)
		if v2 {
			se.terms = make([][]termFreq, nch)
			se.lens = make([]float32, nch)
		}
		for k := range se.chunks {
			c := &se.chunks[k]
			c.Source = se.source
			c.Section = str()
			c.Category = str()
			c.ChunkIndex = int(u())
			c.Content = str()
			if v2 {
				nt := u()
				if failed || nt > uint64(len(p)) {
					return bad("truncated")
				}
				ts := make([]termFreq, nt)
				var n float32
				for j := range ts {
					li := u()
					tf := float32(u())
					if failed || li >= uint64(len(ids)) {
						return bad("truncated")
					}
					ts[j] = termFreq{ids[li], tf}
					n += tf
				}
				se.terms[k], se.lens[k] = ts, n
			}
			if failed || len(p) < 4*dim {
				return bad("truncated")
			}
			v := se.vecs[k*dim : (k+1)*dim]
			for d := range v {
				v[d] = math.Float32frombits(binary.LittleEndian.Uint32(p[4*d:]))
			}
			p = p[4*dim:]
		}
		fn(se)
	}
	if failed {
		return bad("truncated")
	}
	return nil
}

// writeFileAtomic writes via a temporary file in the same directory, fsyncs it, renames it over
// path and fsyncs the directory.
func writeFileAtomic(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := write(tmp); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	ok = true
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// ChunkCounts returns the number of chunks stored per source.
func (e *Embedded) ChunkCounts(ctx context.Context, name string) (map[string]int, error) {
	man, _, err := readManifest(filepath.Join(e.dir, name))
	if err != nil {
		return nil, err
	}
	out := make(map[string]int, len(man.Sources))
	for s, m := range man.Sources {
		out[s] = m.Chunks
	}
	return out, nil
}
