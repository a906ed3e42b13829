package rag

import (
	"context"
	"testing"
)

func TestRankFindsTheToolForATask(t *testing.T) {
	docs := []RankDoc{
		{Name: "github__create_issue", Title: "Create issue", Text: "Open a new issue in a GitHub repository with a title and body."},
		{Name: "github__list_pull_requests", Title: "List pull requests", Text: "List pull requests of a repository, filtered by state."},
		{Name: "memory__read_graph", Title: "Read graph", Text: "Read the entire knowledge graph of entities and relations."},
		{Name: "everything__echo", Title: "Echo", Text: "Echoes back the input string."},
		{Name: "sentry__get_issue", Title: "Get Sentry issue", Text: "Fetch an error issue from Sentry with its stack trace."},
	}
	for _, tc := range []struct{ query, want string }{
		{"open a bug report on github", "github__create_issue"},
		{"pull requests", "github__list_pull_requests"},
		{"knowledge graph entities", "memory__read_graph"},
		{"stack trace of an error", "sentry__get_issue"},
		{"echo", "everything__echo"},
	} {
		hits, err := Rank(context.Background(), tc.query, docs, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) == 0 || hits[0].Name != tc.want || docs[hits[0].Index].Name != tc.want {
			t.Errorf("%q: ranked %v, want %s first", tc.query, hits, tc.want)
		}
	}
	if hits, _ := Rank(context.Background(), "x", nil, 3); hits != nil {
		t.Errorf("no documents: %v", hits)
	}
}
