package rag

import (
	"context"
	"math"
	"path"
	"strings"
	"unicode/utf8"
)

// feature is one hashed feature of a term, in two bytes: its vector position (the low byte) and
// its signed weight at term weight 1 (weight). Ingest reads a term's features once per chunk the
// term occurs in, from tables that outgrow the CPU caches; at 8 bytes a feature those reads were
// a sixth of an ingest's CPU.
type feature uint16

// featureWeights[c] is the weight of features of class c: featureBases[c&3], negated when c&4.
var featureWeights = func() (w [8]float32) {
	for c, b := range featureBases {
		w[c], w[4|c] = b, -b
	}
	return w
}()

// A feature's position must fit its low byte.
const _ = uint8(OfflineDim - 1)

func (f feature) pos() uint8      { return uint8(f) }
func (f feature) weight() float32 { return featureWeights[(f>>8)&7] }

// termFeatures appends t's features (eachFeature) with their signs applied, so that adding
// f.weight()*w for each gives embedTerm(v, t, c)'s result bit for bit (w = termWeight(c);
// ±base·w is the product embedTerm forms).
func termFeatures(dst []feature, t string) []feature {
	eachFeature(t, func(h uint32, c int) {
		if h&(1<<31) != 0 {
			c |= 4
		}
		dst = append(dst, feature(c<<8|int(h%OfflineDim)))
	})
	return dst
}

// termWeights[c] is embedTerm's weight for a term seen c times, for small c.
var termWeights = func() (w [256]float32) {
	for c := 1; c < len(w); c++ {
		w[c] = float32(1 + math.Log(float64(c)))
	}
	return w
}()

func termWeight(c int32) float32 {
	if c < int32(len(termWeights)) {
		return termWeights[c]
	}
	return float32(1 + math.Log(float64(c)))
}

// wordCacheSets is the number of sets of an offlineWorker's word cache (a power of two): two
// 64-byte entries each, most recently used first, 2 MiB in all. Words are stored in the entries,
// so a lookup touches at most two cache lines; a Go map of every distinct word (GOROOT/src has
// 410k) was slower than recomputing them, its lookups missing the CPU caches. GOROOT/src's 13M
// words miss this cache about 5% of the time.
const wordCacheSets = 1 << 14

// offlineWorker embeds chunks with the offline embedder and computes their BM25 terms, as
// EmbedChunks and chunkTerms would, for one ingest worker goroutine (it is not safe for
// concurrent use). It tokenizes every text once for both, and it remembers what recent words
// yield (their terms' IDs in the collection's dictionary), recent terms' IDs and each term's
// features, so a word seen again costs a hash and a compare instead of splitting, lower-casing,
// stemming, numbering and hashing it again.
type offlineWorker struct {
	dict    *termDict       // numbers BM25 terms: the collection's dictionary
	words   [][2]cachedWord // len is a power of two
	terms   []cachedTerm    // len is a power of two
	pages   [][]feature     // terms' features for one occurrence (embedTerm with weight 1), featPage each
	scratch []feature
	slots   [][]termSlot // by term ID: slot(id)
	gen     uint32       // current chunk's generation in slots
	ids     []uint32     // scratch: a text's term IDs
	parts   []string
}

// cachedWord is a word as it appears in text and the IDs of the terms addWord yields for it.
// Longer words, and words with more terms, are not cached.
type cachedWord struct {
	n   uint8 // word length; 0 for an empty entry
	nt  uint8 // number of terms
	key [maxCachedWord]byte
	ids [7]uint32
}

const maxCachedWord = 34 // an entry is 64 bytes: one cache line

// cachedTerm is a term and its ID in the worker's dictionary (termID); 32 bytes.
type cachedTerm struct {
	n   uint8 // term length; 0 for an empty entry
	key [maxCachedTerm]byte
	id  uint32
}

const maxCachedTerm = 27

// featSpan locates a term's features: off is page*featPage + offset in the page.
type featSpan struct{ off, n uint32 }

// featPage is the capacity of a features page (pages never grow, so nothing is copied).
const featPage = 1 << 16

// termSlot is what a worker keeps per term: its counts in the current chunk and where its
// features are (together: the features are read right after the counts, from the same line).
type termSlot struct {
	gen  uint32   // chunk generation that last touched this term
	emb  int32    // occurrences in the embedder's text (source, section, content)
	bm   float32  // weighted BM25 frequency (content, section, file name, directory)
	feat featSpan // n == 0: not computed yet
}

// newOfflineWorker returns a worker numbering terms in dict (the collection's, so the numbers
// are final and a commit need not look every chunk's terms up again).
func newOfflineWorker(dict *termDict) *offlineWorker {
	return newOfflineWorkerSets(dict, wordCacheSets)
}

// newOfflineWorkerSets is newOfflineWorker with a word cache of sets sets and a term cache of as
// many entries (512 KiB for wordCacheSets), sets a power of two; tests use tiny ones to exercise
// eviction.
func newOfflineWorkerSets(dict *termDict, sets int) *offlineWorker {
	return &offlineWorker{dict: dict, words: newZeroed[[2]cachedWord](sets), terms: newZeroed[cachedTerm](sets)} // probed before filled
}

// wordIDs appends the IDs of the terms addWord yields for w, from the cache when w was seen
// recently; h is w's FNV-1a hash.
func (ow *offlineWorker) wordIDs(dst []uint32, w string, h uint32) []uint32 {
	var set *[2]cachedWord
	if len(w) <= maxCachedWord {
		h = mixHash(h)
		set = &ow.words[h&uint32(len(ow.words)-1)]
		if cw := &set[0]; int(cw.n) == len(w) && string(cw.key[:cw.n]) == w {
			return append(dst, cw.ids[:cw.nt]...)
		}
		if cw := &set[1]; int(cw.n) == len(w) && string(cw.key[:cw.n]) == w {
			dst = append(dst, cw.ids[:cw.nt]...)
			set[0], set[1] = set[1], set[0] // most recently used first
			return dst
		}
	}
	ow.parts = addWord(ow.parts[:0], w)
	start := len(dst)
	for _, p := range ow.parts {
		dst = append(dst, ow.termID(p))
	}
	if set != nil && len(ow.parts) <= len(set[0].ids) {
		set[1] = set[0] // evict the least recently used
		cw := &set[0]
		cw.n, cw.nt = uint8(len(w)), uint8(len(ow.parts))
		copy(cw.key[:], w)
		copy(cw.ids[:], dst[start:])
	}
	return dst
}

// termID returns t's ID in the worker's dictionary, from the worker's term cache when t was
// numbered recently. The words the word cache misses (about 5% of GOROOT/src's words, most of
// them seen for the first time) are mostly compounds of common parts ("newOfflineWorker": "new",
// "offlin", "worker"). A lookup in the shared dictionary (425k terms, larger than the CPU caches)
// is a cache miss or two; this cache answers 59% of them (2.0M → 0.83M on GOROOT/src), which
// took ~13% off an ingest's CPU when the dictionary was still a map behind a lock.
func (ow *offlineWorker) termID(t string) uint32 {
	if len(t) > maxCachedTerm {
		return ow.dict.id(t)
	}
	h := dictHash(t) // the dictionary's hash too, so a miss does not hash t again
	ct := &ow.terms[h&uint32(len(ow.terms)-1)]
	if int(ct.n) == len(t) && string(ct.key[:ct.n]) == t {
		return ct.id
	}
	id := ow.dict.idHashed(t, h)
	ct.n, ct.id = uint8(len(t)), id
	copy(ct.key[:], t)
	return id
}

// features returns the features of the term in slot sl, computing them on first use.
func (ow *offlineWorker) features(id uint32, sl *termSlot) []feature {
	if sp := sl.feat; sp.n > 0 {
		page, off := sp.off/featPage, sp.off%featPage
		return ow.pages[page][off : off+sp.n]
	}
	ow.scratch = termFeatures(ow.scratch[:0], ow.dict.term(id))
	last := len(ow.pages) - 1
	if last < 0 || len(ow.pages[last])+len(ow.scratch) > featPage {
		ow.pages = append(ow.pages, make([]feature, 0, featPage))
		last++
	}
	off := len(ow.pages[last])
	ow.pages[last] = append(ow.pages[last], ow.scratch...)
	sl.feat = featSpan{uint32(last*featPage + off), uint32(len(ow.scratch))} // n > 0: every term has its own feature
	return ow.pages[last][off:]
}

// tokenize appends the term IDs of s to dst: the terms the package's tokenize yields, numbered.
// It hashes each word while finding its end, for the word cache.
func (ow *offlineWorker) tokenize(dst []uint32, s string) []uint32 {
	i := 0
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if !asciiWord[c] {
				i++
				continue
			}
		} else if r, size := utf8.DecodeRuneInString(s[i:]); !isWordRune(r) {
			i += size
			continue
		}
		h := fnvBasis
		j := i
		for j < len(s) {
			c := s[j]
			if c < utf8.RuneSelf {
				if !asciiWord[c] {
					break
				}
				h = (h ^ uint32(c)) * 16777619
				j++
				continue
			}
			r, size := utf8.DecodeRuneInString(s[j:])
			if !isWordRune(r) {
				break
			}
			for _, b := range []byte(s[j : j+size]) {
				h = (h ^ uint32(b)) * 16777619
			}
			j += size
		}
		if j-i <= 64 { // longer: hashes and blobs, which addWord drops
			dst = ow.wordIDs(dst, s[i:j], h)
		}
		i = j
	}
	return dst
}

// asciiWord marks the ASCII bytes isWordRune accepts.
var asciiWord = func() (t [utf8.RuneSelf]bool) {
	for c := range t {
		t[c] = isWordRune(rune(c))
	}
	return t
}()

// slotPage is the number of termSlots in a page of offlineWorker.slots. The slots are paged
// because the dictionary keeps growing during an ingest: growing one array by copying it
// allocated 105 MB on GOROOT/src for 18 MB of slots, and the kernel hands every new page out
// fresh (1.6–7 µs a page on the benchmark machine, more when both cores fault at once).
const slotPage = 1 << 16

// slot returns term id's slot, adding pages as the dictionary grows.
func (ow *offlineWorker) slot(id uint32) *termSlot {
	for int(id/slotPage) >= len(ow.slots) {
		ow.slots = append(ow.slots, newZeroed[termSlot](slotPage)) // count reads a slot before writing it
	}
	return &ow.slots[id/slotPage][id%slotPage]
}

// count adds emb occurrences and bm weighted frequency to term id in the current chunk, noting
// id in touched the first time the chunk sees it.
func (ow *offlineWorker) count(touched []uint32, id uint32, emb int32, bm float32) []uint32 {
	c := ow.slot(id)
	if c.gen != ow.gen {
		c.gen, c.emb, c.bm = ow.gen, 0, 0
		touched = append(touched, id)
	}
	c.emb += emb
	c.bm += bm
	return touched
}

// embedAndTerms embeds a source's chunks with the offline embedder exactly as EmbedChunks does
// and computes their BM25 terms as chunkTerms does (numbered in the worker's dictionary).
func (ow *offlineWorker) embedAndTerms(ctx context.Context, chunks []Chunk) ([][]float32, [][]termFreq, error) {
	if len(chunks) == 0 {
		return nil, nil, nil
	}
	vecs := make([][]float32, len(chunks))
	backing := newZeroed[float32](len(chunks) * OfflineDim) // features are added (+=) to its rows
	terms := make([][]termFreq, len(chunks))
	var srcT, dirT, fileT, touched []uint32
	lastSource := "\x00"
	for k := range chunks {
		if k%256 == 0 && ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		c := &chunks[k]
		if c.Source != lastSource {
			lastSource = c.Source
			srcT = ow.tokenize(srcT[:0], c.Source)
			dir, file := path.Split(c.Source)
			file = strings.TrimSuffix(file, path.Ext(file))
			dirT = ow.tokenize(dirT[:0], dir)
			fileT = ow.tokenize(fileT[:0], file)
		}
		ow.gen++
		if ow.gen == 0 { // wrapped: no slot may keep a generation that looks current
			for _, page := range ow.slots {
				for i := range page {
					page[i].gen = 0
				}
			}
			ow.gen = 1
		}
		touched = touched[:0]
		ow.ids = ow.tokenize(ow.ids[:0], c.Content)
		for _, t := range ow.ids {
			touched = ow.count(touched, t, 1, 1)
		}
		ow.ids = ow.tokenize(ow.ids[:0], c.Section)
		for _, t := range ow.ids {
			touched = ow.count(touched, t, 1, weightSection)
		}
		for _, t := range srcT {
			touched = ow.count(touched, t, 1, 0)
		}
		for _, t := range fileT {
			touched = ow.count(touched, t, 0, weightFile)
		}
		for _, t := range dirT {
			touched = ow.count(touched, t, 0, weightDir)
		}
		v := backing[k*OfflineDim : (k+1)*OfflineDim] // capacity to the end: the store adopts the whole array (consecutiveRows)
		row := (*[OfflineDim]float32)(v)
		tc := make([]termFreq, 0, len(touched))
		for _, t := range touched {
			x := ow.slot(t)
			if x.emb > 0 {
				w := termWeight(x.emb)
				for _, f := range ow.features(t, x) {
					row[f.pos()] += f.weight() * w
				}
			}
			if x.bm > 0 {
				tc = append(tc, termFreq{t, x.bm})
			}
		}
		normalizeUnit(v)
		vecs[k], terms[k] = v, tc
	}
	contextualize(vecs)
	return vecs, terms, nil
}
