package search

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// rgPath finds ripgrep. Under CI it must be there (build/setup-deps.sh installs it).
func rgPath(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("rg")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("ripgrep not installed (build/setup-deps.sh installs the Debian package ripgrep): %v", err)
		}
		t.Skipf("ripgrep not installed (apt-get install ripgrep): %v", err)
	}
	return p
}

// rgEnv keeps the user's ripgrep and git configuration out of a run.
func rgEnv(home string) []string {
	return []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "RIPGREP_CONFIG_PATH=", "PATH=" + os.Getenv("PATH")}
}

var words = []string{"alpha", "beta", "gamma", "delta", "func", "return", "Context", "context", "error", "nil",
	"TODO", "fixme", "FixMe", "x", "y", "z", "foo", "bar", "foobar", "barfoo", "(", ")", "{", "}", "==", "+", "café", "Ünïcode", "42", "3.14", "\t", "Kelvin", "\u212aelvin", "ſecret", "SECRET", "xQz"}

// genTree writes a pseudo-random source tree with ignore files, hidden files, a binary file,
// CRLF lines and long lines. The same seed gives the same tree.
func genTree(t testing.TB, dir string, seed uint64, files int) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	dirs := []string{"", "src", "src/pkg", "src/pkg/deep", "docs", "build", "build/out", "vendor/lib", "node_modules/x", "logs", "keep", ".hidden"}
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	exts := []string{".go", ".txt", ".md", ".log", ".js", ".tmp"}
	write := func(rel, content string) {
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i := range files {
		d := dirs[r.IntN(len(dirs))]
		name := fmt.Sprintf("f%03d%s", i, exts[r.IntN(len(exts))])
		var b strings.Builder
		nl := "\n"
		if r.IntN(10) == 0 {
			nl = "\r\n"
		}
		for range r.IntN(60) {
			n := r.IntN(12)
			if r.IntN(50) == 0 {
				n = 200 // a long line
			}
			for k := range n {
				if k > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(words[r.IntN(len(words))])
			}
			b.WriteString(nl)
		}
		if r.IntN(4) == 0 {
			b.WriteString("last line without newline foo")
		}
		write(filepath.Join(d, name), b.String())
	}
	write(".gitignore", "*.log\n/build/\nnode_modules/\n# comment\n\n*.tmp\n!keep/*.tmp\n")
	write("src/.gitignore", "deep/*.md\n")
	write(".ignore", "vendor/\n")
	write("src/pkg/.ignore", "!*.log\n") // .ignore beats .gitignore: logs here are searched
	write(".hiddenfile.txt", "foo in a hidden file\n")
	write("binary.dat", "foo\x00bar foo\n")
	write("empty.txt", "")
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	write(".git/info/exclude", "# local excludes\n/keep/*.js\n")
}

type hit struct {
	path      string
	line, col int
	text      string
}

func runRG(t testing.TB, rg, dir string, args ...string) []hit {
	t.Helper()
	cmd := exec.Command(rg, append([]string{"--no-heading", "--with-filename", "--line-number", "--column", "--color", "never", "--no-messages"}, args...)...)
	cmd.Dir = dir
	cmd.Env = rgEnv(t.TempDir())
	out, err := cmd.Output()
	if err != nil {
		if ee := (*exec.ExitError)(nil); !errors.As(err, &ee) || ee.ExitCode() != 1 { // 1 = no match
			t.Fatalf("rg %v: %v", args, err)
		}
	}
	var hits []hit
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 4)
		if len(parts) != 4 {
			t.Fatalf("rg line %q", sc.Text())
		}
		ln, _ := strconv.Atoi(parts[1])
		col, _ := strconv.Atoi(parts[2])
		hits = append(hits, hit{strings.TrimPrefix(parts[0], "./"), ln, col, strings.TrimSuffix(parts[3], "\r")})
	}
	slices.SortFunc(hits, cmpHit)
	return hits
}

func cmpHit(a, b hit) int {
	if c := strings.Compare(a.path, b.path); c != 0 {
		return c
	}
	return a.line - b.line
}

func runGrep(t testing.TB, dir string, opts GrepOptions) ([]hit, GrepResult) {
	t.Helper()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	opts.MaxResults = MaxMaxResults
	opts.MaxLineBytes = 1 << 20
	res, err := Grep(context.Background(), root, opts)
	if err != nil {
		t.Fatal(err)
	}
	var hits []hit
	for _, m := range res.Matches {
		hits = append(hits, hit{m.Path, m.Line, m.Column, m.Text})
	}
	slices.SortFunc(hits, cmpHit)
	return hits, res
}

// TestGrepMatchesRipgrep compares Grep with ripgrep on a generated tree: same files, same
// lines, same columns, same text, for literals, regexes (with and without a required literal,
// anchors, classes that can match a newline) and case-insensitive searches.
func TestGrepMatchesRipgrep(t *testing.T) {
	rg := rgPath(t)
	dir := t.TempDir()
	genTree(t, dir, 7, 300)
	cases := []struct {
		name string
		opts GrepOptions
		args []string
	}{
		{"literal", GrepOptions{Pattern: "foo", Literal: true}, []string{"-F", "foo"}},
		{"literal with regex chars", GrepOptions{Pattern: "3.14", Literal: true}, []string{"-F", "3.14"}},
		{"literal parens", GrepOptions{Pattern: "( x", Literal: true}, []string{"-F", "( x"}},
		{"regex with required literal", GrepOptions{Pattern: `func \w+ \(`}, []string{`func \w+ \(`}},
		{"regex alternation", GrepOptions{Pattern: `alpha|gamma delta`}, []string{`alpha|gamma delta`}},
		{"regex anchored", GrepOptions{Pattern: `^return`}, []string{`^return`}},
		{"regex end anchor", GrepOptions{Pattern: `foo$`}, []string{`foo$`}},
		{"regex word boundary", GrepOptions{Pattern: `\bbar\b`}, []string{`\bbar\b`}},
		{"regex negated class", GrepOptions{Pattern: `nil[^a-z]+error`}, []string{`nil[^a-z]+error`}},
		{"regex whitespace run", GrepOptions{Pattern: `z\s+x`}, []string{`z\s+x`}},
		{"regex digits", GrepOptions{Pattern: `[0-9]{2}`}, []string{`[0-9]{2}`}},
		{"regex unicode", GrepOptions{Pattern: `caf.`}, []string{`caf.`}},
		{"ignore case literal", GrepOptions{Pattern: "fixme", Literal: true, IgnoreCase: true}, []string{"-F", "-i", "fixme"}},
		{"ignore case regex", GrepOptions{Pattern: `context\s`, IgnoreCase: true}, []string{"-i", `context\s`}},
		{"ignore case unicode", GrepOptions{Pattern: "ünïcode", IgnoreCase: true}, []string{"-i", "ünïcode"}},
		{"ignore case kelvin sign", GrepOptions{Pattern: "kelvin", Literal: true, IgnoreCase: true}, []string{"-F", "-i", "kelvin"}},
		{"ignore case long s", GrepOptions{Pattern: "secret", Literal: true, IgnoreCase: true}, []string{"-F", "-i", "secret"}},
		{"ignore case rare letters", GrepOptions{Pattern: "XQZ", Literal: true, IgnoreCase: true}, []string{"-F", "-i", "XQZ"}},
		{"ignore case regex with literal", GrepOptions{Pattern: `foo\s+BAR`, IgnoreCase: true}, []string{"-i", `foo\s+BAR`}},
		{"unicode word class", GrepOptions{Pattern: `caf\w( |$)`}, []string{`caf\w( |$)`}},
		{"unicode class in brackets", GrepOptions{Pattern: `[\w]+é`}, []string{`[\w]+é`}},
		{"non-space run", GrepOptions{Pattern: `\S+é`}, []string{`\S+é`}},
		{"digits", GrepOptions{Pattern: `\d+\.\d+`}, []string{`\d+\.\d+`}},
		{"escaped backslash w", GrepOptions{Pattern: `\\w|foo`}, []string{`\\w|foo`}},
		{"class before a common literal", GrepOptions{Pattern: `[a-z]+bar\b`}, []string{`[a-z]+bar\b`}},
		{"class after a literal", GrepOptions{Pattern: `Fix[A-Z]e`}, []string{`Fix[A-Z]e`}},
		{"unicode class before a literal", GrepOptions{Pattern: `\w+code`}, []string{`\w+code`}},
		{"inline fold flag", GrepOptions{Pattern: `(?i)todo|fixme`}, []string{`(?i)todo|fixme`}},
		{"mixed fold literal", GrepOptions{Pattern: `(?i:ret)urn nil`}, []string{`(?i:ret)urn nil`}},
		{"glob by name", GrepOptions{Pattern: "beta", Glob: "*.go"}, []string{"-g", "*.go", "beta"}},
		{"include ignored", GrepOptions{Pattern: "foo", Literal: true, IncludeIgnored: true}, []string{"-uu", "-F", "-g", "!.git", "foo"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want := runRG(t, rg, dir, tc.args...)
			defer func(v bool) { portableOnly = v }(portableOnly)
			portableOnly = tc.name == "literal" // one case through the os.Root path as on other systems
			defer func(v bool) { disableDFA = v }(disableDFA)
			disableDFA = tc.name == "regex digits" // and one through regexp alone
			got, res := runGrep(t, dir, tc.opts)
			if len(want) == 0 {
				t.Fatalf("rg found nothing for %v; the generated tree should exercise it", tc.args)
			}
			if res.Truncated {
				t.Fatal("truncated")
			}
			if !slices.Equal(got, want) {
				diff(t, got, want)
			}
		})
	}
}

func diff(t *testing.T, got, want []hit) {
	t.Helper()
	g := map[hit]bool{}
	for _, h := range got {
		g[h] = true
	}
	w := map[hit]bool{}
	for _, h := range want {
		w[h] = true
	}
	n := 0
	for _, h := range want {
		if !g[h] && n < 10 {
			t.Errorf("missing (rg has it): %s:%d:%d %q", h.path, h.line, h.col, h.text)
			n++
		}
	}
	for _, h := range got {
		if !w[h] && n < 20 {
			t.Errorf("extra (rg does not): %s:%d:%d %q", h.path, h.line, h.col, h.text)
			n++
		}
	}
	t.Fatalf("got %d hits, rg %d", len(got), len(want))
}

func TestUnicodeClasses(t *testing.T) {
	for in, want := range map[string]string{
		`\w+`:           `[` + uWord + `]+`,
		`[\w-]`:         `[` + uWord + `-]`,
		`\\w`:           `\\w`,
		`\Q\w\E\d`:      `\Q\w\E` + uDigit,
		`[]\d]`:         `[]` + uDigit + `]`,
		`[[:alpha:]\s]`: `[[:alpha:]` + uSpace + `]`,
		`\W\S\D`:        `[^` + uWord + `][^` + uSpace + `]\P{Nd}`,
	} {
		if got := unicodeClasses(in); got != want {
			t.Errorf("unicodeClasses(%q) = %q, want %q", in, got, want)
		}
	}
}

// The fast path refuses symlinks anywhere in the path and anything outside the root, even when
// a directory is swapped for a symlink after the walk listed it.
func TestFastOpenerConfined(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("TOPSECRET\n"), 0o644)
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "sub", "ok.txt"), []byte("fine\n"), 0o644)
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	fast := newFastOpener(root)
	if fast == nil {
		t.Skip("openat2 not available on this system")
	}
	defer fast.close()
	if b, ok := fast.readFile("sub/ok.txt", nil); !ok || string(b) != "fine\n" {
		t.Fatalf("plain read: %q %v", b, ok)
	}
	os.RemoveAll(filepath.Join(dir, "sub"))
	os.Symlink(outside, filepath.Join(dir, "sub"))
	for _, rel := range []string{"sub/secret.txt", "../" + filepath.Base(outside) + "/secret.txt", outside + "/secret.txt"} {
		if b, ok := fast.readFile(rel, nil); ok {
			t.Errorf("%s read outside the root: %q", rel, b)
		}
	}
}

// The answer does not depend on the number of workers, also when max_results cuts it.
func TestGrepDeterministic(t *testing.T) {
	dir := t.TempDir()
	genTree(t, dir, 11, 200)
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	var first GrepResult
	for i, w := range []int{1, 2, 8, 1, 8} {
		res, err := Grep(context.Background(), root, GrepOptions{Pattern: "foo", Literal: true, MaxResults: 37, Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Truncated || len(res.Matches) != 37 {
			t.Fatalf("workers %d: %d matches, truncated %v", w, len(res.Matches), res.Truncated)
		}
		if i == 0 {
			first = res
			continue
		}
		if fmt.Sprint(res.Matches) != fmt.Sprint(first.Matches) || res.FilesSearched != first.FilesSearched {
			t.Fatalf("workers %d: different answer", w)
		}
	}
}

// Searching a sub-directory honours the ignore files above it, as rg run there does.
func TestGrepSubdirMatchesRipgrep(t *testing.T) {
	rg := rgPath(t)
	dir := t.TempDir()
	genTree(t, dir, 7, 300)
	// A rule in the top .gitignore that only bites below src/.
	os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("*.log\n/build/\nnode_modules/\n*.tmp\n!keep/*.tmp\nsrc/pkg/deep/\n"), 0o644)
	sub := filepath.Join(dir, "src")
	want := runRG(t, rg, sub, "-F", "foo")
	root, err := os.OpenRoot(sub)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	base, parents := LoadParents(os.DirFS(dir), "src")
	res, err := Grep(context.Background(), root, GrepOptions{Pattern: "foo", Literal: true, MaxResults: MaxMaxResults, MaxLineBytes: 1 << 20, Base: base, Parents: parents})
	if err != nil {
		t.Fatal(err)
	}
	var got []hit
	for _, m := range res.Matches {
		got = append(got, hit{m.Path, m.Line, m.Column, m.Text})
	}
	slices.SortFunc(got, cmpHit)
	if len(want) == 0 {
		t.Fatal("rg found nothing")
	}
	for _, h := range got {
		if strings.HasPrefix(h.path, "pkg/deep/") {
			t.Fatalf("%s searched although the top .gitignore excludes src/pkg/deep/", h.path)
		}
	}
	if !slices.Equal(got, want) {
		diff(t, got, want)
	}
}
