package rag

import (
	"context"
	"path"
	"strings"
)

// termCount is one BM25 term of a chunk with its weighted frequency, before a collection's
// dictionary numbers it.
type termCount struct {
	term string
	tf   float32
}

// offlineEmbedAndTerms embeds a source's chunks with the offline embedder exactly as EmbedChunks
// does and computes their BM25 terms as chunkTerms does, tokenizing every text once for both
// (ingest's hot path: tokenizing was half the CPU when the embedder and BM25 each did it).
func offlineEmbedAndTerms(ctx context.Context, chunks []Chunk) ([][]float32, [][]termCount, error) {
	if len(chunks) == 0 {
		return nil, nil, nil
	}
	type count struct {
		emb int32   // occurrences in the embedder's text (source, section, content)
		bm  float32 // weighted BM25 frequency (content, section, file name, directory)
	}
	counts := make(map[string]count, 256)
	vecs := make([][]float32, len(chunks))
	backing := make([]float32, len(chunks)*OfflineDim)
	terms := make([][]termCount, len(chunks))
	var scratch, srcT, dirT, fileT []string
	lastSource := "\x00"
	for k := range chunks {
		if k%256 == 0 && ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		c := &chunks[k]
		if c.Source != lastSource {
			lastSource = c.Source
			srcT = tokenize(srcT[:0], c.Source)
			dir, file := path.Split(c.Source)
			file = strings.TrimSuffix(file, path.Ext(file))
			dirT = tokenize(dirT[:0], dir)
			fileT = tokenize(fileT[:0], file)
		}
		clear(counts)
		scratch = tokenize(scratch[:0], c.Content)
		for _, t := range scratch {
			x := counts[t]
			x.emb++
			x.bm++
			counts[t] = x
		}
		scratch = tokenize(scratch[:0], c.Section)
		for _, t := range scratch {
			x := counts[t]
			x.emb++
			x.bm += weightSection
			counts[t] = x
		}
		for _, t := range srcT {
			x := counts[t]
			x.emb++
			counts[t] = x
		}
		for _, t := range fileT {
			x := counts[t]
			x.bm += weightFile
			counts[t] = x
		}
		for _, t := range dirT {
			x := counts[t]
			x.bm += weightDir
			counts[t] = x
		}
		v := backing[k*OfflineDim : (k+1)*OfflineDim : (k+1)*OfflineDim]
		tc := make([]termCount, 0, len(counts))
		for t, x := range counts {
			if x.emb > 0 {
				embedTerm(v, t, int(x.emb))
			}
			if x.bm > 0 {
				tc = append(tc, termCount{t, x.bm})
			}
		}
		normalizeUnit(v)
		vecs[k], terms[k] = v, tc
	}
	contextualize(vecs)
	return vecs, terms, nil
}
