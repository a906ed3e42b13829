package code

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// langSpec is one language's fixture and its known answers.
type langSpec struct {
	lang, fixture string
	// def: the definition of the function called at defAt (file, anchor, needle).
	defAt   [3]string
	defWant string // path:line:col
	// helperWant: the definition of helper, called after "héllo😀" in mainFile.
	mainFile, helperWant string
	// symbol and symbolWant: a definition by name.
	symbol, symbolWant string
	// refsAt's references (declaration included) contain refsWant.
	refsAt   [3]string
	refsWant []string
	// implAt's implementations are implWant; implErr: the server does not offer them.
	implAt   [3]string
	implWant string
	implErr  string
	// renameAt renamed to "magnify" changes renameFiles.
	renameAt    [3]string
	renameFiles string
	// diagFile with diagOld replaced by diagNew gets one new error at diagLine containing diagMsg.
	diagFile, diagOld, diagNew, diagMsg string
	diagLine                            int
	// unopened, written with unopenedText (an error), is found by workspace-wide diagnostics.
	unopened, unopenedText string
}

func runLanguage(t *testing.T, sp langSpec) {
	requireServer(t, sp.lang)
	root := fixture(t, sp.fixture)
	p := newTestPool(t, -1)
	ctx := ctxT(t)
	tg := func(a [3]string) Target { return at(t, root, a[0], a[1], a[2]) }
	one := func(ls []Location) string {
		if len(ls) != 1 {
			return locStrings(ls)
		}
		return locStrings(ls)
	}

	t.Run("definition", func(t *testing.T) {
		res, err := p.Definition(ctx, root, tg(sp.defAt))
		if err != nil {
			t.Fatal(err)
		}
		if got := one(res.Locations); got != sp.defWant {
			t.Errorf("definition = %s, want %s", got, sp.defWant)
		}
		if len(res.Locations) == 1 && res.Locations[0].Preview == "" {
			t.Errorf("no preview: %+v", res.Locations)
		}
		res, err = p.Definition(ctx, root, at(t, root, sp.mainFile, "héllo", "helper"))
		if err != nil {
			t.Fatal(err)
		}
		if got := one(res.Locations); got != sp.helperWant {
			t.Errorf("definition of helper after multi-byte text = %s, want %s", got, sp.helperWant)
		}
		res, err = p.Definition(ctx, root, Target{Symbol: sp.symbol, Language: sp.lang})
		if err != nil {
			t.Fatal(err)
		}
		if got := one(res.Locations); got != sp.symbolWant {
			t.Errorf("definition of symbol %s = %s, want %s", sp.symbol, got, sp.symbolWant)
		}
	})
	t.Run("references", func(t *testing.T) {
		refs, err := p.References(ctx, root, tg(sp.refsAt), true)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Fields(locStrings(refs.Locations))
		for _, w := range sp.refsWant {
			if !slices.Contains(got, w) {
				t.Errorf("references = %v, missing %s", got, w)
			}
		}
	})
	t.Run("implementations", func(t *testing.T) {
		impl, err := p.Implementations(ctx, root, tg(sp.implAt))
		if sp.implErr != "" {
			if err == nil || !strings.Contains(err.Error(), sp.implErr) {
				t.Errorf("implementations: %v, want an error with %q", err, sp.implErr)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := locStrings(impl.Locations); got != sp.implWant {
			t.Errorf("implementations = %s, want %s", got, sp.implWant)
		}
	})
	t.Run("diagnostics after an edit", func(t *testing.T) {
		file := filepath.Join(root, sp.diagFile)
		orig, _ := os.ReadFile(file)
		if _, err := p.Diagnostics(ctx, root, sp.diagFile, ""); err != nil {
			t.Fatal(err)
		}
		broken := strings.Replace(string(orig), sp.diagOld, sp.diagNew, 1)
		if broken == string(orig) {
			t.Fatalf("%q not in %s", sp.diagOld, sp.diagFile)
		}
		if err := os.WriteFile(file, []byte(broken), 0o644); err != nil {
			t.Fatal(err)
		}
		after, err := p.DiagnosticsAfter(ctx, root, []string{sp.diagFile}, 15*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		var errs []Diagnostic
		for _, d := range after.Diagnostics {
			if d.Severity == "error" {
				errs = append(errs, d)
			}
		}
		if len(errs) != 1 || errs[0].Path != sp.diagFile || errs[0].Line != sp.diagLine || !strings.Contains(errs[0].Message, sp.diagMsg) {
			t.Fatalf("diagnostics after the edit = %+v (pending %v), want one error at %s:%d with %q", after.Diagnostics, after.Pending, sp.diagFile, sp.diagLine, sp.diagMsg)
		}
		// The workspace-wide form reports it too (for servers that check open files only,
		// the files are opened: here diagFile is open already, so the check is that nothing
		// else is reported in the clean fixture).
		all, err := p.Diagnostics(ctx, root, "", sp.lang)
		if err != nil {
			t.Fatal(err)
		}
		var allErrs []string
		for _, d := range all.Diagnostics {
			if d.Severity == "error" {
				allErrs = append(allErrs, d.Path+":"+itoa(d.Line))
			}
		}
		if strings.Join(allErrs, " ") != sp.diagFile+":"+itoa(sp.diagLine) {
			t.Errorf("workspace diagnostics: errors at %v, want %s:%d", allErrs, sp.diagFile, sp.diagLine)
		}
		if err := os.WriteFile(file, orig, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := p.DiagnosticsAfter(ctx, root, []string{sp.diagFile}, 15*time.Second); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("workspace diagnostics of files never opened", func(t *testing.T) {
		if sp.unopened == "" {
			return
		}
		// A broken file written from outside and never named: the workspace-wide form finds it.
		if err := os.WriteFile(filepath.Join(root, sp.unopened), []byte(sp.unopenedText), 0o644); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(20 * time.Second)
		for {
			all, err := p.Diagnostics(ctx, root, "", sp.lang)
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, d := range all.Diagnostics {
				found = found || d.Path == sp.unopened && d.Severity == "error"
			}
			if found {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no error for %s in %+v", sp.unopened, all.Diagnostics)
			}
			time.Sleep(300 * time.Millisecond)
		}
		os.Remove(filepath.Join(root, sp.unopened))
		p.Changed(root, sp.unopened)
	})
	t.Run("rename", func(t *testing.T) {
		res, err := p.Rename(ctx, root, tg(sp.renameAt), "magnify", RenameOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(res.Files, " "); got != sp.renameFiles || !res.Applied {
			t.Fatalf("rename changed %s (applied %v), want %s\n%s", got, res.Applied, sp.renameFiles, res.Diff)
		}
		for _, f := range res.Files {
			b, _ := os.ReadFile(filepath.Join(root, f))
			if !strings.Contains(string(b), "magnify") {
				t.Errorf("%s after the rename:\n%s", f, b)
			}
		}
	})
}

// TestTypeScript runs typescript-language-server 5.3.0 with typescript 5.9.3 (test/lsp).
func TestTypeScript(t *testing.T) {
	runLanguage(t, langSpec{
		lang: TypeScript, fixture: "tsfx",
		defAt: [3]string{"src/main.ts", "total(shapes", "total"}, defWant: "src/calc.ts:5:17",
		mainFile: "src/main.ts", helperWant: "src/calc.ts:13:17",
		symbol: "total", symbolWant: "src/calc.ts:5:17",
		refsAt: [3]string{"src/shape.ts", "area()", "area"}, refsWant: []string{"src/calc.ts:8:14", "src/shape.ts:3:3"},
		implAt: [3]string{"src/shape.ts", "interface", "Shape"}, implWant: "src/circle.ts:4:14 src/square.ts:4:14",
		renameAt: [3]string{"src/util.ts", "function", "scale"}, renameFiles: "src/calc.ts src/circle.ts src/main.ts src/square.ts src/util.ts",
		diagFile: "src/calc.ts", diagOld: "return 1;", diagNew: `return "one";`, diagLine: 13, diagMsg: "not assignable",
		unopened: "src/broken.ts", unopenedText: "export const n: number = \"x\";\n",
	})
}

// TestPython runs pyright 1.1.414 (test/lsp). Pyright has no textDocument/implementation.
func TestPython(t *testing.T) {
	runLanguage(t, langSpec{
		lang: Python, fixture: "pyfx",
		defAt: [3]string{"app/main.py", "total(shapes", "total"}, defWant: "app/calc.py:5:5",
		mainFile: "app/main.py", helperWant: "app/calc.py:13:5",
		symbol: "calc.total", symbolWant: "app/calc.py:5:5",
		refsAt: [3]string{"app/shape.py", "def area", "area"}, refsWant: []string{"app/calc.py:9:17", "app/shape.py:8:9"},
		implAt: [3]string{"app/shape.py", "class", "Shape"}, implErr: "does not offer it",
		renameAt: [3]string{"app/util.py", "def", "scale"}, renameFiles: "app/calc.py app/circle.py app/main.py app/square.py app/util.py",
		diagFile: "app/calc.py", diagOld: "return 1", diagNew: `return "one"`, diagLine: 14, diagMsg: "not assignable",
		unopened: "app/broken.py", unopenedText: "n: int = \"x\"\n",
	})
}

// TestC runs Debian's clangd (14 on Debian 12). Without a compilation database listing the
// sources it knows only open files, so the pool opens them all when it starts (openAll).
func TestC(t *testing.T) {
	runLanguage(t, langSpec{
		lang: C, fixture: "cfx",
		defAt: [3]string{"main.c", "scale(1)", "scale"}, defWant: "util.c:3:8",
		mainFile: "main.c", helperWant: "util.c:5:5",
		symbol: "util.helper", symbolWant: "util.h:5:5", // at the definition, clangd answers the declaration
		refsAt: [3]string{"util.h", "double scale", "scale"}, refsWant: []string{"square.c:3:39", "circle.c:3:39", "util.h:4:8"},
		implAt: [3]string{"util.h", "double scale", "scale"}, implWant: "",
		renameAt: [3]string{"util.h", "double scale", "scale"}, renameFiles: "circle.c main.c square.c util.c util.h",
		diagFile: "util.c", diagOld: "return 1;", diagNew: "return undefined_var;", diagLine: 5, diagMsg: "undeclared identifier",
	})
}
