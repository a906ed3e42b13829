package code

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/procgroup"
)

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// TestGoDefinitionAcrossPackages: the definition of calc.Total used in main.go is in
// calc/calc.go, found by position and by symbol name; a column after multi-byte characters
// (é, an emoji: 4 UTF-8 bytes, 2 UTF-16 units) still lands on the identifier.
func TestGoDefinitionAcrossPackages(t *testing.T) {
	requireServer(t, Go)
	root := fixture(t, "gofx")
	p := newTestPool(t, -1)
	ctx := ctxT(t)

	res, err := p.Definition(ctx, root, at(t, root, "main.go", "calc.Total", "Total"))
	if err != nil {
		t.Fatal(err)
	}
	want := Location{Path: "calc/calc.go", Line: 9, Column: 6, Preview: "func Total(shapes []shape.Shape) float64 {"}
	if len(res.Locations) != 1 || res.Locations[0] != want {
		t.Fatalf("definition of calc.Total = %+v, want %+v", res.Locations, want)
	}

	// After "héllo😀": the byte column is 33, the UTF-16 character 29.
	tg := at(t, root, "main.go", "héllo", "Helper")
	if tg.Column != 33 {
		t.Fatalf("fixture moved: Helper at column %d", tg.Column)
	}
	res, err = p.Definition(ctx, root, tg)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Locations) != 1 || res.Locations[0].Path != "calc/calc.go" || res.Locations[0].Line != 18 || res.Locations[0].Column != 6 {
		t.Fatalf("definition of calc.Helper after multi-byte text = %+v", res.Locations)
	}

	for _, sym := range []string{"calc.Total", "Total"} {
		res, err = p.Definition(ctx, root, Target{Symbol: sym})
		if err != nil {
			t.Fatalf("symbol %s: %v", sym, err)
		}
		if len(res.Locations) != 1 || res.Locations[0] != want {
			t.Fatalf("definition of symbol %s = %+v, want %+v", sym, res.Locations, want)
		}
	}
	// Into the standard library: an absolute path, with the line's text.
	res, err = p.Definition(ctx, root, at(t, root, "main.go", "fmt.Println(calc", "Println"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Locations) != 1 || !filepath.IsAbs(res.Locations[0].Path) || !strings.HasSuffix(res.Locations[0].Path, "fmt/print.go") || !strings.Contains(res.Locations[0].Preview, "func Println") {
		t.Fatalf("definition of fmt.Println = %+v", res.Locations)
	}
}

// TestGoReferencesImplementationsCallsHover: references through the Shape interface,
// implementations of it, the callers of util.Scale, hover text, a file's outline and a
// workspace symbol search.
func TestGoReferencesImplementationsCallsHover(t *testing.T) {
	requireServer(t, Go)
	root := fixture(t, "gofx")
	p := newTestPool(t, -1)
	ctx := ctxT(t)

	// The interface method Area: its declaration and the call made through the interface.
	refs, err := p.References(ctx, root, at(t, root, "shape/shape.go", "Area()", "Area"), true)
	if err != nil {
		t.Fatal(err)
	}
	got := locStrings(refs.Locations)
	for _, w := range []string{"calc/calc.go:12:12", "shape/shape.go:7:2"} {
		if !strings.Contains(got, w) {
			t.Errorf("references of Shape.Area = %s, missing %s", got, w)
		}
	}
	if refs.Count != len(refs.Locations) {
		t.Errorf("count %d for %d locations", refs.Count, len(refs.Locations))
	}
	noDecl, err := p.References(ctx, root, at(t, root, "shape/shape.go", "Area()", "Area"), false)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(locStrings(noDecl.Locations), "shape/shape.go:7:2") {
		t.Errorf("includeDeclaration false still lists the declaration: %s", locStrings(noDecl.Locations))
	}

	impl, err := p.Implementations(ctx, root, Target{Symbol: "shape.Shape"})
	if err != nil {
		t.Fatal(err)
	}
	if got := locStrings(impl.Locations); got != "geo/circle.go:6:6 geo/square.go:6:6" {
		t.Errorf("implementations of Shape = %s", got)
	}

	calls, err := p.Calls(ctx, root, Target{Symbol: "util.Scale"}, "incoming")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range calls.Calls {
		names = append(names, c.Name+"@"+c.Path)
	}
	for _, w := range []string{"Total@calc/calc.go", "Area@geo/square.go", "Area@geo/circle.go", "main@main.go"} {
		if !strings.Contains(strings.Join(names, " "), w) {
			t.Errorf("callers of util.Scale = %v, missing %s", names, w)
		}
	}
	out, err := p.Calls(ctx, root, Target{Symbol: "calc.Total"}, "outgoing")
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Calls) == 0 || !strings.Contains(callNames(out.Calls), "Scale") {
		t.Errorf("callees of calc.Total = %+v", out.Calls)
	}

	h, err := p.Hover(ctx, root, Target{Symbol: "util.Scale"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h.Contents, "func Scale(x float64) float64") || !strings.Contains(h.Contents, "multiplies x by the global factor") {
		t.Errorf("hover of util.Scale = %q", h.Contents)
	}

	outline, err := p.Symbols(ctx, root, SymbolsQuery{Path: "calc/calc.go"})
	if err != nil {
		t.Fatal(err)
	}
	if len(outline.Symbols) != 2 || outline.Symbols[0] != (Symbol{Name: "Total", Kind: "function", Path: "calc/calc.go", Line: 9, Column: 6, EndLine: 15}) {
		t.Errorf("outline of calc.go = %+v", outline.Symbols)
	}
	found, err := p.Symbols(ctx, root, SymbolsQuery{Query: "Square"})
	if err != nil {
		t.Fatal(err)
	}
	if len(found.Symbols) == 0 || found.Symbols[0].Path != "geo/square.go" || found.Symbols[0].Line != 6 {
		t.Errorf("workspace search Square = %+v", found.Symbols)
	}
	// Methods by Type.Method; an ambiguous name lists its candidates.
	res, err := p.Definition(ctx, root, Target{Symbol: "Square.Area"})
	if err != nil || len(res.Locations) != 1 || res.Locations[0].Path != "geo/square.go" || res.Locations[0].Line != 9 {
		t.Fatalf("Square.Area = %+v, %v", res.Locations, err)
	}
	_, err = p.Definition(ctx, root, Target{Symbol: "Area"})
	if err == nil || !strings.Contains(err.Error(), "ambiguous") || !strings.Contains(err.Error(), "geo/circle.go") || !strings.Contains(err.Error(), "geo/square.go") {
		t.Errorf("ambiguous Area: %v", err)
	}
}

func locStrings(ls []Location) string {
	var out []string
	for _, l := range ls {
		out = append(out, l.Path+":"+itoa(l.Line)+":"+itoa(l.Column))
	}
	return strings.Join(out, " ")
}

func callNames(cs []CallItem) string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return strings.Join(out, " ")
}

// TestGoRenameFiveFiles: renaming util.Scale changes its declaration and the four files that
// call it; a dry run changes nothing; the applied rename builds.
func TestGoRenameFiveFiles(t *testing.T) {
	requireServer(t, Go)
	root := fixture(t, "gofx")
	p := newTestPool(t, -1)
	ctx := ctxT(t)
	before, _ := os.ReadFile(filepath.Join(root, "main.go"))

	// A file the caller may not change refuses the whole rename.
	_, err := p.Rename(ctx, root, Target{Symbol: "util.Scale"}, "Magnify", RenameOptions{Check: func(rel string) error {
		if rel == "geo/circle.go" {
			return errors.New("the policy does not allow changing it")
		}
		return nil
	}})
	if err == nil || !strings.Contains(err.Error(), "geo/circle.go: the policy does not allow changing it; nothing was changed") {
		t.Fatalf("refused file: %v", err)
	}
	if now, _ := os.ReadFile(filepath.Join(root, "main.go")); string(now) != string(before) {
		t.Fatal("a refused rename changed main.go")
	}

	dry, err := p.Rename(ctx, root, Target{Symbol: "util.Scale"}, "Magnify", RenameOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	want := "calc/calc.go geo/circle.go geo/square.go main.go util/util.go"
	if strings.Join(dry.Files, " ") != want || dry.Applied {
		t.Fatalf("dry run: files %v applied %v, want %s", dry.Files, dry.Applied, want)
	}
	if !strings.Contains(dry.Diff, "-func Scale(x float64) float64 {\n+// Magnify multiplies x by the global factor.\n+func Magnify(x float64) float64 {") {
		t.Errorf("diff:\n%s", dry.Diff)
	}
	if now, _ := os.ReadFile(filepath.Join(root, "main.go")); string(now) != string(before) {
		t.Fatal("the dry run changed main.go")
	}

	res, err := p.Rename(ctx, root, at(t, root, "util/util.go", "func", "Scale"), "Magnify", RenameOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Files, " ") != want || !res.Applied || res.Diff != dry.Diff {
		t.Fatalf("rename: files %v applied %v", res.Files, res.Applied)
	}
	for _, f := range res.Files {
		b, _ := os.ReadFile(filepath.Join(root, f))
		if strings.Contains(string(b), "Scale") || !strings.Contains(string(b), "Magnify") {
			t.Errorf("%s after the rename:\n%s", f, b)
		}
	}
	cmd := exec.Command("go", "vet", "./...")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go vet after the rename: %v\n%s", err, out)
	}
	// The server saw the change: the new name resolves, the old one is gone.
	if _, err := p.Definition(ctx, root, Target{Symbol: "util.Magnify"}); err != nil {
		t.Errorf("after the rename: %v", err)
	}
}

// TestGoDiagnosticsAfterEdit: an edit that introduces a type error is reported within the
// wait, with only the new problem; the workspace-wide form and Published list it too, and a fix
// clears it.
func TestGoDiagnosticsAfterEdit(t *testing.T) {
	requireServer(t, Go)
	root := fixture(t, "gofx")
	p := newTestPool(t, -1)
	ctx := ctxT(t)
	d, err := p.Diagnostics(ctx, root, "calc/calc.go", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Diagnostics) != 0 {
		t.Fatalf("clean file has diagnostics: %+v", d.Diagnostics)
	}
	file := filepath.Join(root, "calc", "calc.go")
	orig, _ := os.ReadFile(file)
	broken := strings.Replace(string(orig), "func Helper() int { return 1 }", "func Helper() int { return \"one\" }", 1)
	if err := os.WriteFile(file, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	after, err := p.DiagnosticsAfter(ctx, root, []string{"calc/calc.go"}, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(after.Diagnostics) != 1 {
		t.Fatalf("diagnostics after the edit = %+v (pending %v)", after.Diagnostics, after.Pending)
	}
	got := after.Diagnostics[0]
	if got.Path != "calc/calc.go" || got.Line != 18 || got.Severity != "error" || !strings.Contains(got.Message, "cannot use \"one\"") {
		t.Errorf("diagnostic = %+v", got)
	}
	all, err := p.Diagnostics(ctx, root, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Diagnostics) != 1 || all.Diagnostics[0].Line != 18 {
		t.Errorf("workspace diagnostics = %+v", all.Diagnostics)
	}
	// What the running server reports now, read without waiting (the dashboard's view).
	pub := p.Published()
	if len(pub) != 1 || pub[0].Workspace != root || pub[0].Language != Go || len(pub[0].Diagnostics) != 1 ||
		pub[0].Diagnostics[0].Path != "calc/calc.go" || pub[0].Diagnostics[0].Line != 18 {
		t.Errorf("Published = %+v", pub)
	}
	// Fixing it introduces nothing, and the file is clean again.
	if err := os.WriteFile(file, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	fixed, err := p.DiagnosticsAfter(ctx, root, []string{"calc/calc.go"}, 10*time.Second)
	if err != nil || len(fixed.Diagnostics) != 0 {
		t.Errorf("after the fix: %+v, %v", fixed.Diagnostics, err)
	}
	d, err = p.Diagnostics(ctx, root, "calc/calc.go", "")
	if err != nil || len(d.Diagnostics) != 0 {
		t.Errorf("fixed file: %+v, %v", d.Diagnostics, err)
	}
}

// goplsChildren are the hub's (this test process's) children running gopls.
func goplsChildren() []int {
	var out []int
	for _, pid := range procgroup.Children(os.Getpid()) {
		comm, _ := os.ReadFile("/proc/" + itoa(pid) + "/comm")
		if strings.TrimSpace(string(comm)) == "gopls" && procgroup.Running(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// TestGoSharedKilledIdle: two users of one workspace share one gopls process; a killed gopls
// is back on the next call; an idle one is stopped and leaves no process.
func TestGoSharedKilledIdle(t *testing.T) {
	requireServer(t, Go)
	root := fixture(t, "gofx")
	p := newTestPool(t, 3*time.Second)
	ctx := ctxT(t)
	start := len(goplsChildren())

	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range 2 {
		wg.Go(func() {
			_, errs[i] = p.Definition(ctx, root, at(t, root, "main.go", "calc.Total", "Total"))
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if n := len(goplsChildren()) - start; n != 1 {
		t.Fatalf("%d gopls processes for two users of one workspace, want 1", n)
	}
	st := p.Status()
	if len(st) != 1 || st[0].Language != Go || st[0].State == "ended" || st[0].MemoryBytes <= 0 || st[0].Sandbox == "" {
		t.Fatalf("status = %+v", st)
	}
	first := st[0].PID

	proc, err := os.FindProcess(first)
	if err != nil {
		t.Fatal(err)
	}
	if err := proc.Kill(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); procgroup.Running(first) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := p.Definition(ctx, root, at(t, root, "main.go", "calc.Total", "Total")); err != nil {
		t.Fatalf("after a kill: %v", err)
	}
	st = p.Status()
	if len(st) != 1 || st[0].PID == first || st[0].Restarts != 1 {
		t.Fatalf("after a kill: status %+v", st)
	}
	second := st[0].PID

	deadline := time.Now().Add(20 * time.Second)
	for len(p.Status()) > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if st := p.Status(); len(st) != 0 {
		t.Fatalf("idle server not stopped: %+v", st)
	}
	for procgroup.Alive(second) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if procgroup.Alive(second) {
		t.Fatalf("stopped server's group %d still has processes", second)
	}
}

// TestBadInput: every bad request gets an error that says what is wrong.
func TestBadInput(t *testing.T) {
	requireServer(t, Go)
	root := fixture(t, "gofx")
	if err := os.WriteFile(filepath.Join(root, "blob.go"), []byte("package main\x00\x01\x02"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "notes.xyz"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := newTestPool(t, -1)
	ctx := ctxT(t)
	cases := []struct {
		name string
		t    Target
		want string
	}{
		{"line past the end", Target{Path: "main.go", Line: 400, Column: 1}, "line: 400 is past the end of main.go (16 lines)"},
		{"column past the end", Target{Path: "main.go", Line: 1, Column: 40}, "column: 40 is past the end of line 1 of main.go (12 bytes"},
		{"zero line", Target{Path: "main.go", Line: 0, Column: 1}, "1-based"},
		{"binary file", Target{Path: "blob.go", Line: 1, Column: 1}, "blob.go is a binary file"},
		{"unknown extension", Target{Path: "notes.xyz", Line: 1, Column: 1}, "no language server for .xyz files"},
		{"unknown language", Target{Symbol: "Total", Language: "cobol"}, `"cobol" is not one the hub has a language server for`},
		{"missing symbol", Target{Symbol: "NoSuchThing"}, `symbol: "NoSuchThing" not found`},
		{"missing file", Target{Path: "nope.go", Line: 1, Column: 1}, "nope.go does not exist"},
		{"escape", Target{Path: "../x.go", Line: 1, Column: 1}, "leads outside the workspace"},
		{"nothing", Target{}, "give a position"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := p.Definition(ctx, root, c.t)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error = %v, want it to contain %q", err, c.want)
			}
		})
	}
	if _, err := p.Calls(ctx, root, Target{Symbol: "Total"}, "sideways"); err == nil || !strings.Contains(err.Error(), "direction") {
		t.Errorf("bad direction: %v", err)
	}
}

// TestGoWorkspaceInsideAModule: a workspace that is a sub-directory of a Go module (a client's
// root below the project) gets a server that can read the module's go.mod; definitions
// outside the workspace come back as absolute paths.
func TestGoWorkspaceInsideAModule(t *testing.T) {
	requireServer(t, Go)
	mod := fixture(t, "gofx")
	root := filepath.Join(mod, "calc")
	p := newTestPool(t, -1)
	res, err := p.Definition(ctxT(t), root, at(t, root, "calc.go", "util.Scale", "Scale"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Locations) != 1 || res.Locations[0].Path != filepath.Join(mod, "util", "util.go") || res.Locations[0].Line != 4 {
		t.Fatalf("definition from a sub-directory workspace = %+v", res.Locations)
	}
}
