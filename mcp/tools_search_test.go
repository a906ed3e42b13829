package mcp

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/mcp/tools"
)

func TestFileGrepAndGlob(t *testing.T) {
	s := newTestService(t, WithSearch())
	ws := s.Workspace().Dir()
	writeTree(t, ws, map[string]string{
		".gitignore":          "*.log\nsub/gen/\n",
		"a.go":                "package a\n\nfunc Alpha() {}\n",
		"sub/b.go":            "package sub\n// alpha beta\nfunc Beta() {}\nvar x = 1\n",
		"sub/c.txt":           "no match here\n",
		"sub/gen/z.go":        "func Alpha() {} // generated\n",
		"sub/debug.log":       "func Alpha log\n",
		".secret/key.go":      "func Alpha hidden\n",
		"bin.dat":             "func Alpha\x00\n",
		"sub/deep/x/y/d.go":   "func Delta() {}\n",
		"sub/long.go":         "func Alpha() { " + strings.Repeat("x", 5000) + " }\n",
		"sub/deep/.ignore":    "x/\n",
		"sub/deep/visible.md": "Alpha\n",
	})
	cs := connect(t, s)

	var out tools.GrepOutput
	mustCall(t, cs, "file_grep", map[string]any{"pattern": `func \w+\(`}, &out)
	var paths []string
	for _, m := range out.Matches {
		paths = append(paths, m.Path)
	}
	if want := []string{"a.go", "sub/b.go", "sub/long.go"}; !slices.Equal(paths, want) {
		t.Fatalf("paths = %v, want %v (ignored, hidden, binary and .ignore'd files skipped)", paths, want)
	}
	if m := out.Matches[1]; m.Line != 3 || m.Column != 1 || m.Text != "func Beta() {}" {
		t.Errorf("match = %+v", m)
	}
	if long := out.Matches[2].Text; len(long) > 700 || !strings.Contains(long, "bytes]") {
		t.Errorf("long line not capped: %d bytes", len(long))
	}

	// A sub-directory search still honours the root .gitignore; paths stay workspace-relative.
	mustCall(t, cs, "file_grep", map[string]any{"pattern": "Alpha", "path": "sub", "literal": true, "ignore_case": false}, &out)
	for _, m := range out.Matches {
		if strings.Contains(m.Path, "gen/") || strings.HasSuffix(m.Path, ".log") {
			t.Errorf("ignored file searched from a sub-directory: %s", m.Path)
		}
		if !strings.HasPrefix(m.Path, "sub/") {
			t.Errorf("path %q not workspace-relative", m.Path)
		}
	}

	// include_ignored reaches ignored and hidden files.
	mustCall(t, cs, "file_grep", map[string]any{"pattern": "func Alpha", "literal": true, "include_ignored": true}, &out)
	got := map[string]bool{}
	for _, m := range out.Matches {
		got[m.Path] = true
	}
	for _, p := range []string{"sub/gen/z.go", "sub/debug.log", ".secret/key.go"} {
		if !got[p] {
			t.Errorf("include_ignored: %s not searched (got %v)", p, got)
		}
	}
	if got["bin.dat"] {
		t.Error("binary file searched")
	}

	// Context, case, one file, max_results.
	mustCall(t, cs, "file_grep", map[string]any{"pattern": "ALPHA BETA", "path": "sub/b.go", "ignore_case": true, "context": 1}, &out)
	if len(out.Matches) != 1 || out.Matches[0].Path != "sub/b.go" || !slices.Equal(out.Matches[0].Before, []string{"package sub"}) || !slices.Equal(out.Matches[0].After, []string{"func Beta() {}"}) {
		t.Errorf("context match = %+v", out.Matches)
	}
	mustCall(t, cs, "file_grep", map[string]any{"pattern": "e", "max_results": 2}, &out)
	if len(out.Matches) != 2 || !out.Truncated {
		t.Errorf("max_results: %d matches, truncated=%v", len(out.Matches), out.Truncated)
	}

	var g tools.GlobOutput
	mustCall(t, cs, "file_glob", map[string]any{"pattern": "**/*.go"}, &g)
	if want := []string{"a.go", "sub/b.go", "sub/long.go"}; !slices.Equal(g.Paths, want) {
		t.Errorf("glob = %v, want %v", g.Paths, want)
	}
	mustCall(t, cs, "file_glob", map[string]any{"pattern": "*.md", "path": "sub/deep"}, &g)
	if want := []string{"sub/deep/visible.md"}; !slices.Equal(g.Paths, want) {
		t.Errorf("glob under path = %v, want %v", g.Paths, want)
	}

	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"file_grep", map[string]any{"pattern": "func (("}, "pattern: invalid regex"},
		{"file_grep", map[string]any{"pattern": ""}, "pattern: empty"},
		{"file_grep", map[string]any{"pattern": "x", "glob": "[a"}, "glob: invalid glob"},
		{"file_grep", map[string]any{"pattern": "x", "context": 99}, "context: 99 is out of range"},
		{"file_grep", map[string]any{"pattern": "x", "max_results": 1000000}, "max_results: 1000000 is out of range"},
		{"file_grep", map[string]any{"pattern": "x", "path": "../"}, "path:"},
		{"file_grep", map[string]any{"pattern": "x", "path": "/etc"}, "outside the workspace"},
		{"file_glob", map[string]any{"pattern": "{a,b"}, "pattern: invalid glob"},
		{"file_glob", map[string]any{"pattern": "../*"}, "pattern: \"../*\" leaves the search directory"},
		{"file_glob", map[string]any{"pattern": "*", "path": "a.go"}, "path: \"a.go\" is a file"},
	} {
		if e := call(t, cs, tc.tool, tc.args, nil); !strings.Contains(e, tc.want) {
			t.Errorf("%s %v: error %q, want it to contain %q", tc.tool, tc.args, e, tc.want)
		}
	}
}

// A symlink inside the workspace that points outside is not followed by grep or glob.
func TestFileGrepDoesNotFollowSymlinks(t *testing.T) {
	s := newTestService(t, WithSearch())
	outside := t.TempDir()
	writeTree(t, outside, map[string]string{"secret.txt": "TOPSECRET\n"})
	if err := os.Symlink(outside, filepath.Join(s.Workspace().Dir(), "link")); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, s)
	var out tools.GrepOutput
	mustCall(t, cs, "file_grep", map[string]any{"pattern": "TOPSECRET", "include_ignored": true}, &out)
	if len(out.Matches) != 0 {
		t.Fatalf("followed a symlink out of the workspace: %+v", out.Matches)
	}
	if e := call(t, cs, "file_grep", map[string]any{"pattern": "TOPSECRET", "path": "link"}, nil); !strings.Contains(e, "outside the workspace") {
		t.Fatalf("path through an outward symlink: %q", e)
	}
}
