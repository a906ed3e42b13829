package frontend

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// generatedDir holds the TypeScript types tygo generates from the Go structs (`make types`).
const generatedDir = "src/lib/generated"

// controlsFile in generatedDir is not tygo's: build/gencontrols writes it from the control table
// (app/controls.go), and its own test (build/gencontrols) checks it.
const controlsFile = "control.ts"

// tygoEnv pins the platform the generator reads the packages for: files with build constraints
// (peer_linux.go, ...) would otherwise make the output depend on who ran it.
var tygoEnv = []string{"GOOS=linux", "GOARCH=amd64", "CGO_ENABLED=0"}

// runTygo builds the pinned generator from build/tools and runs it with build/tygo.yaml, writing
// into out instead of the committed directory. It returns the generated files by name.
func runTygo(t *testing.T, out string) map[string][]byte {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to build the type generator: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "tygo")
	build := exec.Command(goBin, "build", "-o", bin, "github.com/gzuidhof/tygo")
	build.Dir = filepath.Join(root, "build", "tools")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build tygo from build/tools (needs the Go module proxy or a filled module cache): %v\n%s", err, b)
	}

	cfg, err := os.ReadFile(filepath.Join(root, "build", "tygo.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	const committed = "output_path: frontend/" + generatedDir + "/"
	packages := bytes.Count(cfg, []byte("- path: "))
	if n := bytes.Count(cfg, []byte(committed)); n == 0 || n != packages {
		t.Fatalf("build/tygo.yaml: %d packages but %d with %q; every package must be generated into %s", packages, n, committed, generatedDir)
	}
	cfg = bytes.ReplaceAll(cfg, []byte(committed), []byte("output_path: "+out+"/"))
	cfgPath := filepath.Join(t.TempDir(), "tygo.yaml")
	if err := os.WriteFile(cfgPath, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	gen := exec.Command(bin, "generate", "--config", cfgPath)
	gen.Dir = root
	gen.Env = append(os.Environ(), tygoEnv...)
	if b, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("tygo generate: %v\n%s", err, b)
	}
	return readTS(t, out)
}

func readTS(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.ts"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Base(n)] = b
	}
	return files
}

// TestGeneratedTypesUpToDate regenerates the dashboard's TypeScript types from the Go structs and
// fails when the committed ones differ: a Go payload changed without `make types`.
func TestGeneratedTypesUpToDate(t *testing.T) {
	fresh := runTygo(t, t.TempDir())
	if len(fresh) == 0 {
		t.Fatal("tygo generated no files")
	}
	have := readTS(t, generatedDir)
	delete(have, controlsFile)
	var stale []string
	for name, want := range fresh {
		if got, ok := have[name]; !ok {
			stale = append(stale, name+" (missing)")
		} else if !bytes.Equal(got, want) {
			stale = append(stale, name+" (differs at line "+firstDiffLine(got, want)+")")
		}
	}
	for name := range have {
		if _, ok := fresh[name]; !ok {
			stale = append(stale, name+" (no longer generated)")
		}
	}
	slices.Sort(stale)
	if len(stale) > 0 {
		t.Errorf("frontend/%s is stale: %s.\nRun `make types` and commit the result.", generatedDir, strings.Join(stale, ", "))
	}
}

// TestGeneratedTypesResolveEachOther fails when a generated type refers to a type of another
// generated package that tygo could not name (it writes `unknown /* pkg.Type */`): the reference
// needs a type_mappings entry in build/tygo.yaml (and the namespace import in that package's
// frontmatter), or the dashboard silently loses the type.
func TestGeneratedTypesResolveEachOther(t *testing.T) {
	files := readTS(t, generatedDir)
	exported := regexp.MustCompile(`(?m)^export (?:interface|type|const) (\w+)`)
	declared := map[string]bool{} // "ns.Type"
	for name, b := range files {
		ns := strings.TrimSuffix(name, ".ts")
		for _, m := range exported.FindAllSubmatch(b, -1) {
			declared[ns+"."+string(m[1])] = true
		}
	}
	unresolved := regexp.MustCompile(`unknown /\* (\w+\.\w+) \*/`)
	var missing []string
	for name, b := range files {
		for _, m := range unresolved.FindAllSubmatch(b, -1) {
			if ref := string(m[1]); declared[ref] {
				missing = append(missing, name+": "+ref)
			}
		}
	}
	slices.Sort(missing)
	if len(missing) > 0 {
		t.Errorf("generated types fall back to unknown for types that are generated too:\n  %s\nAdd `<pkg>.<Type>: <pkg>.<Type>` to type_mappings in build/tygo.yaml (and `import type * as <pkg> from './<pkg>';` to the frontmatter of the package that refers to it), then run `make types`.",
			strings.Join(slices.Compact(missing), "\n  "))
	}
}

// TestGeneratedTypesAreComplete fails when a generated type refers to a type that is not
// generated. build/tygo.yaml generates only the files of each package that hold what travels to
// the dashboard (include_files: tygo filters by file, not by type), so a struct that starts
// referring to a type kept in another file, of its package or of another generated one, needs that
// file listed too; the TypeScript check would say "Cannot find name", this says which file.
func TestGeneratedTypesAreComplete(t *testing.T) {
	files := readTS(t, generatedDir)
	declared := map[string]map[string]bool{} // namespace → exported names
	exported := regexp.MustCompile(`(?m)^export (?:interface|type|const|enum|class) (\w+)`)
	for name, b := range files {
		ns := strings.TrimSuffix(name, ".ts")
		declared[ns] = map[string]bool{}
		for _, m := range exported.FindAllSubmatch(b, -1) {
			declared[ns][string(m[1])] = true
		}
	}
	var missing []string
	for name, b := range files {
		ns := strings.TrimSuffix(name, ".ts")
		code := tsCode(b)
		for _, ref := range tsTypeRefs(code) {
			refNS, typ, qualified := strings.Cut(ref, ".")
			if !qualified {
				// Unqualified: a type of the same package. control.ts (build/gencontrols) is code,
				// not declarations; its references are all qualified.
				if name == controlsFile || declared[ns][ref] {
					continue
				}
				missing = append(missing, name+": "+ref+" (not generated in "+name+")")
				continue
			}
			if names, ok := declared[refNS]; ok && !names[typ] {
				missing = append(missing, name+": "+ref)
			}
		}
	}
	slices.Sort(missing)
	missing = slices.Compact(missing)
	if len(missing) > 0 {
		t.Errorf("generated types refer to types that are not generated:\n  %s\nAdd the Go file that declares each to include_files of its package in build/tygo.yaml, then run `make types`.",
			strings.Join(missing, "\n  "))
	}
}

// TestTygoIncludeFilesExist fails when build/tygo.yaml lists a file a package no longer has:
// tygo skips it silently, and the types it held would be lost without a word.
func TestTygoIncludeFilesExist(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	module := ""
	for line := range strings.SplitSeq(string(mod), "\n") {
		if v, ok := strings.CutPrefix(line, "module "); ok {
			module = strings.TrimSpace(v)
			break
		}
	}
	cfg, err := os.ReadFile(filepath.Join(root, "build", "tygo.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	pkg, listed := "", 0
	for line := range strings.SplitSeq(string(cfg), "\n") {
		line = strings.TrimSpace(line)
		if v, ok := strings.CutPrefix(line, "- path:"); ok {
			pkg = strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(v), module), "/")
			continue
		}
		v, ok := strings.CutPrefix(line, "include_files:")
		if !ok {
			continue
		}
		v = strings.Trim(strings.TrimSpace(v), "[]")
		for f := range strings.SplitSeq(v, ",") {
			f = strings.TrimSpace(f)
			listed++
			if _, err := os.Stat(filepath.Join(root, pkg, f)); err != nil {
				t.Errorf("build/tygo.yaml: include_files of %s names %s: %v", pkg, f, err)
			}
		}
	}
	if listed == 0 {
		t.Fatal("build/tygo.yaml lists no include_files (written as include_files: [a.go, b.go])")
	}
}

// tsCode is TypeScript source without comments, string literals, imports and property names:
// what is left names types.
func tsCode(b []byte) string {
	s := regexp.MustCompile(`(?s)/\*.*?\*/`).ReplaceAllString(string(b), "")
	s = regexp.MustCompile(`//[^\n]*`).ReplaceAllString(s, "")
	s = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`+"`(?:[^`\\\\]|\\\\.)*`").ReplaceAllString(s, `""`)
	s = regexp.MustCompile(`(?m)^import .*$`).ReplaceAllString(s, "")
	s = regexp.MustCompile(`(?m)^export (?:interface|type|const|enum|class) \w+`).ReplaceAllString(s, "")
	return regexp.MustCompile(`(?m)^\s*(?:readonly\s+)?\w+\??:`).ReplaceAllString(s, "")
}

// tsTypeRefs lists the capitalised names in code, qualified (ns.Type) or not; a member access
// (x.Name, Name.x as a value) is not one.
func tsTypeRefs(code string) []string {
	ident := regexp.MustCompile(`[A-Za-z_$][\w$]*(?:\.[A-Z]\w*)?`)
	var out []string
	for _, loc := range ident.FindAllStringIndex(code, -1) {
		tok := code[loc[0]:loc[1]]
		if loc[0] > 0 && code[loc[0]-1] == '.' || loc[1] < len(code) && code[loc[1]] == '.' {
			continue
		}
		if ns, typ, ok := strings.Cut(tok, "."); ok {
			if ns[0] >= 'a' && ns[0] <= 'z' {
				out = append(out, ns+"."+typ)
			}
			continue
		}
		if tok[0] >= 'A' && tok[0] <= 'Z' {
			out = append(out, tok)
		}
	}
	return out
}

func firstDiffLine(a, b []byte) string {
	la, lb := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := range max(len(la), len(lb)) {
		if i >= len(la) || i >= len(lb) || !bytes.Equal(la[i], lb[i]) {
			return strconv.Itoa(i + 1)
		}
	}
	return "?"
}
