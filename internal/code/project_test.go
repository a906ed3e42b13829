package code

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestDetect: languages, package managers and commands, each with the file it came from.
func TestDetect(t *testing.T) {
	root := fixture(t, "tsfx")
	pr, err := Detect(root)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(pr.Languages, []string{TypeScript}) || !slices.Equal(pr.PackageManagers, []string{"npm"}) {
		t.Errorf("tsfx: %+v", pr)
	}
	if pr.Commands.Build[0] != (Command{Command: "npm run build", Source: "package.json scripts.build"}) ||
		pr.Commands.Test[0] != (Command{Command: "npm test", Source: "package.json scripts.test"}) ||
		pr.Commands.Lint[0] != (Command{Command: "npm run lint", Source: "package.json scripts.lint"}) || len(pr.Commands.Format) != 0 {
		t.Errorf("tsfx commands: %+v", pr.Commands)
	}

	pr, _ = Detect(fixture(t, "pyfx"))
	if !slices.Equal(pr.Languages, []string{Python}) || !slices.Equal(pr.PackageManagers, []string{"pip"}) ||
		pr.Commands.Test[0] != (Command{Command: "pytest", Source: "pyproject.toml [tool.pytest]"}) ||
		pr.Commands.Lint[0].Command != "ruff check ." || pr.Commands.Format[0].Command != "ruff format ." ||
		pr.Commands.Build[0].Command != "python -m build" {
		t.Errorf("pyfx: %+v", pr)
	}

	pr, _ = Detect(fixture(t, "cfx"))
	if !slices.Equal(pr.Languages, []string{C}) || pr.Commands.Build[0] != (Command{Command: "make all", Source: "Makefile target all"}) ||
		pr.Commands.Test[0].Command != "make test" {
		t.Errorf("cfx: %+v", pr)
	}

	// This repository: Go and TypeScript, its Makefile's targets first, then go.mod's.
	pr, err = Detect(repoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	if pr.Languages[0] != Go || !slices.Contains(pr.PackageManagers, "go modules") ||
		pr.Commands.Build[0].Command != "make build" || pr.Commands.Test[0].Command != "make test" ||
		!slices.ContainsFunc(pr.Commands.Test, func(c Command) bool { return c == Command{Command: "go test ./...", Source: "go.mod"} }) ||
		!slices.ContainsFunc(pr.Commands.Lint, func(c Command) bool { return c.Command == "golangci-lint run" }) {
		t.Errorf("this repository: %+v", pr)
	}
}

// TestMap: the tree honours .gitignore, sizes add up, deep directories are cut at maxDepth,
// and source files carry their symbol counts.
func TestMap(t *testing.T) {
	requireServer(t, Go)
	root := fixture(t, "gofx")
	os.MkdirAll(filepath.Join(root, "out", "deep"), 0o755)
	os.WriteFile(filepath.Join(root, "out", "deep", "x.bin"), []byte("12345"), 0o644)
	os.WriteFile(filepath.Join(root, ".gitignore"), []byte("out/\n"), 0o644)
	os.MkdirAll(filepath.Join(root, "a", "b", "c"), 0o755)
	os.WriteFile(filepath.Join(root, "a", "b", "c", "deep.txt"), []byte("abc"), 0o644)
	p := newTestPool(t, -1)
	res, err := p.Map(ctxT(t), root, 2)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var walk func(n *MapNode)
	byPath := map[string]*MapNode{}
	walk = func(n *MapNode) {
		names = append(names, n.Path)
		byPath[n.Path] = n
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(res.Tree)
	got := strings.Join(names, " ")
	if strings.Contains(got, "out") || strings.Contains(got, "deep.txt") || !strings.Contains(got, "a/b") || strings.Contains(got, "a/b/c") {
		t.Errorf("tree paths: %s", got)
	}
	if b := byPath["a/b"]; b == nil || !b.Truncated || b.Size != 3 || b.Files != 1 {
		t.Errorf("a/b = %+v", b)
	}
	calc := byPath["calc/calc.go"]
	if calc == nil || calc.Symbols == nil || *calc.Symbols != 2 || calc.Language != Go {
		t.Errorf("calc/calc.go = %+v", calc)
	}
	if gm := byPath["go.mod"]; gm == nil || gm.Symbols != nil || gm.Size != 31 {
		t.Errorf("go.mod = %+v", gm)
	}
	var total int64
	for _, c := range res.Tree.Children {
		total += c.Size
	}
	if total != res.Tree.Size || res.Tree.Files != res.Files {
		t.Errorf("sizes: children %d, top %d; files %d/%d", total, res.Tree.Size, res.Tree.Files, res.Files)
	}
}
