package code

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/switchboard-hub/switchboard/internal/search"
)

// Project is what project detect finds in a workspace.
type Project struct {
	// Languages are the languages of the workspace's source files, most files first.
	Languages []string `json:"languages"`
	// PackageManagers are the package managers its manifests and lock files name.
	PackageManagers []string `json:"packageManagers"`
	Commands        Commands `json:"commands"`
	// Files are the manifests the answer comes from.
	Files []string `json:"files"`
}

// Commands are how the project is built, tested, linted and formatted, each with the file it
// came from; the project's own entry points (Makefile targets, package.json scripts) first.
type Commands struct {
	Build  []Command `json:"build"`
	Test   []Command `json:"test"`
	Lint   []Command `json:"lint"`
	Format []Command `json:"format"`
}

// Command is one command line and where it came from ("package.json scripts.test").
type Command struct {
	Command string `json:"command"`
	Source  string `json:"source"`
}

// maxDetectFiles bounds the files looked at to tell a workspace's languages.
const maxDetectFiles = 20000

// detectLanguages counts the workspace's source files per language (gitignore-aware, hidden
// names skipped) and lists the languages, most files first.
func detectLanguages(root string) []string {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil
	}
	defer r.Close()
	count := map[string]int{}
	n := 0
	_ = search.Walk(context.Background(), r, search.WalkOptions{Skip: func(rel string, isDir bool) bool {
		return isDir && skipDir(path.Base(rel))
	}}, func(rel string, _ *os.Root, name string, isDir bool) error {
		if isDir {
			return nil
		}
		if n++; n > maxDetectFiles {
			return search.ErrStop
		}
		if l := LanguageOf(name); l != "" {
			count[l]++
		}
		return nil
	})
	out := make([]string, 0, len(count))
	for l := range count {
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool {
		if count[out[i]] != count[out[j]] {
			return count[out[i]] > count[out[j]]
		}
		return out[i] < out[j]
	})
	return out
}

// Detect reads the workspace's manifests (Makefile, go.mod, package.json, pyproject.toml,
// setup.cfg, Cargo.toml, CMakeLists.txt) and tells its languages, package managers and commands.
func Detect(root string) (Project, error) {
	root, err := workspaceRoot(root)
	if err != nil {
		return Project{}, err
	}
	pr := Project{Languages: detectLanguages(root), PackageManagers: []string{}, Files: []string{},
		Commands: Commands{Build: []Command{}, Test: []Command{}, Lint: []Command{}, Format: []Command{}}}
	read := func(name string) ([]byte, bool) {
		b, err := readDocument(root, filepath.Join(root, name))
		if err != nil {
			return nil, false
		}
		pr.Files = append(pr.Files, name)
		return []byte(b), true
	}
	exists := func(name string) bool {
		_, err := os.Lstat(filepath.Join(root, name))
		return err == nil
	}
	pm := func(name string) {
		if !slices.Contains(pr.PackageManagers, name) {
			pr.PackageManagers = append(pr.PackageManagers, name)
		}
	}
	add := func(list *[]Command, cmd, src string) {
		for _, c := range *list {
			if c.Command == cmd {
				return
			}
		}
		*list = append(*list, Command{Command: cmd, Source: src})
	}
	if b, ok := read("Makefile"); ok {
		targets := makeTargets(b)
		for _, t := range []struct {
			list  *[]Command
			names []string
		}{
			{&pr.Commands.Build, []string{"build", "all"}},
			{&pr.Commands.Test, []string{"test", "check"}},
			{&pr.Commands.Lint, []string{"lint", "vet"}},
			{&pr.Commands.Format, []string{"fmt", "format"}},
		} {
			for _, n := range t.names {
				if slices.Contains(targets, n) {
					add(t.list, "make "+n, "Makefile target "+n)
					break
				}
			}
		}
	}
	if _, ok := read("go.mod"); ok {
		pm("go modules")
		add(&pr.Commands.Build, "go build ./...", "go.mod")
		add(&pr.Commands.Test, "go test ./...", "go.mod")
		add(&pr.Commands.Lint, "go vet ./...", "go.mod")
		for _, f := range []string{".golangci.yml", ".golangci.yaml", ".golangci.toml"} {
			if exists(f) {
				add(&pr.Commands.Lint, "golangci-lint run", f)
				pr.Files = append(pr.Files, f)
				break
			}
		}
		add(&pr.Commands.Format, "gofmt -l -w .", "go.mod")
	}
	if b, ok := read("package.json"); ok {
		mgr := "npm"
		for _, l := range []struct{ file, mgr string }{{"pnpm-lock.yaml", "pnpm"}, {"yarn.lock", "yarn"}, {"bun.lockb", "bun"}, {"bun.lock", "bun"}, {"package-lock.json", "npm"}} {
			if exists(l.file) {
				mgr = l.mgr
				break
			}
		}
		pm(mgr)
		var pj struct {
			Scripts map[string]string `json:"scripts"`
		}
		_ = json.Unmarshal(b, &pj)
		run := func(script string) string {
			if mgr == "npm" && script != "test" {
				return "npm run " + script
			}
			return mgr + " " + map[bool]string{true: "", false: "run "}[script == "test"] + script
		}
		for _, t := range []struct {
			list  *[]Command
			names []string
		}{
			{&pr.Commands.Build, []string{"build", "compile"}},
			{&pr.Commands.Test, []string{"test", "test:unit"}},
			{&pr.Commands.Lint, []string{"lint", "typecheck", "check"}},
			{&pr.Commands.Format, []string{"format", "fmt", "prettier"}},
		} {
			for _, n := range t.names {
				if _, ok := pj.Scripts[n]; ok {
					add(t.list, run(n), "package.json scripts."+n)
					break
				}
			}
		}
	}
	if b, ok := read("pyproject.toml"); ok {
		var py map[string]any
		_, _ = toml.Decode(string(b), &py)
		tool, _ := py["tool"].(map[string]any)
		switch {
		case tool["poetry"] != nil:
			pm("poetry")
		case exists("uv.lock") || tool["uv"] != nil:
			pm("uv")
		case exists("pdm.lock") || tool["pdm"] != nil:
			pm("pdm")
		case tool["hatch"] != nil:
			pm("hatch")
		default:
			pm("pip")
		}
		if py["build-system"] != nil {
			add(&pr.Commands.Build, "python -m build", "pyproject.toml [build-system]")
		}
		if t, _ := tool["pytest"].(map[string]any); t != nil || strings.Contains(string(b), "pytest") {
			add(&pr.Commands.Test, "pytest", "pyproject.toml "+map[bool]string{true: "[tool.pytest]", false: "(pytest dependency)"}[t != nil])
		}
		if tool["ruff"] != nil {
			add(&pr.Commands.Lint, "ruff check .", "pyproject.toml [tool.ruff]")
			add(&pr.Commands.Format, "ruff format .", "pyproject.toml [tool.ruff]")
		}
		if tool["mypy"] != nil {
			add(&pr.Commands.Lint, "mypy .", "pyproject.toml [tool.mypy]")
		}
		if tool["black"] != nil {
			add(&pr.Commands.Format, "black .", "pyproject.toml [tool.black]")
		}
	}
	if b, ok := read("setup.cfg"); ok {
		pm("pip")
		s := string(b)
		if strings.Contains(s, "[tool:pytest]") {
			add(&pr.Commands.Test, "pytest", "setup.cfg [tool:pytest]")
		}
		if strings.Contains(s, "[flake8]") {
			add(&pr.Commands.Lint, "flake8", "setup.cfg [flake8]")
		}
		if strings.Contains(s, "[mypy]") {
			add(&pr.Commands.Lint, "mypy .", "setup.cfg [mypy]")
		}
	}
	if _, ok := read("Cargo.toml"); ok {
		pm("cargo")
		add(&pr.Commands.Build, "cargo build", "Cargo.toml")
		add(&pr.Commands.Test, "cargo test", "Cargo.toml")
		add(&pr.Commands.Lint, "cargo clippy", "Cargo.toml")
		add(&pr.Commands.Format, "cargo fmt", "Cargo.toml")
	}
	if _, ok := read("CMakeLists.txt"); ok {
		pm("cmake")
		add(&pr.Commands.Build, "cmake -S . -B build && cmake --build build", "CMakeLists.txt")
		add(&pr.Commands.Test, "ctest --test-dir build", "CMakeLists.txt")
	}
	if exists(".clang-format") && slices.Contains(pr.Languages, C) {
		add(&pr.Commands.Format, "clang-format -i <files>", ".clang-format")
		pr.Files = append(pr.Files, ".clang-format")
	}
	return pr, nil
}

var makeTarget = regexp.MustCompile(`^([A-Za-z0-9_.-]+)\s*:([^=]|$)`)

// makeTargets lists a Makefile's explicit targets.
func makeTargets(b []byte) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		if m := makeTarget.FindStringSubmatch(sc.Text()); m != nil && !strings.HasPrefix(m[1], ".") {
			out = append(out, m[1])
		}
	}
	return out
}
