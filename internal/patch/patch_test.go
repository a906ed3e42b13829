package patch

import (
	"errors"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/internal/workspace"
)

func gitBin(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("git")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("git not installed (build/setup-deps.sh installs it): %v", err)
		}
		t.Skip("git not installed")
	}
	return p
}

func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(gitBin(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// snapshot reads every regular file under dir (except .git) into a map.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			out[filepath.ToSlash(rel)] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func lines(n int, prefix string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString(prefix)
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString(" ")
		b.WriteString(string(rune('a' + i%26)))
		b.WriteString("\n")
	}
	return b.String()
}

// gitPatch commits before, writes after, and returns git's diff (renames detected) with the
// tree reset to before.
func gitPatch(t *testing.T, before, after map[string]string) (dir, diff string) {
	t.Helper()
	dir = t.TempDir()
	run(t, dir, "init", "-q")
	writeFiles(t, dir, before)
	run(t, dir, "add", "-A")
	run(t, dir, "commit", "-qm", "before")
	for p := range before {
		if _, ok := after[p]; !ok {
			os.Remove(filepath.Join(dir, p))
		}
	}
	writeFiles(t, dir, after)
	run(t, dir, "add", "-A")
	diff = run(t, dir, "diff", "--cached", "-M", "--no-color", "--no-ext-diff")
	run(t, dir, "reset", "-q", "--hard")
	return dir, diff
}

func openRoot(t *testing.T, dir string) *os.Root {
	t.Helper()
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func TestApplyGitDiffs(t *testing.T) {
	big := lines(80, "line")
	before := map[string]string{
		"a.go":           "package a\n\nfunc A() int {\n\treturn 1\n}\n",
		"dir/b.txt":      big,
		"gone.txt":       "bye\nnow\n",
		"old/name.md":    lines(20, "doc"),
		"nonl.txt":       "one\ntwo",
		"crlf.txt":       "a\r\nb\r\nc\r\n",
		"keep/unrelated": "same\n",
	}
	after := map[string]string{
		"a.go":           "package a\n\n// A answers.\nfunc A() int {\n\treturn 2\n}\n",
		"dir/b.txt":      strings.Replace(strings.Replace(big, "linexxx d\n", "CHANGED\n", 1), "linexx z\n", "", 1) + "appended\n",
		"new/deep/c.txt": "fresh\nfile\n",
		"new/nonl":       "no newline",
		"new.md":         lines(20, "doc"), // renamed from old/name.md
		"nonl.txt":       "one\ntwo\nthree\n",
		"crlf.txt":       "a\r\nB\r\nc\r\n",
		"keep/unrelated": "same\n",
	}
	dir, diff := gitPatch(t, before, after)
	files, err := Parse(diff)
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, diff)
	}
	res, err := Apply(openRoot(t, dir), files, false)
	if err != nil {
		t.Fatalf("apply: %v\n%s", err, diff)
	}
	if got := snapshot(t, dir); !maps.Equal(got, after) {
		for k := range after {
			if got[k] != after[k] {
				t.Errorf("%s = %q, want %q", k, got[k], after[k])
			}
		}
		for k := range got {
			if _, ok := after[k]; !ok {
				t.Errorf("left behind: %s", k)
			}
		}
	}
	actions := map[string]string{}
	for _, f := range res.Files {
		actions[f.Path] = f.Action
	}
	want := map[string]string{"a.go": "modify", "dir/b.txt": "modify", "gone.txt": "delete", "new/deep/c.txt": "create", "new/nonl": "create", "new.md": "rename", "nonl.txt": "modify", "crlf.txt": "modify"}
	if !maps.Equal(actions, want) {
		t.Errorf("actions = %v, want %v", actions, want)
	}
	if !res.Applied || res.Risk.Level != "high" { // it deletes a file
		t.Errorf("applied=%v risk=%+v", res.Applied, res.Risk)
	}
	// git agrees the tree is now the "after" state: nothing left to stage against it.
	run(t, dir, "add", "-A")
}

func TestApplyShiftedLines(t *testing.T) {
	base := lines(60, "l")
	after := strings.Replace(base, "lxxxx e\n", "lxxxx E\n", 1)
	dir, diff := gitPatch(t, map[string]string{"f.txt": base}, map[string]string{"f.txt": after})
	// The file changed above the hunk since the diff was made: 7 new lines at the top.
	writeFiles(t, dir, map[string]string{"f.txt": "new1\nnew2\nnew3\nnew4\nnew5\nnew6\nnew7\n" + base})
	files, err := Parse(diff)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Apply(openRoot(t, dir), files, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := snapshot(t, dir)["f.txt"]; got != "new1\nnew2\nnew3\nnew4\nnew5\nnew6\nnew7\n"+after {
		t.Errorf("shifted apply wrong:\n%s", got)
	}
	if !slices.Equal(res.Files[0].Offsets, []int{7}) {
		t.Errorf("offsets = %v, want [7]", res.Files[0].Offsets)
	}
}

// A hunk that does not apply in the second file leaves the first file untouched too, and the
// error names the hunk and the file.
func TestApplyAllOrNothing(t *testing.T) {
	before := map[string]string{"one.txt": lines(10, "one"), "two.txt": lines(30, "two")}
	after := map[string]string{"one.txt": "changed\n" + lines(10, "one"), "two.txt": strings.Replace(strings.Replace(lines(30, "two"), "twoxxx d\n", "X\n", 1), "twoxxxx z\n", "Z\n", 1)}
	dir, diff := gitPatch(t, before, after)
	// Someone edited two.txt near its second hunk.
	edited := strings.Replace(lines(30, "two"), "twoxxx y\n", "someone else\n", 1)
	writeFiles(t, dir, map[string]string{"two.txt": edited})
	files, err := Parse(diff)
	if err != nil {
		t.Fatal(err)
	}
	snap := snapshot(t, dir)
	_, err = Apply(openRoot(t, dir), files, false)
	var ae *ApplyError
	if !errors.As(err, &ae) || ae.File != "two.txt" || ae.Hunk != 2 {
		t.Fatalf("err = %v, want hunk 2 of two.txt", err)
	}
	if !strings.Contains(err.Error(), "hunk 2 of two.txt") || !strings.Contains(err.Error(), "no file was changed") {
		t.Errorf("message: %v", err)
	}
	if got := snapshot(t, dir); !maps.Equal(got, snap) {
		t.Errorf("files changed by a failed patch: %v", got)
	}
}

// A failure while renaming files into place (after some already moved) rolls every file back
// and leaves no temp files.
func TestApplyRollsBackMidCommit(t *testing.T) {
	before := map[string]string{"a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n"}
	after := map[string]string{"a.txt": "A\n", "b.txt": "B\n", "d/e/new.txt": "new\n"}
	dir, diff := gitPatch(t, before, after)
	files, err := Parse(diff)
	if err != nil {
		t.Fatal(err)
	}
	snap := snapshot(t, dir)
	orig := renameFn
	t.Cleanup(func() { renameFn = orig })
	n := 0
	renameFn = func(root *os.Root, from, to string) error {
		if workspace.IsTempName(path.Base(from)) { // a staged new content
			n++
			if n == 2 { // the second staged file fails to land
				return errors.New("injected failure")
			}
		}
		return orig(root, from, to)
	}
	if _, err := Apply(openRoot(t, dir), files, false); err == nil || !strings.Contains(err.Error(), "injected failure") {
		t.Fatalf("err = %v", err)
	}
	if got := snapshot(t, dir); !maps.Equal(got, snap) {
		t.Errorf("not rolled back:\n got %v\nwant %v", got, snap)
	}
	if _, err := os.Stat(filepath.Join(dir, "d")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("created directory left behind: %v", err)
	}
}

func TestDryRun(t *testing.T) {
	dir, diff := gitPatch(t, map[string]string{"a": "1\n"}, map[string]string{"a": "2\n", "b": "new\n"})
	files, _ := Parse(diff)
	res, err := Apply(openRoot(t, dir), files, true)
	if err != nil || res.Applied || len(res.Files) != 2 {
		t.Fatalf("dry run: %+v %v", res, err)
	}
	if got := snapshot(t, dir); got["a"] != "1\n" || len(got) != 1 {
		t.Errorf("dry run changed files: %v", got)
	}
}

func TestApplyRefusals(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"exists.txt": "x\n", "f.txt": "a\n"})
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	root := openRoot(t, dir)
	for _, tc := range []struct{ name, patch, want string }{
		{"create over existing", "--- /dev/null\n+++ b/exists.txt\n@@ -0,0 +1 @@\n+y\n", "exists.txt: already exists"},
		{"missing file", "--- a/nope.txt\n+++ b/nope.txt\n@@ -1 +1 @@\n-a\n+b\n", "nope.txt: does not exist"},
		{"symlink", "--- a/link\n+++ b/link\n@@ -1 +1 @@\n-root\n+x\n", "link: is a symlink"},
		{"dot-dot", "--- a/../x\n+++ b/../x\n@@ -1 +1 @@\n-a\n+b\n", "climbs out of the workspace"},
		{"absolute", "--- /etc/passwd\n+++ /etc/passwd\n@@ -1 +1 @@\n-a\n+b\n", "is absolute"},
		{"same file twice", "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-a\n+b\n--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-b\n+c\n", "more than one file diff"},
		{"context mismatch", "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-zzz\n+b\n", "hunk 1 of f.txt (@@ -1 +1 @@) does not apply"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files, err := Parse(tc.patch)
			if err == nil {
				_, err = Apply(root, files, false)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "f.txt")); string(b) != "a\n" {
		t.Errorf("f.txt changed: %q", b)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ name, patch, want string }{
		{"empty", "", "no file diffs found"},
		{"prose", "please change foo to bar", "no file diffs found"},
		{"hunk first", "@@ -1 +1 @@\n-a\n+b\n", "hunk header before any file header"},
		{"bad header", "--- a/x\n+++ b/x\n@@ -1 +1\n-a\n+b\n", "hunk 1 of x (@@ -1 +1): malformed header"},
		{"short body", "--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n-a\n+b\n", "ends early"},
		{"junk line", "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\n*b\n", "is not a context, - or + line"},
		{"too long", "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n-c\n+b\n", "more lines than its header says"},
		{"binary", "diff --git a/x b/x\nGIT binary patch\nliteral 1\n", "binary patches are not supported"},
		{"no hunks", "--- a/x\n+++ b/x\n", "has no @@ hunks"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.patch)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestAssess(t *testing.T) {
	mk := func(p string, add, del int) File {
		h := Hunk{}
		for range add {
			h.Lines = append(h.Lines, Line{Kind: Add})
		}
		for range del {
			h.Lines = append(h.Lines, Line{Kind: Delete})
		}
		return File{OldPath: p, NewPath: p, Hunks: []Hunk{h}}
	}
	for _, tc := range []struct {
		name   string
		files  []File
		level  string
		reason string
	}{
		{"small", []File{mk("src/a.go", 3, 1)}, "low", "no sensitive paths"},
		{"git hooks", []File{mk(".git/hooks/pre-commit", 1, 0)}, "high", "inside .git/"},
		{"workflow", []File{mk(".github/workflows/ci.yml", 1, 0)}, "high", "CI configuration"},
		{"env", []File{mk("config/.env", 1, 0)}, "high", "secret"},
		{"lock", []File{mk("web/package-lock.json", 1, 1)}, "medium", "lock file"},
		{"size", []File{mk("a.go", 150, 0)}, "medium", "sizeable change"},
		{"huge", []File{mk("a.go", 400, 200)}, "high", "large change"},
		{"deletions", []File{mk("a.go", 2, 80)}, "medium", "mostly deletions"},
		{"delete file", []File{{OldPath: "x.go"}}, "high", "deletes x.go"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Assess(tc.files)
			if r.Level != tc.level || !strings.Contains(strings.Join(r.Reasons, "; "), tc.reason) {
				t.Errorf("risk = %+v, want %s with %q", r, tc.level, tc.reason)
			}
		})
	}
}

// FuzzParse: the parser never panics, and what it accepts is self-consistent (hunk bodies
// match their headers' counts, paths are relative and stay inside the root).
func FuzzParse(f *testing.F) {
	f.Add("--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n")
	f.Add("diff --git a/x b/y\nsimilarity index 100%\nrename from x\nrename to y\n")
	f.Add("diff --git a/n b/n\nnew file mode 100644\n--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+hi\n\\ No newline at end of file\n")
	f.Add("--- a/x\n+++ b/x\n@@ -3 +3,2 @@ func\n-a\n+b\n+c\n@@ -10,0 +11 @@\n+d\n")
	f.Add("@@ -1 +1 @@\n")
	f.Add("--- \"a/sp ace\"\n+++ \"b/sp ace\"\n@@ -1 +1 @@\n-\n+\n")
	f.Fuzz(func(t *testing.T, s string) {
		files, err := Parse(s)
		if err != nil {
			return
		}
		for _, fl := range files {
			for _, p := range []string{fl.OldPath, fl.NewPath} {
				if p != "" && checkPath(p) != nil {
					t.Fatalf("accepted bad path %q", p)
				}
			}
			for _, h := range fl.Hunks {
				o, n := 0, 0
				for _, l := range h.Lines {
					if l.Kind != Add {
						o++
					}
					if l.Kind != Delete {
						n++
					}
				}
				if o != h.OldLines || n != h.NewLines {
					t.Fatalf("hunk %q: body %d/%d lines, header %d/%d", h.Header, o, n, h.OldLines, h.NewLines)
				}
			}
			_ = Assess(files)
		}
	})
}

// FuzzApplyHunks: applying any parsed patch to any content never panics or hangs, and a clean
// apply of a hunk's own old side gives its new side.
func FuzzApplyHunks(f *testing.F) {
	f.Add("a\nb\nc\n", "--- a/x\n+++ b/x\n@@ -2 +2 @@\n-b\n+B\n")
	f.Add("", "--- a/x\n+++ b/x\n@@ -0,0 +1 @@\n+new\n")
	f.Add("x\r\ny\r\n", "--- a/x\n+++ b/x\n@@ -1073741823,1 +1,1 @@\n-y\n+z\n")
	f.Add("one", "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-one\n\\ No newline at end of file\n+two\n")
	f.Fuzz(func(t *testing.T, content, p string) {
		files, err := Parse(p)
		if err != nil || len(files) == 0 {
			return
		}
		fl := files[0]
		if fl.OldPath == "" {
			return
		}
		_, _, _ = applyHunks([]byte(content), &fl)
	})
}
