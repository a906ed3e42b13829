package rag

import (
	"math"
	"path"
	"runtime"
	"sort"
	"strings"
	"sync"
)

// index is an immutable in-memory search structure over a collection's live chunks: a BM25
// inverted index over code-aware terms and a column-major vector matrix. A new index is built on
// every commit and swapped in atomically, so queries never wait for an ingest.
type index struct {
	docs     []*Chunk
	dim      int
	cols     [][]float32 // cols[d][doc]: column-major, so a sparse query touches only its dims
	dict     *termDict
	postings [][]posting // by term ID
	docLen   []float32
	avgLen   float32
}

type posting struct {
	doc uint32
	tf  float32
}

// Field weights for BM25: a term in the file name counts three times, in the section heading
// twice, in the body once.
const (
	weightFile    = 3
	weightDir     = 1
	weightSection = 2
)

// termFreq is one term of a chunk (by ID) with its weighted frequency.
type termFreq struct {
	id uint32
	tf float32
}

// chunkTerms returns a chunk's weighted term frequencies and its weighted length.
func chunkTerms(c *Chunk, scratch []string, dict *termDict) ([]termFreq, float32) {
	counts := map[string]float32{}
	scratch = tokenize(scratch[:0], c.Content)
	for _, t := range scratch {
		counts[t]++
	}
	scratch = tokenize(scratch[:0], c.Section)
	for _, t := range scratch {
		counts[t] += weightSection
	}
	dir, file := path.Split(c.Source)
	file = strings.TrimSuffix(file, path.Ext(file))
	scratch = tokenize(scratch[:0], file)
	for _, t := range scratch {
		counts[t] += weightFile
	}
	scratch = tokenize(scratch[:0], dir)
	for _, t := range scratch {
		counts[t] += weightDir
	}
	out := make([]termFreq, 0, len(counts))
	var n float32
	for t, f := range counts {
		out = append(out, termFreq{dict.id(t), f})
		n += f
	}
	return out, n
}

// buildIndex indexes entries' chunks in order. Afterwards the entries' vectors live only in the
// new index's columns (sourceEntry.vector reads them there).
func buildIndex(entries []*sourceEntry, dim int, dict *termDict) *index {
	ix := newIndex(entries, dim, dict)
	ix.adopt(entries)
	return ix
}

// newIndex builds an index of entries' chunks in order without changing the entries (so a
// segment can be written from them meanwhile); adopt then hands their vectors over to it.
func newIndex(entries []*sourceEntry, dim int, dict *termDict) *index {
	n := 0
	for _, e := range entries {
		n += len(e.chunks)
	}
	ix := &index{dim: dim, dict: dict, docs: make([]*Chunk, 0, n), docLen: make([]float32, 0, n)}
	var wg sync.WaitGroup
	// BM25 postings, on their own goroutine: count each term's documents, then fill one backing
	// array (appending to 400k growing slices was most of a large index's build time).
	wg.Add(1)
	go func() {
		defer wg.Done()
		ix.postings = buildPostings(entries, dict.size())
	}()
	var total float64
	for _, e := range entries {
		for k := range e.chunks {
			ix.docs = append(ix.docs, &e.chunks[k])
			ix.docLen = append(ix.docLen, e.lens[k])
			total += float64(e.lens[k])
		}
	}
	if n > 0 {
		ix.avgLen = float32(total / float64(n))
	}
	// Transpose the vectors into columns, a range of dimensions per CPU.
	ix.cols = make([][]float32, dim)
	backing := make([]float32, dim*n)
	for d := range ix.cols {
		ix.cols[d] = backing[d*n : (d+1)*n : (d+1)*n]
	}
	bases := entryBases(entries)
	workers := max(1, min(runtime.GOMAXPROCS(0), dim))
	for w := range workers {
		lo, hi := w*dim/workers, (w+1)*dim/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, e := range entries {
				if len(e.chunks) == 0 {
					continue
				}
				if e.vecs == nil { // already in an index: copy its columns
					for d := lo; d < hi; d++ {
						copy(ix.cols[d][bases[i]:bases[i]+len(e.chunks)], e.ix.cols[d][e.base:e.base+len(e.chunks)])
					}
					continue
				}
				// Rows to columns in blocks of 16 documents, so each column write fills a whole
				// cache line instead of touching a new line per value.
				for k0 := 0; k0 < len(e.chunks); k0 += 16 {
					k1 := min(k0+16, len(e.chunks))
					for d := lo; d < hi; d++ {
						col := ix.cols[d][bases[i]+k0 : bases[i]+k1]
						for k := range col {
							col[k] = e.vecs[(k0+k)*dim+d]
						}
					}
				}
			}
		}()
	}
	wg.Wait()
	return ix
}

// entryBases returns the first document number of each entry.
func entryBases(entries []*sourceEntry) []int {
	bases := make([]int, len(entries))
	base := 0
	for i, e := range entries {
		bases[i] = base
		base += len(e.chunks)
	}
	return bases
}

// adopt makes entries read their vectors from ix and drops their own copies.
func (ix *index) adopt(entries []*sourceEntry) {
	for i, base := range entryBases(entries) {
		e := entries[i]
		e.ix, e.base, e.vecs = ix, base, nil
	}
}

// buildPostings returns each term's postings (by term ID < terms), documents in order.
func buildPostings(entries []*sourceEntry, terms int) [][]posting {
	counts := newZeroed[uint32](terms + 1)
	for _, e := range entries {
		for _, ts := range e.terms {
			for _, t := range ts {
				counts[t.id+1]++
			}
		}
	}
	for i := 1; i < len(counts); i++ { // counts[i] = first posting of term i
		counts[i] += counts[i-1]
	}
	backing := make([]posting, counts[terms])
	postings := make([][]posting, terms)
	for id := range postings {
		postings[id] = backing[counts[id]:counts[id]:counts[id+1]]
	}
	doc := uint32(0)
	for _, e := range entries {
		for _, ts := range e.terms {
			for _, t := range ts {
				postings[t.id] = append(postings[t.id], posting{doc, t.tf})
			}
			doc++
		}
	}
	return postings
}

// ranked is a document with a score, used for the per-ranking candidate lists.
type ranked struct {
	doc   uint32
	score float32
}

const (
	bm25K1 = 1.2
	bm25B  = 0.75
	rrfK   = 60 // reciprocal rank fusion constant (Cormack et al.)
)

// bm25 scores the query terms and returns the best m documents.
func (ix *index) bm25(terms []string, m int) []ranked {
	if len(ix.docs) == 0 {
		return nil
	}
	seen := map[string]bool{}
	scores := newZeroed[float32](len(ix.docs))
	n := float64(len(ix.docs))
	for _, t := range terms {
		if seen[t] {
			continue
		}
		seen[t] = true
		id, ok := ix.dict.lookup(t)
		if !ok || int(id) >= len(ix.postings) {
			continue
		}
		ps := ix.postings[id]
		if len(ps) == 0 {
			continue
		}
		idf := float32(math.Log(1 + (n-float64(len(ps))+0.5)/(float64(len(ps))+0.5)))
		for _, p := range ps {
			norm := bm25K1 * (1 - bm25B + bm25B*ix.docLen[p.doc]/ix.avgLen)
			scores[p.doc] += idf * p.tf * (bm25K1 + 1) / (p.tf + norm)
		}
	}
	return topM(scores, m)
}

// vector returns the m documents with the highest dot product (= cosine: vectors are unit length).
func (ix *index) vector(q []float32, m int) []ranked {
	if len(ix.docs) == 0 || len(q) != ix.dim {
		return nil
	}
	scores := newZeroed[float32](len(ix.docs))
	for d, w := range q {
		if w == 0 {
			continue
		}
		col := ix.cols[d][:len(scores)]
		for i, x := range col {
			scores[i] += w * x
		}
	}
	return topM(scores, m)
}

// topM returns the m highest positive scores, best first (ties by document order).
func topM(scores []float32, m int) []ranked {
	if m <= 0 {
		return nil
	}
	h := make([]ranked, 0, m+1) // min-heap on score
	less := func(a, b ranked) bool {
		if a.score != b.score {
			return a.score < b.score
		}
		return a.doc > b.doc
	}
	for i, s := range scores {
		if s <= 0 {
			continue
		}
		r := ranked{uint32(i), s}
		if len(h) == m {
			if !less(h[0], r) {
				continue
			}
			h[0] = r
			// sift down
			j := 0
			for {
				l := 2*j + 1
				if l >= m {
					break
				}
				if rr := l + 1; rr < m && less(h[rr], h[l]) {
					l = rr
				}
				if !less(h[l], h[j]) {
					break
				}
				h[j], h[l] = h[l], h[j]
				j = l
			}
			continue
		}
		h = append(h, r)
		for j := len(h) - 1; j > 0; {
			p := (j - 1) / 2
			if !less(h[j], h[p]) {
				break
			}
			h[j], h[p] = h[p], h[j]
			j = p
		}
	}
	sort.Slice(h, func(a, b int) bool { return less(h[b], h[a]) })
	return h
}

// Mode selects the ranking(s) a search uses.
type Mode int

// The modes; the zero value is Hybrid.
const (
	Hybrid      Mode = iota // BM25 and vectors fused by reciprocal rank fusion (the default)
	LexicalOnly             // BM25 only (for comparison in the evaluation)
	VectorOnly              // vectors only
)

// Hit is one search result.
type Hit struct {
	Chunk
	Score float32
}

// search runs the ranking(s) and fuses them. The score of a hybrid hit is its RRF score
// normalised so that a chunk ranked first by both rankings scores 1.
func (ix *index) search(terms []string, q []float32, k int, mode Mode) []Hit {
	if k <= 0 {
		return nil
	}
	depth := max(k*10, 100)
	var lists [][]ranked
	if mode != VectorOnly {
		lists = append(lists, ix.bm25(terms, depth))
	}
	if mode != LexicalOnly {
		lists = append(lists, ix.vector(q, depth))
	}
	if len(lists) == 1 {
		l := lists[0]
		if len(l) > k {
			l = l[:k]
		}
		hits := make([]Hit, len(l))
		for i, r := range l {
			hits[i] = Hit{Chunk: *ix.docs[r.doc], Score: r.score}
		}
		return hits
	}
	fused := map[uint32]float64{}
	for _, l := range lists {
		for rank, r := range l {
			fused[r.doc] += 1 / float64(rrfK+rank+1)
		}
	}
	all := make([]ranked, 0, len(fused))
	for d, s := range fused {
		all = append(all, ranked{d, float32(s * float64(rrfK+1) / float64(len(lists)))})
	}
	sort.Slice(all, func(a, b int) bool {
		if all[a].score != all[b].score {
			return all[a].score > all[b].score
		}
		return all[a].doc < all[b].doc
	})
	if len(all) > k {
		all = all[:k]
	}
	hits := make([]Hit, len(all))
	for i, r := range all {
		hits[i] = Hit{Chunk: *ix.docs[r.doc], Score: r.score}
	}
	return hits
}
