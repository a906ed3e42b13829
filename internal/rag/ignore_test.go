package rag

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/switchboard-hub/switchboard/internal/search"
)

// ignoreTree is a workspace whose ignore files cover what users write: .gitignore with
// negations, directory-only and anchored patterns and **, a nested .gitignore that re-includes
// what its parent excludes, .ignore (which beats .gitignore), .git/info/exclude, hidden names
// and a symlink. Every file holds the word "needle".
var ignoreTree = map[string]string{
	".gitignore":           "*.log\n!keep.log\n/build/\nnode_modules/\ndocs/**/draft*.md\ngenerated/\n!generated/wanted.txt\n",
	".ignore":              "scratch.txt\n!important.log\n",
	".git/info/exclude":    "local-only.txt\n",
	".git/HEAD":            "ref: refs/heads/main\n",
	".hidden.txt":          "",
	".config/c.txt":        "",
	"a.txt":                "",
	"a.log":                "",
	"keep.log":             "",
	"important.log":        "",
	"scratch.txt":          "",
	"local-only.txt":       "",
	"local.txt":            "",
	"build/out.txt":        "",
	"x/build/y.txt":        "",
	"x/node_modules/m.js":  "",
	"y/node_modules":       "", // a file: node_modules/ names directories only
	"docs/final.md":        "",
	"docs/a/b/draft1.md":   "",
	"docs/draft2.md":       "", // docs/**/ matches zero directories too
	"generated/wanted.txt": "", // a file in an excluded directory cannot be re-included
	"sub/.gitignore":       "local.txt\n!a.log\n",
	"sub/a.log":            "",
	"sub/b.log":            "",
	"sub/local.txt":        "",
	"sub/notes.txt":        "",
}

// Which files count, by where the search starts.
var ignoreWant = map[string][]string{
	".": {"a.txt", "docs/final.md", "important.log", "keep.log", "local.txt", "sub/a.log", "sub/notes.txt",
		"x/build/y.txt", "y/node_modules"},
	"sub":  {"sub/a.log", "sub/notes.txt"},
	"docs": {"docs/final.md"},
	"x":    {"x/build/y.txt"},
}

// TestGrepGlobAndIngestCountTheSameFiles: file_grep, file_glob and rag_ingest agree on which
// files of a workspace count, from its root and from directories below it (whose parents'
// ignore files apply).
func TestGrepGlobAndIngestCountTheSameFiles(t *testing.T) {
	dir := t.TempDir()
	for name, body := range ignoreTree {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if body == "" {
			body = "a needle in " + name + "\n"
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("a.txt", filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	ws := openWS(t, dir)
	ctx := context.Background()
	for _, start := range slices.Sorted(maps.Keys(ignoreWant)) {
		want := ignoreWant[start]
		// grep and glob, set up as file_grep and file_glob set them up
		root, err := ws.OpenWalkRoot(start)
		if err != nil {
			t.Fatal(err)
		}
		base, parents := search.LoadParents(ws.FS(), start)
		g, err := search.Grep(ctx, root, search.GrepOptions{Pattern: "needle", Literal: true, Base: base, Parents: parents})
		if err != nil {
			t.Fatal(err)
		}
		var grepped []string
		for _, m := range g.Matches {
			grepped = append(grepped, prefixed(start, m.Path))
		}
		gl, err := search.Glob(ctx, root, search.GlobOptions{Pattern: "**", Base: base, Parents: parents})
		root.Close()
		if err != nil {
			t.Fatal(err)
		}
		var globbed []string
		for _, p := range gl.Paths {
			globbed = append(globbed, prefixed(start, p))
		}

		store, err := OpenEmbedded(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		res, err := NewEngine(store, Offline{}).Ingest(ctx, ws, start, IngestOptions{Collection: "c"})
		if err != nil {
			t.Fatal(err)
		}
		srcs, err := store.Sources(ctx, "c")
		if err != nil {
			t.Fatal(err)
		}
		ingested := slices.Sorted(maps.Keys(srcs))

		for what, got := range map[string][]string{"grep": sortedCopy(grepped), "glob": sortedCopy(globbed), "rag ingest": ingested} {
			if !slices.Equal(got, want) {
				t.Errorf("from %q, %s counts %q\nwant %q", start, what, got, want)
			}
		}
		if start == "." {
			// What an ingest leaves out by rule is reported; hidden names are not.
			msg := strings.Join(res.Skipped, ", ")
			for _, w := range []string{"a.log (ignored)", "build/ (ignored)", "scratch.txt (ignored)", "local-only.txt (ignored)", "link.txt (symlink)", "sub/b.log (ignored)"} {
				if !strings.Contains(msg, w) {
					t.Errorf("skipped list lacks %q: %s", w, msg)
				}
			}
			if strings.Contains(msg, ".hidden") || strings.Contains(msg, ".git") {
				t.Errorf("skipped list mentions hidden names: %s", msg)
			}
		}
	}
}

// TestIngestHonoursSkip: the policy's filter (IngestOptions.Skip) leaves files and directories
// out of an ingest, silently, as it does for file_grep and file_glob.
func TestIngestHonoursSkip(t *testing.T) {
	ws := wsOf(t, fstest.MapFS{"a.md": {Data: []byte("# A\n\nalpha\n")}, "secret/k.md": {Data: []byte("# K\n\nkey\n")},
		"b/private.md": {Data: []byte("# P\n\nprivate\n")}, "b/ok.md": {Data: []byte("# OK\n\nfine\n")}})
	store, err := OpenEmbedded(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	skip := func(rel string, isDir bool) bool { return rel == "secret" || rel == "b/private.md" }
	res, err := NewEngine(store, Offline{}).Ingest(context.Background(), ws, ".", IngestOptions{Collection: "c", Skip: skip})
	if err != nil {
		t.Fatal(err)
	}
	srcs, _ := store.Sources(context.Background(), "c")
	if got := slices.Sorted(maps.Keys(srcs)); !slices.Equal(got, []string{"a.md", "b/ok.md"}) {
		t.Errorf("ingested %q", got)
	}
	if strings.Contains(res.Message, "secret") || strings.Contains(res.Message, "private") {
		t.Errorf("message names a filtered path: %s", res.Message)
	}
	if _, err := NewEngine(store, Offline{}).Ingest(context.Background(), ws, "b/private.md", IngestOptions{Collection: "c", Skip: skip}); err == nil {
		t.Error("a filtered file named directly was ingested")
	}
}

func prefixed(start, p string) string {
	if start == "." {
		return p
	}
	return start + "/" + p
}

func sortedCopy(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }
