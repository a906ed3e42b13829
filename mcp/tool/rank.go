package tool

import (
	"context"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/rag"
)

// Rank orders tools by how well they answer query (rag.Rank: BM25 fused with the offline
// embedder) over their name (words split at '_') and title, weighed as a heading, and their
// description and arguments: the at most limit best, best first. tools_search and servers_search
// rank this way.
func Rank(ctx context.Context, query string, tools []*sdk.Tool, limit int) ([]*sdk.Tool, error) {
	docs := make([]rag.RankDoc, len(tools))
	for i, t := range tools {
		docs[i] = rag.RankDoc{Name: t.Name, Title: strings.ReplaceAll(t.Name, "_", " ") + " " + t.Title, Text: t.Description + "\n" + ArgumentsText(t.InputSchema)}
	}
	hits, err := rag.Rank(ctx, query, docs, limit)
	if err != nil {
		return nil, err
	}
	out := make([]*sdk.Tool, len(hits))
	for i, h := range hits {
		out[i] = tools[h.Index]
	}
	return out, nil
}
