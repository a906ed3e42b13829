package rag

import "context"

// RankDoc is one short document to rank: a name to return and the text to match.
type RankDoc struct {
	Name string
	// Title weighs like a section heading (twice the text); Text like a body.
	Title, Text string
}

// RankHit is a ranked document: its position in the input and its fused score (1 = first in
// both rankings).
type RankHit struct {
	Index int
	Name  string
	Score float32
}

// Rank orders a small set of documents (an upstream server's tool descriptions, say) by a
// query with the ranking collections use: BM25 over code-aware terms fused with the offline
// embedder's vectors by reciprocal rank fusion. It builds a throwaway in-memory index, which for
// a few thousand short documents costs about as much as one query on a collection.
func Rank(ctx context.Context, query string, docs []RankDoc, k int) ([]RankHit, error) {
	if len(docs) == 0 || k <= 0 {
		return nil, nil
	}
	emb := Offline{}
	texts := make([]string, len(docs))
	entry := &sourceEntry{chunks: make([]Chunk, len(docs)), terms: make([][]termFreq, len(docs)), lens: make([]float32, len(docs))}
	dict := newTermDict()
	var scratch []string
	for i, d := range docs {
		entry.chunks[i] = Chunk{Source: d.Name, Section: d.Title, Content: d.Text, ChunkIndex: i}
		entry.terms[i], entry.lens[i] = chunkTerms(&entry.chunks[i], scratch, dict)
		texts[i] = d.Title + "\n" + d.Text
	}
	vecs, err := emb.Embed(ctx, append(texts, query))
	if err != nil {
		return nil, err
	}
	dim := emb.Dim()
	entry.vecs = make([]float32, 0, len(docs)*dim)
	for _, v := range vecs[:len(docs)] {
		entry.vecs = append(entry.vecs, v...)
	}
	ix := buildIndex([]*sourceEntry{entry}, dim, dict)
	hits := ix.search(tokenize(nil, query), vecs[len(docs)], k, Hybrid)
	out := make([]RankHit, len(hits))
	for i, h := range hits {
		out[i] = RankHit{Index: h.Chunk.ChunkIndex, Name: h.Chunk.Source, Score: h.Score}
	}
	return out, nil
}
