package rag

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestOfflineFastPathMatchesSeparatePasses: ingest's one-pass tokenizing gives the same vectors
// as EmbedChunks and the same BM25 terms as chunkTerms, for Go, markdown and text sources, with
// the real word and term caches and with tiny ones that evict all the time.
func TestOfflineFastPathMatchesSeparatePasses(t *testing.T) {
	for _, sets := range []int{wordCacheSets, 4} {
		t.Run(fmt.Sprintf("%d sets", sets), func(t *testing.T) { testFastPath(t, sets) })
	}
}

func testFastPath(t *testing.T, sets int) {
	ctx := context.Background()
	var files []string
	for _, glob := range []string{"*.go", "../../docs/*.md", "testdata/*.tsv"} {
		m, _ := filepath.Glob(glob)
		files = append(files, m...)
	}
	if len(files) < 5 {
		t.Fatalf("only %d files to compare", len(files))
	}
	dict := newTermDict()
	ow := newOfflineWorkerSets(dict, sets) // one worker for all files, as in ingest: its caches carry over
	n := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		chunks := ChunkFile(filepath.ToSlash(f), string(data))
		want, err := EmbedChunks(ctx, Offline{}, chunks)
		if err != nil {
			t.Fatal(err)
		}
		got, terms, err := ow.embedAndTerms(ctx, chunks)
		if err != nil {
			t.Fatal(err)
		}
		for k := range chunks {
			n++
			for d := range want[k] {
				if math.Abs(float64(want[k][d]-got[k][d])) > 1e-5 {
					t.Fatalf("%s chunk %d dim %d: vector %v, EmbedChunks %v", f, k, d, got[k][d], want[k][d])
				}
			}
			wt, wl := chunkTerms(&chunks[k], nil, dict)
			gt := slices.Clone(terms[k])
			var gl float32
			for _, t := range gt {
				gl += t.tf
			}
			less := func(a, b termFreq) int { return int(a.id) - int(b.id) }
			slices.SortFunc(wt, less)
			slices.SortFunc(gt, less)
			if !slices.Equal(wt, gt) || wl != gl {
				t.Fatalf("%s chunk %d: terms %v (len %v), chunkTerms %v (len %v)", f, k, gt, gl, wt, wl)
			}
		}
	}
	t.Logf("%d files, %d chunks agree", len(files), n)
}

// TestOfflineHashUnchanged: the allocation-free feature hashing gives the hashes of the
// original string keys, so vectors stored by hash-v1 collections stay comparable.
func TestOfflineHashUnchanged(t *testing.T) {
	for _, term := range []string{"compress", "readfil", "ab", "unmarshal", "héllo"} {
		if fnvAdd(fnvTerm, term) != fnv32("t:"+term) {
			t.Fatalf("term %q", term)
		}
		v1, v2 := make([]float32, OfflineDim), make([]float32, OfflineDim)
		embedTerm(v1, term, 2)
		w := float32(1 + math.Log(2))
		addFeature(v2, "t:"+term, w)
		for _, g := range conceptOf[term] {
			addFeature(v2, "c:"+g, conceptWeight*w)
		}
		if len(term) >= 5 {
			p := "#" + term + "#"
			for i := 0; i+3 <= len(p); i++ {
				addFeature(v2, "g:"+p[i:i+3], 0.15*w)
			}
		}
		if !slices.Equal(v1, v2) {
			t.Fatalf("features of %q differ", term)
		}
	}
}

// TestTermFeaturesMatchEmbedTerm: the fast path's cached features, scaled by a count's weight,
// add exactly what embedTerm adds, bit for bit.
func TestTermFeaturesMatchEmbedTerm(t *testing.T) {
	for _, term := range []string{"compress", "readfil", "ab", "unmarshal", "héllo", "hash", "x509"} {
		for _, c := range []int32{1, 2, 7, 300} {
			want, got := make([]float32, OfflineDim), make([]float32, OfflineDim)
			embedTerm(want, term, int(c))
			w := termWeight(c)
			for _, f := range termFeatures(nil, term) {
				got[f.pos()] += f.weight() * w
			}
			if !slices.Equal(want, got) {
				t.Fatalf("%q ×%d: features differ from embedTerm", term, c)
			}
		}
	}
}

// TestConsecutiveRows: the store adopts the array an ingest worker filled (no copy of the
// vectors), and copies vectors laid out any other way.
func TestConsecutiveRows(t *testing.T) {
	chunks := ChunkFile("a.go", "package a\n\n// A is a.\nfunc A() {}\n\n// B is b.\nfunc B() {}\n")
	vecs, _, err := newOfflineWorker(newTermDict()).embedAndTerms(context.Background(), chunks)
	if err != nil || len(vecs) < 2 {
		t.Fatalf("embed: %d vectors, %v", len(vecs), err)
	}
	rows := consecutiveRows(vecs, OfflineDim)
	if len(rows) != len(vecs)*OfflineDim || &rows[OfflineDim] != &vecs[1][0] {
		t.Fatalf("a worker's vectors were not adopted as rows (len %d)", len(rows))
	}
	separate := [][]float32{make([]float32, OfflineDim), make([]float32, OfflineDim)}
	if consecutiveRows(separate, OfflineDim) != nil {
		t.Fatal("separately allocated vectors taken as one array")
	}
	if consecutiveRows([][]float32{vecs[1], vecs[0]}, OfflineDim) != nil {
		t.Fatal("rows out of order taken as one array")
	}
}
